public import LenientJSON

/// The claims about the signed-in account from the userinfo endpoint, with the common ones typed.
public struct UserInfo: Sendable, Equatable {
    /// Every claim, as the server sent it.
    public let claims: JSONObject
    /// `sub`: the account's stable identifier (required).
    public let subject: String
    /// `name`.
    public let name: String?
    /// `email`.
    public let email: String?
    /// `email_verified`, also when sent as `"true"` (Cognito).
    public let emailVerified: Bool?
    /// `preferred_username`.
    public let preferredUsername: String?

    /// Reads the claims; `sub` is required, the typed claims are read leniently.
    ///
    /// - Throws: `JSONFieldError` naming a missing `sub` or a claim of the wrong kind.
    public init(claims: JSONObject) throws(JSONFieldError) {
        self.claims = claims
        subject = try claims.requiredString("sub")
        name = try claims.string("name")
        email = try claims.string("email")
        emailVerified = try claims.bool("email_verified")
        preferredUsername = try claims.string("preferred_username")
    }
}
