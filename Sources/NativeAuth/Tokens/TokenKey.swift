/// Names one stored token set: whose tokens, from which server, for which client.
public struct TokenKey: Sendable, Hashable, CustomStringConvertible {
    /// The issuer URL, or the provider id for providers without an issuer (GitHub).
    public var issuer: String
    /// The OAuth client id.
    public var clientID: String
    /// The account, for programs that keep several sign-ins; `"default"` otherwise.
    public var account: String

    /// Creates a key.
    public init(issuer: String, clientID: String, account: String = "default") {
        self.issuer = issuer
        self.clientID = clientID
        self.account = account
    }

    public var description: String { "\(account)@\(issuer) (client \(clientID))" }
}
