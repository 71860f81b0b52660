internal import Crypto
internal import Foundation

/// Proof Key for Code Exchange with the S256 method (RFC 7636), which NativeAuth uses on every
/// authorization code flow.
public struct PKCE: Sendable, Equatable {
    /// The secret verifier, sent with the code exchange: 43 to 128 unreserved characters.
    public let verifier: String
    /// `BASE64URL(SHA256(verifier))`, sent with the authorization request.
    public let challenge: String
    /// Always `"S256"`.
    public var method: String { "S256" }

    /// A new verifier from 32 random bytes (43 characters).
    public init() {
        self.init(validVerifier: SecureRandom.token(bytes: 32))
    }

    /// Uses a given verifier (for tests and known-answer checks).
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when the verifier is not
    ///   43–128 characters of `A–Z a–z 0–9 - . _ ~` (RFC 7636 §4.1).
    public init(verifier: String) throws(AuthError) {
        let allowed = verifier.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "-", ".", "_", "~": true
            default: false
            }
        }
        guard (43...128).contains(verifier.count), allowed else {
            throw AuthError(.configurationInvalid, "a PKCE verifier must be 43 to 128 unreserved characters")
        }
        self.init(validVerifier: verifier)
    }

    private init(validVerifier: String) {
        verifier = validVerifier
        challenge = Base64URL.encode(SHA256.hash(data: Data(validVerifier.utf8)))
    }
}

extension PKCE: CustomStringConvertible {
    /// Shows the challenge (public) but not the verifier (secret).
    public var description: String { "PKCE(S256, challenge: \(challenge))" }
}
