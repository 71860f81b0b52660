internal import Crypto
internal import Foundation

/// Random values for PKCE, `state` and `nonce`, from swift-crypto's system generator.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: count * 8))
        return key.withUnsafeBytes { Array($0) }
    }

    /// A base64url string (no padding) of `count` random bytes: 32 bytes give 43 characters.
    package static func token(bytes count: Int = 32) -> String {
        Base64URL.encode(bytes(count))
    }
}
