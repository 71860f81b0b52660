import CryptoExtras
internal import Foundation
public import LenientJSON
@_spi(Provider) import NativeAuth
public import NativeAuthTesting

/// Signs the ID tokens of a provider stand-in with RS256, as most providers do, and serves the
/// matching JWKS: one RSA key per stand-in, made when it starts.
public final class StandInSigner: Sendable {
    /// The key id in each token's header and in the JWKS.
    public let kid: String
    private let key: _RSA.Signing.PrivateKey

    /// Makes a 2048-bit key.
    public init(kid: String) throws {
        self.kid = kid
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// A compact JWS of `claims`, signed RS256 with this key.
    public func sign(_ claims: JSONObject) throws -> String {
        let header: JSONObject = ["alg": "RS256", "typ": "JWT", "kid": .string(kid)]
        let input =
            Base64URL.encode(Data(try JSONValue.object(header).encodedString().utf8)) + "."
            + Base64URL.encode(Data(try JSONValue.object(claims).encodedString().utf8))
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The JWKS document, with `more` members in the key (Entra's `issuer`, say).
    public func jwks(adding more: JSONObject = [:]) throws -> String {
        let primitives = try key.publicKey.getKeyPrimitives()
        let (modulus, exponent) = (primitives.modulus, primitives.publicExponent)
        var entry: JSONObject = [
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(kid),
            "n": .string(Base64URL.encode(modulus)), "e": .string(Base64URL.encode(exponent)),
        ]
        for member in more { entry[member.key] = member.value }
        return try JSONValue.object(["keys": .array([.object(entry)])]).encodedString()
    }
}

extension TestResponse {
    /// A JSON answer of `object`, for provider stand-ins.
    public static func json(_ object: JSONObject, status: Int = 200) -> TestResponse {
        .json((try? JSONValue.object(object).encodedString()) ?? "{}", status: status)
    }

    /// An OAuth error answer (RFC 6749 §5.2): `error` and `error_description`, as most providers send.
    public static func oauthError(_ error: String, _ description: String, status: Int = 400) -> TestResponse {
        .json(["error": .string(error), "error_description": .string(description)], status: status)
    }
}
