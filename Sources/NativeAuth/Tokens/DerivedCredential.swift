public import Foundation
internal import LenientJSON

/// A credential another service issued for a sign-in's tokens (temporary cloud credentials from
/// AWS STS for the ID token, say), kept in the sign-in's ``TokenSet`` so that every process
/// reuses it until it expires, and removed with the tokens at logout or at the next sign-in.
///
/// ``Authenticator/derivedCredential(named:minimumValidity:idToken:obtain:)`` gets one at most
/// once however many callers and processes ask. It is stored as the tokens are: sealed in a
/// keyring or PostgreSQL store, in a 0600 file otherwise. Printing one shows its name and expiry,
/// never its fields.
public struct DerivedCredential: Sendable, Equatable {
    /// What it is and for what it was asked, one credential per name (NativeAuthAWS: the STS
    /// endpoint, the role and the token sent).
    public var name: String
    /// Its fields, secret ones included (AWS: the key id, the secret key, the session token).
    public var fields: [String: String]
    /// When it expires. Whole milliseconds.
    public var expiresAt: Date

    /// Creates one.
    public init(name: String, fields: [String: String], expiresAt: Date) {
        self.name = name
        self.fields = fields
        self.expiresAt = TokenSet.date(milliseconds: TokenSet.milliseconds(expiresAt))
    }

    /// Whether it is still valid `leeway` seconds from `now`.
    public func isValid(at now: Date, leeway: TimeInterval) -> Bool {
        expiresAt.timeIntervalSince(now) > leeway
    }

    /// The stored form, inside the set's.
    var storageJSON: JSONValue {
        var fields = JSONObject()
        for (key, value) in self.fields.sorted(by: { $0.key < $1.key }) { fields[key] = .string(value) }
        return .object([
            "name": .string(name), "fields": .object(fields),
            "expires_at_ms": .integer(TokenSet.milliseconds(expiresAt)),
        ])
    }

    /// Reads the stored form.
    init(storageJSON object: JSONObject) throws(JSONFieldError) {
        name = try object.requiredString("name")
        var fields: [String: String] = [:]
        for member in try object.object("fields") ?? [:] {
            guard case .string(let value) = member.value else {
                throw JSONFieldError(key: "fields", problem: .wrongKind(expected: "strings", found: "something else"))
            }
            fields[member.key] = value
        }
        self.fields = fields
        expiresAt = TokenSet.date(milliseconds: try object.requiredInteger("expires_at_ms"))
    }
}

extension DerivedCredential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "DerivedCredential(\(name), expires \(expiresAt.formatted(.iso8601)))"
    }

    public var debugDescription: String { description }

    /// Reflection shows the same as the description, never the fields' values.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["name": name, "fields": fields.keys.sorted(), "expiresAt": expiresAt],
            displayStyle: .struct)
    }
}
