package import Foundation
internal import JWTKit
internal import LenientJSON

/// A private key the client signs its token-endpoint assertions with: `private_key_jwt`
/// (RFC 7523 §2.2, OIDC Core §9). The server holds the public half (registered, or in the
/// client's JWKS); no secret crosses the wire, and each assertion is good for one minute, once.
///
/// Read one from a PEM (`BEGIN PRIVATE KEY`, `BEGIN EC PRIVATE KEY`, `BEGIN RSA PRIVATE KEY`) or
/// a private JWK: ES256 (P-256), RS256 (RSA of 2048 bits or more) or EdDSA (Ed25519). From a file,
/// with ``contentsOf(_:keyID:)``, the file must be its owner's alone.
///
/// Printing a key shows its algorithm and key id only.
public struct ClientAssertionKey: Sendable {
    enum Material: Sendable {
        case es256(ES256PrivateKey)
        case rs256(Insecure.RSA.PrivateKey)
        case eddsa(EdDSA.PrivateKey)
    }

    let material: Material
    /// The JWS algorithm: `ES256`, `RS256` or `EdDSA`.
    public let algorithm: String
    /// The `kid` header of the assertions, so that a server holding several of the client's keys
    /// picks this one; `nil` sends none.
    public var keyID: String?

    /// Reads a private key from PEM text or a private JWK (JSON).
    ///
    /// - Parameters:
    ///   - text: The PEM or the JWK.
    ///   - keyID: The `kid` to send; default: the JWK's `kid`, none for a PEM.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) saying which kinds of key
    ///   are read, when `text` is none of them; never quoting the key.
    public init(_ text: String, keyID: String? = nil) throws(AuthError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            try self.init(jwk: trimmed, keyID: keyID)
        } else {
            try self.init(pem: trimmed, keyID: keyID)
        }
    }

    private init(pem: String, keyID: String?) throws(AuthError) {
        guard pem.hasPrefix("-----BEGIN ") else { throw Self.unreadable("it is neither a PEM nor a JWK") }
        if pem.contains("PUBLIC KEY") || pem.contains("CERTIFICATE") {
            throw Self.unreadable("it holds a public key or a certificate; the client needs its private key")
        }
        if let key = try? ES256PrivateKey(pem: pem) {
            self.init(material: .es256(key), algorithm: "ES256", keyID: keyID)
        } else if let key = try? EdDSA.PrivateKey(pem: pem) {
            self.init(material: .eddsa(key), algorithm: "EdDSA", keyID: keyID)
        } else {
            do {
                let key = try Insecure.RSA.PrivateKey(pem: pem)
                self.init(material: .rs256(key), algorithm: "RS256", keyID: keyID)
            } catch {
                throw Self.unreadable("it is not a P-256, Ed25519 or RSA (2048 bits or more) private key")
            }
        }
    }

    private init(jwk text: String, keyID: String?) throws(AuthError) {
        let object: JSONObject
        do {
            guard let parsed = try JSONValue.parse(Data(text.utf8)).objectValue else {
                throw Self.unreadable("the JWK is not a JSON object")
            }
            object = parsed
        } catch let error as AuthError {
            throw error
        } catch {
            throw Self.unreadable("the JWK is not valid JSON")
        }
        func member(_ name: String) throws(AuthError) -> String {
            guard let value = (try? object.string(name)) ?? nil, !value.isEmpty else {
                throw Self.unreadable("the JWK has no \"\(name)\"; a private key needs it")
            }
            return value
        }
        let kid = keyID ?? ((try? object.string("kid")) ?? nil)
        let kty = try member("kty")
        do {
            switch kty {
            case "EC":
                guard try member("crv") == "P-256" else { throw Self.unreadable("only the EC curve P-256 is read") }
                self.init(material: .es256(try ES256PrivateKey(key: try member("d"))), algorithm: "ES256", keyID: kid)
            case "OKP":
                guard try member("crv") == "Ed25519" else {
                    throw Self.unreadable("only the OKP curve Ed25519 is read")
                }
                let key = try EdDSA.PrivateKey(d: try member("d"), curve: .ed25519)
                self.init(material: .eddsa(key), algorithm: "EdDSA", keyID: kid)
            case "RSA":
                let key = try Insecure.RSA.PrivateKey(
                    modulus: try member("n"), exponent: try member("e"), privateExponent: try member("d"))
                self.init(material: .rs256(key), algorithm: "RS256", keyID: kid)
            default:
                throw Self.unreadable("its kty \"\(TerminalText.sanitized(kty))\" is none of EC, OKP, RSA")
            }
        } catch let error as AuthError {
            throw error
        } catch {
            throw Self.unreadable(
                "its parameters are not a valid \(kty) private key" + (kty == "RSA" ? " of 2048 bits or more" : ""))
        }
    }

    private init(material: Material, algorithm: String, keyID: String?) {
        self.material = material
        self.algorithm = algorithm
        self.keyID = keyID
    }

    /// Reads the key from a file its owner alone may read (and change).
    ///
    /// - Parameters:
    ///   - path: The PEM or JWK file.
    ///   - keyID: The `kid` to send; default: the JWK's, none for a PEM.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``): the file cannot be read,
    ///   other users can read or change it (with the `chmod` that fixes it), or it holds no key
    ///   NativeAuth signs with.
    public static func contentsOf(_ path: String, keyID: String? = nil) throws(AuthError) -> ClientAssertionKey {
        let file = try SecretFile(path, what: "client assertion key", maxBytes: 64 * 1024)
        try file.requirePrivate(holding: "a private key")
        do {
            return try ClientAssertionKey(String(decoding: file.contents, as: UTF8.self), keyID: keyID)
        } catch {
            var error = error
            error.message = "the client assertion key \(path): " + error.message
            throw error
        }
    }

    private static func unreadable(_ reason: String) -> AuthError {
        AuthError(
            .configurationInvalid,
            "cannot use the client assertion key: \(reason)",
            hint: "give a PEM or JWK private key: P-256 (ES256), Ed25519 (EdDSA) or RSA of 2048 bits or more (RS256)",
            field: Setting.clientAssertionKey.key
        )
    }
}

extension ClientAssertionKey: CustomStringConvertible, CustomReflectable {
    /// The algorithm and key id; never the key.
    public var description: String {
        "ClientAssertionKey(\(algorithm)" + (keyID.map { ", kid \($0)" } ?? "") + ")"
    }

    /// Reflection shows the same as the description.
    public var customMirror: Mirror {
        Mirror(self, children: ["algorithm": algorithm, "keyID": keyID as Any], displayStyle: .struct)
    }
}

/// Signs the client assertions of `private_key_jwt` and `client_secret_jwt` (RFC 7523 §3,
/// OIDC Core §9): `iss` and `sub` the client id, `aud` the token endpoint, a unique `jti`, `iat`
/// now and `exp` a minute later.
package enum ClientAssertion {
    /// `client_assertion_type` of a JWT assertion (RFC 7523 §2.2).
    package static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How long an assertion is good for.
    package static let lifetime: TimeInterval = 60

    struct Claims: JWTPayload {
        let iss: String
        let sub: String
        let aud: String
        let jti: String
        let iat: Int64
        let exp: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A signed assertion for `method`.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when `method` has nothing
    ///   to sign with: no key for `private_key_jwt`, no secret for `client_secret_jwt`.
    package static func make(
        _ method: ClientAuthentication,
        configuration: ProviderConfiguration,
        audience: URL,
        now: Date
    ) async throws(AuthError) -> String {
        let issued = Int64(now.timeIntervalSince1970)
        let claims = Claims(
            iss: configuration.clientID, sub: configuration.clientID, aud: audience.absoluteString,
            jti: SecureRandom.token(), iat: issued, exp: issued + Int64(lifetime))
        let keys = JWTKeyCollection()
        var kid: JWKIdentifier?
        switch method {
        case .privateKeyJWT:
            guard let key = configuration.clientAssertionKey else {
                throw AuthError(
                    .configurationInvalid, "private_key_jwt client authentication needs the client's private key",
                    hint: "give it (`client_assertion_key`)",
                    field: Setting.clientAssertionKey.key)
            }
            kid = key.keyID.map { JWKIdentifier(string: $0) }
            switch key.material {
            case .es256(let key): await keys.add(ecdsa: key, kid: kid)
            case .rs256(let key): await keys.add(rsa: key, digestAlgorithm: .sha256, kid: kid)
            case .eddsa(let key): await keys.add(eddsa: key, kid: kid)
            }
        case .clientSecretJWT:
            guard let secret = configuration.clientSecret, !secret.isEmpty else {
                throw AuthError(
                    .configurationInvalid, "client_secret_jwt client authentication needs the client secret",
                    hint: "give it (`client_secret`)",
                    field: Setting.clientSecret.key)
            }
            // RFC 7518 §3.2: an HS256 key must be at least as long as the hash (32 bytes).
            guard secret.utf8.count >= 32 else {
                throw AuthError(
                    .configurationInvalid,
                    "client_secret_jwt signs with HS256, which needs a client secret of at least 32 bytes;"
                        + " this one has \(secret.utf8.count)",
                    hint: "use client_secret_basic or client_secret_post with this secret (`client_auth` basic)",
                    field: Setting.clientSecret.key)
            }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        default:
            throw AuthError(.configurationInvalid, "\(method.rawValue) client authentication signs no assertion")
        }
        do {
            return try await keys.sign(claims, kid: kid)
        } catch {
            throw AuthError(
                .configurationInvalid, "the client assertion could not be signed (\(Swift.type(of: error)))",
                underlying: error)
        }
    }
}
