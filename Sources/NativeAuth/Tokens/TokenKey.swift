public import LenientJSON

/// Names one stored token set: whose tokens, from which server, for which client.
public struct TokenKey: Sendable, Hashable, CustomStringConvertible {
    /// The issuer URL, or the provider id for providers without an issuer (GitHub).
    public var issuer: String
    /// The OAuth client id.
    public var clientID: String
    /// The account, for programs that keep several sign-ins; `"default"` otherwise.
    public var account: String

    /// The account of programs with one sign-in per provider and client, and of sign-ins stored
    /// before accounts were named: `"default"`.
    public static let defaultAccount = "default"

    /// Creates a key.
    public init(issuer: String, clientID: String, account: String = TokenKey.defaultAccount) {
        self.issuer = issuer
        self.clientID = clientID
        self.account = account
    }

    public var description: String { "\(account)@\(issuer) (client \(clientID))" }
}

extension TokenKey {
    /// The key as a JSON object (`issuer`, `client_id`, `account`), for stores that keep it beside
    /// the tokens.
    public var storageJSON: JSONObject {
        ["issuer": .string(issuer), "client_id": .string(clientID), "account": .string(account)]
    }

    /// Reads a key written by ``storageJSON``.
    ///
    /// - Throws: `JSONFieldError` naming a missing or malformed field.
    public init(storageJSON object: JSONObject) throws(JSONFieldError) {
        self.init(
            issuer: try object.requiredString("issuer"),
            clientID: try object.requiredString("client_id"),
            account: try object.string("account") ?? "default"
        )
    }
}
