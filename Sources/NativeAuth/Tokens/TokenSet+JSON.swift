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
        if let idToken { object["id_token"] = .string(idToken) }
        object["scope"] = .array(scopes.map(JSONValue.string))
        if let expiresAt { object["expires_at"] = .double(expiresAt.timeIntervalSince1970) }
        object["issued_at"] = .double(issuedAt.timeIntervalSince1970)
        if let subject { object["subject"] = .string(subject) }
        if let displayName { object["display_name"] = .string(displayName) }
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
        guard let issued = object["issued_at"]?.lenientDouble else {
            throw JSONFieldError(key: "issued_at", problem: .missing)
        }
        self.init(
            accessToken: try object.requiredString("access_token"),
            tokenType: try object.string("token_type") ?? "Bearer",
            refreshToken: try object.string("refresh_token"),
            idToken: try object.string("id_token"),
            scopes: try object.stringList("scope") ?? [],
            expiresAt: object["expires_at"]?.lenientDouble.map { Date(timeIntervalSince1970: $0) },
            issuedAt: Date(timeIntervalSince1970: issued),
            subject: try object.string("subject"),
            displayName: try object.string("display_name")
        )
    }
}

extension JSONValue {
    /// A number (integer or double) as a double.
    var lenientDouble: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .string(let text): Double(text)
        default: nil
        }
    }
}
