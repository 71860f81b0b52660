import Crypto
import CryptoExtras
import Foundation
import LenientJSON
import NativeAuth

/// The sandbox's signing keys: the current one signs, every key it still publishes is in the JWKS.
struct SandboxSigner: Sendable {
    enum Key: Sendable {
        case es256(P256.Signing.PrivateKey)
        case rs256(_RSA.Signing.PrivateKey)
    }

    struct Entry: Sendable {
        let kid: String
        let key: Key
    }

    /// Newest first; the first one signs.
    private(set) var keys: [Entry]

    init(algorithm: SandboxAuthorizationServer.SigningAlgorithm) throws {
        keys = [try Self.makeKey(algorithm)]
    }

    static func makeKey(_ algorithm: SandboxAuthorizationServer.SigningAlgorithm) throws -> Entry {
        let kid = "sandbox-" + String(SecureRandom.token(bytes: 6))
        switch algorithm {
        case .es256: return Entry(kid: kid, key: .es256(P256.Signing.PrivateKey()))
        case .rs256: return Entry(kid: kid, key: .rs256(try _RSA.Signing.PrivateKey(keySize: .bits2048)))
        }
    }

    var algorithm: SandboxAuthorizationServer.SigningAlgorithm {
        switch keys[0].key {
        case .es256: .es256
        case .rs256: .rs256
        }
    }

    /// The key id that signs now.
    var currentKeyID: String { keys[0].kid }

    /// A new key signs from now on; the old ones stay published unless `retainPrevious` is false.
    mutating func add(_ entry: Entry, retainPrevious: Bool) {
        keys = [entry] + (retainPrevious ? keys : [])
    }

    /// A compact JWS of `claims`, signed with the current key.
    func sign(_ claims: JSONObject) throws -> String {
        let entry = keys[0]
        let header: JSONObject = [
            "alg": .string(algorithm.rawValue), "kid": .string(entry.kid), "typ": "JWT",
        ]
        let input =
            Base64URL.encode(try JSONValue.object(header).encoded()) + "."
            + Base64URL.encode(try JSONValue.object(claims).encoded())
        let signature: Data
        switch entry.key {
        case .es256(let key): signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        case .rs256(let key):
            signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// The public keys as a JWK Set (RFC 7517).
    func jwks() throws -> JSONObject {
        var keys: [JSONValue] = []
        for entry in self.keys {
            switch entry.key {
            case .es256(let key):
                let raw = key.publicKey.rawRepresentation
                keys.append(
                    .object([
                        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": .string(entry.kid),
                        "x": .string(Base64URL.encode(raw.prefix(32))), "y": .string(Base64URL.encode(raw.suffix(32))),
                    ]))
            case .rs256(let key):
                let primitives = try key.publicKey.getKeyPrimitives()
                keys.append(
                    .object([
                        "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(entry.kid),
                        "n": .string(Base64URL.encode(primitives.modulus)),
                        "e": .string(Base64URL.encode(primitives.publicExponent)),
                    ]))
            }
        }
        return ["keys": .array(keys)]
    }
}
