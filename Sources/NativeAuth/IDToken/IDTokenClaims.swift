package import LenientJSON

/// The claims of an ID token that passed validation (``IDTokenValidator``): who signed in.
package struct IDTokenClaims: Sendable, Equatable {
    /// Every claim of the payload.
    package let claims: JSONObject

    /// `sub`; validation makes sure it is there.
    package var subject: String? { try? claims.string("sub") }

    /// A name to greet the person by: `preferred_username`, `email`, `name`, then `sub`.
    package var displayName: String? {
        for key in ["preferred_username", "email", "name", "sub"] {
            if let value = try? claims.string(key), !value.isEmpty { return value }
        }
        return nil
    }

    /// The name of the account a sign-in is kept under: `preferred_username`, `email`, then `sub`.
    package var accountName: String? {
        for key in ["preferred_username", "email", "sub"] {
            if let value = try? claims.string(key), !value.isEmpty { return value }
        }
        return nil
    }
}

/// The tokens of a new sign-in, before they are kept, with the claims of its ID token when one
/// was verified: who signed in is read from them, never from the token again.
package struct NewSignIn: Sendable {
    package var tokens: TokenSet
    package var claims: IDTokenClaims?

    package init(_ tokens: TokenSet, claims: IDTokenClaims? = nil) {
        self.tokens = tokens
        self.claims = claims
    }
}
