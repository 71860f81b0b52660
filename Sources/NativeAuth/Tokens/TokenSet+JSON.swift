internal import Foundation
public import LenientJSON

extension TokenSet {
    /// The stored form's version, written as `"version"`.
    static let storageVersion: Int64 = 1

    /// The token set as a JSON object, for stores. Holds the tokens: never print it.
    public var storageJSON: JSONValue {
        var object = JSONObject()
        object["version"] = .integer(Self.storageVersion)
        object["access_token"] = .string(accessToken)
        object["token_type"] = .string(tokenType)
        if let refreshToken { object["refresh_token"] = .string(refreshToken) }
        if let refreshExpiresAt { object["refresh_expires_at_ms"] = .integer(Self.milliseconds(refreshExpiresAt)) }
        if let idToken { object["id_token"] = .string(idToken) }
        object["scope"] = .array(scopes.map(JSONValue.string))
        if let expiresAt { object["expires_at_ms"] = .integer(Self.milliseconds(expiresAt)) }
        object["issued_at_ms"] = .integer(Self.milliseconds(issuedAt))
        if let subject { object["subject"] = .string(subject) }
        if let displayName { object["display_name"] = .string(displayName) }
        if let certificateThumbprint { object["cnf_x5t_s256"] = .string(certificateThumbprint) }
        if let dpopKey { object["dpop_key"] = dpopKey.storageJSON }
        if let renewableGrant { object["grant_type"] = .string(renewableGrant.rawValue) }
        if !resources.isEmpty { object["resource"] = .array(resources.map(JSONValue.string)) }
        if !resourceTokens.isEmpty { object["resource_tokens"] = .array(resourceTokens.map(\.storageJSON)) }
        if !derivedCredentials.isEmpty {
            object["derived_credentials"] = .array(derivedCredentials.map(\.storageJSON))
        }
        if let clientRegistration { object["client_registration"] = .object(clientRegistration.storageJSON) }
        if !endpoints.isEmpty {
            var issued = JSONObject()
            for (name, url) in endpoints.sorted(by: { $0.key < $1.key }) { issued[name] = .string(url.absoluteString) }
            object["endpoints"] = .object(issued)
        }
        return .object(object)
    }

    /// Reads a token set written by ``storageJSON``.
    ///
    /// - Throws: `JSONFieldError` naming a missing or malformed field.
    public init(storageJSON object: JSONObject) throws(JSONFieldError) {
        if let version = try object.integer("version"), version > Self.storageVersion {
            throw JSONFieldError(
                key: "version", problem: .wrongKind(expected: "version 1", found: "version \(version)"))
        }
        let issued = try object.requiredInteger("issued_at_ms")
        var endpoints: [String: URL] = [:]
        if let stored = try object.object("endpoints") {
            for member in stored {
                guard case .string(let text) = member.value, let url = URL(string: text) else {
                    throw JSONFieldError(
                        key: "endpoints", problem: .wrongKind(expected: "URLs", found: "something else"))
                }
                endpoints[member.key] = url
            }
        }
        // A client registration's record (``clientRegistration``) holds no access token.
        let registration = try object.object("client_registration")
        self.init(
            accessToken: registration == nil
                ? try object.requiredString("access_token") : try object.string("access_token") ?? "",
            tokenType: try object.string("token_type") ?? "Bearer",
            refreshToken: try object.string("refresh_token"),
            idToken: try object.string("id_token"),
            scopes: try object.stringList("scope") ?? [],
            expiresAt: try object.integer("expires_at_ms").map { Self.date(milliseconds: $0) },
            issuedAt: Self.date(milliseconds: issued),
            subject: try object.string("subject"),
            displayName: try object.string("display_name"),
            endpoints: endpoints,
            refreshExpiresAt: try object.integer("refresh_expires_at_ms").map { Self.date(milliseconds: $0) },
            certificateThumbprint: try object.string("cnf_x5t_s256"),
            renewableGrant: try object.string("grant_type").map(Grant.Kind.init(rawValue:))
        )
        resources = try object.stringList("resource") ?? []
        if let stored = try object.object("dpop_key") { dpopKey = try DPoPKey(storageJSON: stored) }
        if let stored = try object.array("resource_tokens") {
            resourceTokens = try stored.map { value throws(JSONFieldError) in
                guard case .object(let entry) = value else {
                    throw JSONFieldError(
                        key: "resource_tokens", problem: .wrongKind(expected: "objects", found: "something else"))
                }
                return try ResourceToken(storageJSON: entry)
            }
        }
        if let stored = try object.array("derived_credentials") {
            derivedCredentials = try stored.map { value throws(JSONFieldError) in
                guard case .object(let entry) = value else {
                    throw JSONFieldError(
                        key: "derived_credentials", problem: .wrongKind(expected: "objects", found: "something else"))
                }
                return try DerivedCredential(storageJSON: entry)
            }
        }
        if let registration {
            clientRegistration = try ClientRegistration(storageJSON: registration)
        }
    }
}
