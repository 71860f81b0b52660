public import Foundation
internal import LenientJSON

/// The tokens from one sign-in, as the token endpoint returned them, with absolute times.
///
/// Printing a `TokenSet` (its `description`, `debugDescription`, `dump`) shows what it holds and
/// until when, never the tokens themselves.
public struct TokenSet: Sendable, Equatable {
    /// The access token, sent as `Authorization: Bearer …`, or `Authorization: DPoP …` with a proof
    /// when ``tokenType`` is `DPoP`.
    public var accessToken: String
    /// The token type; `Bearer` when the server did not say, `DPoP` for tokens bound to ``dpopKey``.
    public var tokenType: String
    /// The refresh token, if the server issued one.
    public var refreshToken: String?
    /// When the refresh token expires, from the response's `refresh_token_expires_in` (GitHub) or
    /// `refresh_expires_in` (Keycloak); `nil` when the server did not say. After it, signing in
    /// again is the only way to new tokens. Kept to whole milliseconds.
    public var refreshExpiresAt: Date? {
        didSet { refreshExpiresAt = refreshExpiresAt.map(Self.wholeMilliseconds) }
    }
    /// The ID token (a JWT), if the server issued one.
    public var idToken: String?
    /// The granted scopes: the response's `scope`, or the requested scopes when it had none
    /// (RFC 6749 §5.1).
    public var scopes: [String]
    /// When the access token expires, computed from `expires_in` and the clock at receipt; `nil`
    /// when the server gave no lifetime. Kept to whole milliseconds, so a stored set loads back equal.
    public var expiresAt: Date? {
        didSet { expiresAt = expiresAt.map(Self.wholeMilliseconds) }
    }
    /// When the token response was received, to whole milliseconds.
    public var issuedAt: Date {
        didSet { issuedAt = Self.wholeMilliseconds(issuedAt) }
    }
    /// The signed-in account's subject (`sub` of the ID token or userinfo), when known.
    public var subject: String?
    /// A name to show for the account (`preferred_username`, `email` or `name`), when known.
    public var displayName: String?
    /// The provider's endpoints the tokens were issued for, by metadata name (`token_endpoint`,
    /// `revocation_endpoint`, `userinfo_endpoint`, `jwks_uri`). The tokens are never sent to an
    /// endpoint of that name that differs (a configuration that names the same issuer and client but
    /// other endpoints). Empty for sets stored before endpoints were kept: they get them on their
    /// next refresh.
    public var endpoints: [String: URL]
    /// The `x5t#S256` thumbprint of the TLS client certificate the access token is bound to
    /// (RFC 8705 §3), or `nil` for a bearer token. A bound token is sent only through a transport
    /// that presents that certificate.
    public var certificateThumbprint: String?
    /// The key the sign-in's tokens are bound to with DPoP (RFC 9449), made for the sign-in and
    /// used for every proof after it: token requests (the refresh token of a public client is bound
    /// to it too) and, when ``tokenType`` is `DPoP`, every request with the access token. `nil`
    /// when DPoP was not used. A secret: stored as `dpop_key` with the tokens, never printed.
    public var dpopKey: DPoPKey?
    /// The grant that issued the set when it can be asked for again without a person:
    /// ``Grant/Kind/clientCredentials``. Such a set needs no refresh token: when its access token
    /// expires, NativeAuth asks the token endpoint again, once however many callers wait (as it
    /// refreshes). `nil` for a person's sign-in. Stored as `grant_type`.
    public var renewableGrant: Grant.Kind?
    /// Access tokens for single protected resources (RFC 8707), got under this set's refresh token
    /// or renewable grant by ``Authenticator/accessToken(for:scopes:minimumValidity:)``. A new
    /// sign-in starts without any.
    public var resourceTokens: [ResourceToken] = []
    /// The protected resources (RFC 8707 `resource`) the token request that issued the access token
    /// named: the sign-in was made for them, and its access token is theirs. Empty when it named
    /// none (or for sets stored before it was kept). Stored as `resource`.
    public var resources: [String] = []
    /// Credentials other services issued for these tokens (AWS STS's temporary credentials), got
    /// by ``Authenticator/derivedCredential(named:minimumValidity:idToken:obtain:)`` and kept
    /// across refreshes. A new sign-in starts without any.
    public var derivedCredentials: [DerivedCredential] = []
    /// The client registration this record keeps (RFC 7591), on the records
    /// ``Authenticator/registeringClient(_:initialAccessToken:)`` stores under
    /// ``ClientRegistration/storeKey(issuer:clientName:scope:)``; `nil` on every sign-in's set. Stored as
    /// `client_registration`: a store that keeps ``storageJSON`` keeps it too.
    public var clientRegistration: ClientRegistration?

    /// Creates a token set.
    public init(
        accessToken: String,
        tokenType: String = "Bearer",
        refreshToken: String? = nil,
        idToken: String? = nil,
        scopes: [String] = [],
        expiresAt: Date? = nil,
        issuedAt: Date,
        subject: String? = nil,
        displayName: String? = nil,
        endpoints: [String: URL] = [:],
        refreshExpiresAt: Date? = nil,
        certificateThumbprint: String? = nil,
        renewableGrant: Grant.Kind? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scopes = scopes
        self.expiresAt = expiresAt.map(Self.wholeMilliseconds)
        self.issuedAt = Self.wholeMilliseconds(issuedAt)
        self.subject = subject
        self.displayName = displayName
        self.endpoints = endpoints
        self.refreshExpiresAt = refreshExpiresAt.map(Self.wholeMilliseconds)
        self.certificateThumbprint = certificateThumbprint
        self.renewableGrant = renewableGrant
    }

    /// The endpoints of `metadata` that tokens are bound to.
    package static func endpoints(of metadata: ProviderMetadata) -> [String: URL] {
        var endpoints = ["token_endpoint": metadata.tokenEndpoint]
        endpoints["revocation_endpoint"] = metadata.revocationEndpoint
        endpoints["userinfo_endpoint"] = metadata.userInfoEndpoint
        endpoints["jwks_uri"] = metadata.jwksURI
        return endpoints
    }

    /// Throws when the set was issued for another `name` endpoint than `url`; sets that recorded
    /// none pass.
    package func checkIssued(for name: String, at url: URL?, operation: AuthOperation) throws(AuthError) {
        guard let issued = endpoints[name], let url, issued != url else { return }
        throw AuthError(
            .configurationInvalid,
            "the stored tokens were issued for the \(name) \(Redaction.scrubURL(issued.absoluteString)), but the"
                + " configuration names \(Redaction.scrubURL(url.absoluteString)); they are not sent there",
            hint: "sign in again with this configuration, or use the one the tokens were issued with",
            operation: operation,
            field: name
        )
    }

    /// Milliseconds since 1970, the precision token sets keep; dates beyond what 64 bits of
    /// milliseconds hold (about 292 million years either way) are clamped, never a crash.
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        if value.isNaN { return 0 }
        if value >= Double(Int64.max) { return .max }
        if value <= Double(Int64.min) { return .min }
        return Int64(value)
    }

    /// The date at whole milliseconds; computed the same way when loading, so round trips are exact.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private static func wholeMilliseconds(_ date: Date) -> Date {
        Self.date(milliseconds: milliseconds(date))
    }

    /// Whether the access token is bound to ``dpopKey`` (``tokenType`` `DPoP`, RFC 9449 §5): it is
    /// sent only with a proof signed with that key.
    public var isDPoPBound: Bool { tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }

    /// When the ID token expires: its `exp` claim (the token was verified when it was stored; this
    /// reads it again without the keys). `nil` without an ID token, or with one that names no `exp`.
    public var idTokenExpiresAt: Date? { idTokenTimes?.expires }

    /// The ID token's `iat` and `exp`.
    private var idTokenTimes: (issued: Date?, expires: Date)? {
        func seconds(_ value: JSONValue?) -> Date? {
            switch value {
            case .integer(let number): Date(timeIntervalSince1970: TimeInterval(number))
            case .double(let number): Date(timeIntervalSince1970: number)
            default: nil
            }
        }
        guard let idToken, let claims = JOSEParsing.parts(ofCompactJWS: idToken)?.claims,
            let expires = seconds(claims["exp"])
        else { return nil }
        return (seconds(claims["iat"]), expires)
    }

    /// Whether the ID token is still valid `leeway` from `now`, with the same rule as
    /// ``isValid(at:leeway:)``: the leeway is at most half its lifetime. `false` without an ID
    /// token; `true` for one without `exp`.
    public func idTokenIsValid(at now: Date, leeway: TimeInterval = 60) -> Bool {
        guard idToken != nil else { return false }
        guard let times = idTokenTimes else { return true }
        var leeway = leeway
        if let issued = times.issued, times.expires > issued {
            leeway = min(leeway, times.expires.timeIntervalSince(issued) / 2)
        }
        return times.expires.timeIntervalSince(now) > leeway
    }

    /// Whether the access token is still valid `leeway` from `now`. A token without an expiry is
    /// taken as valid (the resource server will say otherwise with a 401).
    ///
    /// The leeway is at most half the token's lifetime (``expiresAt`` minus ``issuedAt``): a token
    /// that lives less than twice the leeway (a 30-second token and the default 60 seconds) is used
    /// for the first half of its life, instead of being refreshed before every request.
    public func isValid(at now: Date, leeway: TimeInterval = 60) -> Bool {
        guard let expiresAt else { return true }
        var leeway = leeway
        let lifetime = expiresAt.timeIntervalSince(issuedAt)
        if lifetime > 0 { leeway = min(leeway, lifetime / 2) }
        return expiresAt.timeIntervalSince(now) > leeway
    }
}

extension TokenSet: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["access token (\(tokenType))"]
        if refreshToken != nil { parts.append("refresh token") }
        if let refreshExpiresAt { parts.append("refresh token expires \(refreshExpiresAt.formatted(.iso8601))") }
        if idToken != nil { parts.append("ID token") }
        if let expiresAt { parts.append("expires \(expiresAt.formatted(.iso8601))") }
        if certificateThumbprint != nil { parts.append("bound to a client certificate") }
        if let dpopKey { parts.append("DPoP key \(dpopKey.algorithm.rawValue)") }
        if let renewableGrant { parts.append("renewed by \(renewableGrant.rawValue)") }
        if !scopes.isEmpty { parts.append("scope \(scopes.joined(separator: " "))") }
        if !resourceTokens.isEmpty { parts.append("\(resourceTokens.count) resource token(s)") }
        if !derivedCredentials.isEmpty { parts.append("\(derivedCredentials.count) derived credential(s)") }
        if let clientRegistration { parts.append("\(clientRegistration)") }
        return "TokenSet(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    /// Reflection shows whether each token is present, never its value.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": "<redacted>",
                "tokenType": tokenType,
                "refreshToken": refreshToken == nil ? "nil" : "<redacted>",
                "refreshExpiresAt": refreshExpiresAt as Any,
                "idToken": idToken == nil ? "nil" : "<redacted>",
                "scopes": scopes,
                "expiresAt": expiresAt as Any,
                "issuedAt": issuedAt,
                "subject": subject as Any,
                "displayName": displayName as Any,
                "endpoints": endpoints,
                "certificateThumbprint": certificateThumbprint as Any,
                "dpopKey": dpopKey.map(\.description) as Any,
                "renewableGrant": renewableGrant?.rawValue as Any,
                "resourceTokens": resourceTokens.map(\.description),
                "derivedCredentials": derivedCredentials.map(\.description),
                "clientRegistration": clientRegistration.map(\.description) as Any,
            ],
            displayStyle: .struct
        )
    }
}
