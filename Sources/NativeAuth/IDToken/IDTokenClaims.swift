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
}
