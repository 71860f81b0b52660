public import Foundation
internal import LenientJSON

/// An access token for one protected resource (RFC 8707) and scope set, got under a sign-in's
/// refresh token (or renewable grant) by ``Authenticator/accessToken(for:scopes:minimumValidity:)``
/// and kept in its ``TokenSet``.
///
/// Printing one shows its resource, scopes and expiry, never the token.
public struct ResourceToken: Sendable, Equatable {
    /// The resource it was asked for (`resource`).
    public var resource: URL
    /// The scopes asked for, sorted; empty when none were named (the sign-in's).
    public var requestedScopes: [String]
    /// The access token.
    public var accessToken: String
    /// The token type; `Bearer` when the server did not say.
    public var tokenType: String
    /// The granted scopes (the response's `scope`, else the requested ones).
    public var scopes: [String]
    /// When it expires; `nil` when the server gave no lifetime. Whole milliseconds.
    public var expiresAt: Date?
    /// When it was received. Whole milliseconds.
    public var issuedAt: Date
    /// The thumbprint of the TLS client certificate it is bound to (RFC 8705), if any.
    public var certificateThumbprint: String?

    /// Creates one from a token response read into `tokens`.
    package init(resource: URL, requestedScopes: [String], tokens: TokenSet) {
        self.resource = resource
        self.requestedScopes = requestedScopes.sorted()
        self.accessToken = tokens.accessToken
        self.tokenType = tokens.tokenType
        self.scopes = tokens.scopes
        self.expiresAt = tokens.expiresAt
        self.issuedAt = tokens.issuedAt
        self.certificateThumbprint = tokens.certificateThumbprint
    }

    /// Whether it answers a request for `resource` with `scopes` (`nil`: none named).
    func matches(_ resource: URL, scopes: [String]?) -> Bool {
        self.resource.absoluteString == resource.absoluteString && requestedScopes == (scopes ?? []).sorted()
    }

    /// Whether it is bound to its sign-in's DPoP key (``tokenType`` `DPoP`), as
    /// ``TokenSet/isDPoPBound`` says of the sign-in's own token.
    public var isDPoPBound: Bool { tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }

    /// Whether it is still valid `leeway` from `now` (see ``TokenSet/isValid(at:leeway:)``).
    public func isValid(at now: Date, leeway: TimeInterval = 60) -> Bool {
        TokenSet(accessToken: accessToken, expiresAt: expiresAt, issuedAt: issuedAt).isValid(at: now, leeway: leeway)
    }

    /// The stored form, inside the set's.
    var storageJSON: JSONValue {
        var object: JSONObject = [
            "resource": .string(resource.absoluteString),
            "requested_scope": .array(requestedScopes.map(JSONValue.string)),
            "access_token": .string(accessToken),
            "token_type": .string(tokenType),
            "scope": .array(scopes.map(JSONValue.string)),
            "issued_at_ms": .integer(TokenSet.milliseconds(issuedAt)),
        ]
        if let expiresAt { object["expires_at_ms"] = .integer(TokenSet.milliseconds(expiresAt)) }
        if let certificateThumbprint { object["cnf_x5t_s256"] = .string(certificateThumbprint) }
        return .object(object)
    }

    /// Reads the stored form.
    init(storageJSON object: JSONObject) throws(JSONFieldError) {
        guard let resource = URL(string: try object.requiredString("resource")) else {
            throw JSONFieldError(key: "resource", problem: .wrongKind(expected: "a URL", found: "something else"))
        }
        self.resource = resource
        requestedScopes = try object.stringList("requested_scope") ?? []
        accessToken = try object.requiredString("access_token")
        tokenType = try object.string("token_type") ?? "Bearer"
        scopes = try object.stringList("scope") ?? []
        issuedAt = TokenSet.date(milliseconds: try object.requiredInteger("issued_at_ms"))
        expiresAt = try object.integer("expires_at_ms").map { TokenSet.date(milliseconds: $0) }
        certificateThumbprint = try object.string("cnf_x5t_s256")
    }
}

extension ResourceToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["access token (\(tokenType)) for \(resource.absoluteString)"]
        if let expiresAt { parts.append("expires \(expiresAt.formatted(.iso8601))") }
        if !scopes.isEmpty { parts.append("scope \(scopes.joined(separator: " "))") }
        return "ResourceToken(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    /// Reflection shows the same as the description, never the token.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "resource": resource, "accessToken": "<redacted>", "scopes": scopes, "expiresAt": expiresAt as Any,
            ],
            displayStyle: .struct)
    }
}
