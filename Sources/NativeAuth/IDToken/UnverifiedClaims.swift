internal import LenientJSON

/// The claims of a JWT read without checking its signature: only for showing who signed in.
///
/// Never base a security decision on these claims; ID token validation (signature, `aud`, `nonce`,
/// expiry) is a separate step.
struct UnverifiedClaims: Sendable {
    let claims: JSONObject

    /// Reads the payload of a compact JWS; `nil` when it is not one.
    init?(jwt: String) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let object = try? JSONValue.parse(payload).objectValue
        else { return nil }
        claims = object
    }

    /// `sub`.
    var subject: String? { try? claims.string("sub") }

    /// A name to greet the person by: `preferred_username`, `email`, `name`, then `sub`.
    var displayName: String? {
        for key in ["preferred_username", "email", "name", "sub"] {
            if let value = try? claims.string(key), !value.isEmpty { return value }
        }
        return nil
    }
}
