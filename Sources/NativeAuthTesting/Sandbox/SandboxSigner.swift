import Crypto
import CryptoExtras
import Foundation
import LenientJSON
import NativeAuth

/// The sandbox's signing keys: the current one signs, every key it still publishes is in the JWKS.
struct SandboxSigner: Sendable {
    enum Key: Sendable {
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case p521(P521.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        /// HS256–HS512: keyed by the client secret of the token's audience (OIDC Core §10.1), so
        /// nothing is published.
        case clientSecret
    }

    struct Entry: Sendable {
        let kid: String
        let key: Key
        let algorithm: SandboxAuthorizationServer.SigningAlgorithm
    }

    /// Newest first; the first one signs.
    private(set) var keys: [Entry]

    init(algorithm: SandboxAuthorizationServer.SigningAlgorithm) throws {
        keys = [try Self.makeKey(algorithm)]
    }

    static func makeKey(_ algorithm: SandboxAuthorizationServer.SigningAlgorithm) throws -> Entry {
        let kid = "sandbox-" + String(SecureRandom.token(bytes: 6))
        let key: Key =
            switch algorithm {
            case .es256: .p256(P256.Signing.PrivateKey())
            case .es384: .p384(P384.Signing.PrivateKey())
            case .es512: .p521(P521.Signing.PrivateKey())
            case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            case .edDSA: .ed25519(Curve25519.Signing.PrivateKey())
            case .hs256, .hs384, .hs512: .clientSecret
            }
        return Entry(kid: kid, key: key, algorithm: algorithm)
    }

    var algorithm: SandboxAuthorizationServer.SigningAlgorithm { keys[0].algorithm }

    /// The key id that signs now.
    var currentKeyID: String { keys[0].kid }

    /// A new key signs from now on; the old ones stay published unless `retainPrevious` is false.
    mutating func add(_ entry: Entry, retainPrevious: Bool) {
        keys = [entry] + (retainPrevious ? keys : [])
    }

    /// A compact JWS of `claims`, signed with the current key (an HMAC key: `secret`), altered as
    /// `alteration` says.
    func sign(
        _ claims: JSONObject,
        secret: String,
        alteration: SandboxAuthorizationServer.JWTAlteration? = nil,
        type: String = "JWT"
    ) throws -> String {
        let entry = keys[0]
        var claims = claims
        var header: JSONObject = [
            "alg": .string(entry.algorithm.rawValue), "kid": .string(entry.kid), "typ": .string(type),
        ]
        if case .clientSecret = entry.key { header["kid"] = nil }
        switch alteration {
        case .withoutKeyID: header["kid"] = nil
        case .unsigned: header = ["alg": "none", "typ": .string(type)]
        case .claims(let changed):
            for member in changed { claims[member.key] = member.value == .null ? nil : member.value }
        case .badSignature, nil: break
        }
        let input =
            Base64URL.encode(try JSONValue.object(header).encoded()) + "."
            + Base64URL.encode(try JSONValue.object(claims).encoded())
        if case .unsigned = alteration { return input + "." }
        var signature = try Self.signature(of: Data(input.utf8), with: entry, secret: secret)
        if case .badSignature = alteration, !signature.isEmpty { signature[signature.startIndex] ^= 0x01 }
        return input + "." + Base64URL.encode(signature)
    }

    private static func signature(of data: Data, with entry: Entry, secret: String) throws -> Data {
        let algorithm = entry.algorithm.rawValue
        switch entry.key {
        case .p256(let key): return try key.signature(for: data).rawRepresentation
        case .p384(let key): return try key.signature(for: data).rawRepresentation
        case .p521(let key): return try key.signature(for: data).rawRepresentation
        case .ed25519(let key): return try key.signature(for: data)
        case .rsa(let key):
            let padding: _RSA.Signing.Padding = algorithm.hasPrefix("PS") ? .PSS : .insecurePKCS1v1_5
            switch algorithm.suffix(3) {
            case "384": return try key.signature(for: SHA384.hash(data: data), padding: padding).rawRepresentation
            case "512": return try key.signature(for: SHA512.hash(data: data), padding: padding).rawRepresentation
            default: return try key.signature(for: SHA256.hash(data: data), padding: padding).rawRepresentation
            }
        case .clientSecret:
            let key = SymmetricKey(data: Data(secret.utf8))
            switch algorithm {
            case "HS384": return Data(HMAC<SHA384>.authenticationCode(for: data, using: key))
            case "HS512": return Data(HMAC<SHA512>.authenticationCode(for: data, using: key))
            default: return Data(HMAC<SHA256>.authenticationCode(for: data, using: key))
            }
        }
    }

    /// The public keys as a JWK Set (RFC 7517).
    func jwks() throws -> JSONObject {
        var keys: [JSONValue] = []
        for entry in self.keys {
            var jwk: JSONObject = ["use": "sig", "alg": .string(entry.algorithm.rawValue), "kid": .string(entry.kid)]
            func curve(_ name: String, _ raw: Data) {
                jwk["kty"] = "EC"
                jwk["crv"] = .string(name)
                jwk["x"] = .string(Base64URL.encode(raw.prefix(raw.count / 2)))
                jwk["y"] = .string(Base64URL.encode(raw.suffix(raw.count / 2)))
            }
            switch entry.key {
            case .p256(let key): curve("P-256", key.publicKey.rawRepresentation)
            case .p384(let key): curve("P-384", key.publicKey.rawRepresentation)
            case .p521(let key): curve("P-521", key.publicKey.rawRepresentation)
            case .ed25519(let key):
                jwk["kty"] = "OKP"
                jwk["crv"] = "Ed25519"
                jwk["x"] = .string(Base64URL.encode(key.publicKey.rawRepresentation))
            case .rsa(let key):
                let primitives = try key.publicKey.getKeyPrimitives()
                jwk["kty"] = "RSA"
                jwk["n"] = .string(Base64URL.encode(primitives.modulus))
                jwk["e"] = .string(Base64URL.encode(primitives.publicExponent))
            case .clientSecret:
                continue
            }
            keys.append(.object(jwk))
        }
        return ["keys": .array(keys)]
    }

    /// `at_hash` (OIDC Core §3.1.3.6): the left half of the access token's hash under the
    /// algorithm's hash function.
    func leftHalfHash(_ value: String) -> String {
        let data = Data(value.utf8)
        let digest: [UInt8] =
            switch algorithm {
            case .rs384, .ps384, .es384, .hs384: Array(SHA384.hash(data: data))
            case .rs512, .ps512, .es512, .hs512, .edDSA: Array(SHA512.hash(data: data))
            default: Array(SHA256.hash(data: data))
            }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }
}
