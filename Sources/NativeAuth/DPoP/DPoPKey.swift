internal import Crypto
internal import CryptoExtras
public import Foundation
package import LenientJSON

/// The key one sign-in's tokens are bound to with DPoP (RFC 9449): each request with them carries
/// a proof signed with it, so a copied token is worth nothing without the key.
///
/// NativeAuth makes one per sign-in and keeps it in the ``TokenSet``, in the same store and under
/// the same lock as the tokens: every process sharing the store signs with the same key, and one
/// refresh serves them all. It is never printed: a key shows its algorithm and thumbprint only.
public struct DPoPKey: Sendable {
    /// The JWS algorithms NativeAuth signs proofs with, in the order it prefers them.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// ECDSA with P-256 and SHA-256: the default.
        case es256 = "ES256"
        /// Ed25519.
        case edDSA = "EdDSA"
        /// RSASSA-PKCS1-v1_5 with SHA-256 and a 2048-bit key, for servers that take nothing else.
        case rs256 = "RS256"
    }

    enum Material: Sendable {
        case es256(P256.Signing.PrivateKey)
        case edDSA(Curve25519.Signing.PrivateKey)
        case rs256(_RSA.Signing.PrivateKey)
    }

    let material: Material
    /// The algorithm of its proofs.
    public let algorithm: Algorithm
    /// The JWK SHA-256 thumbprint of its public half (RFC 7638), base64url: the `dpop_jkt` of an
    /// authorization request, and the `cnf.jkt` of the tokens bound to it.
    public let thumbprint: String
    /// The public key as a JWK, with members in RFC 7638's order.
    let publicJWK: String
    /// The proofs' protected header, base64url: the same for every proof, so made once.
    let headerSegment: String

    /// Makes a new key.
    ///
    /// - Parameter algorithm: The algorithm; ES256 by default.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when the platform cannot
    ///   make the key.
    public static func generate(_ algorithm: Algorithm = .es256) throws(AuthError) -> DPoPKey {
        switch algorithm {
        case .es256: return DPoPKey(.es256(P256.Signing.PrivateKey()))
        case .edDSA: return DPoPKey(.edDSA(Curve25519.Signing.PrivateKey()))
        case .rs256:
            do {
                return DPoPKey(.rs256(try _RSA.Signing.PrivateKey(keySize: .bits2048)))
            } catch {
                throw AuthError(.configurationInvalid, "an RSA key for DPoP could not be made", underlying: error)
            }
        }
    }

    /// The algorithm NativeAuth signs with among those a server names in
    /// `dpop_signing_alg_values_supported`: the first it names of ES256, EdDSA and RS256; `nil`
    /// when it names none of them.
    public static func algorithm(among advertised: [String]) -> Algorithm? {
        Algorithm.allCases.first { advertised.contains($0.rawValue) }
    }

    private init(_ material: Material) {
        self.material = material
        let jwk: String
        switch material {
        case .es256(let key):
            // The uncompressed point: 0x04, x, y.
            let point = key.publicKey.x963Representation.dropFirst()
            jwk =
                #"{"crv":"P-256","kty":"EC","x":""# + Base64URL.encode(point.prefix(32)) + #"","y":""#
                + Base64URL.encode(point.dropFirst(32)) + #""}"#
            algorithm = .es256
        case .edDSA(let key):
            jwk = #"{"crv":"Ed25519","kty":"OKP","x":""# + Base64URL.encode(key.publicKey.rawRepresentation) + #""}"#
            algorithm = .edDSA
        case .rs256(let key):
            let primitives = try? key.publicKey.getKeyPrimitives()
            jwk =
                #"{"e":""# + Base64URL.encode(primitives?.publicExponent ?? Data()) + #"","kty":"RSA","n":""#
                + Base64URL.encode(primitives?.modulus ?? Data()) + #""}"#
            algorithm = .rs256
        }
        publicJWK = jwk
        thumbprint = Base64URL.encode(SHA256.hash(data: Data(jwk.utf8)))
        let header = #"{"typ":"dpop+jwt","alg":""# + algorithm.rawValue + #"","jwk":"# + jwk + "}"
        headerSegment = Base64URL.encode(Data(header.utf8))
    }

    // MARK: - Proofs

    /// The target URI a proof names (`htu`): the request's URI without query and fragment
    /// (RFC 9449 §4.2).
    package static func target(of url: URL) -> String {
        guard url.query != nil || url.fragment != nil else { return url.absoluteString }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        return components.string ?? url.absoluteString
    }

    /// A proof for one request (RFC 9449 §4.2), the value of its `DPoP` header: `typ` `dpop+jwt`,
    /// the public key as `jwk`, a new `jti`, `htm`, `htu`, `iat`; `ath` (the access token's SHA-256,
    /// base64url) with an access token, and the server's `nonce` when it gave one.
    /// ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)`` adds one to every request with a DPoP-bound token; this is
    /// for requests an app sends another way.
    ///
    /// - Parameters:
    ///   - method: The request's method (`htm`).
    ///   - url: The request's URL; the proof names it without query and fragment (`htu`).
    ///   - accessToken: The access token the request carries, if any.
    ///   - nonce: The server's last `DPoP-Nonce`, if it gave one.
    ///   - now: The time of the proof (`iat`).
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when signing fails.
    public func proof(method: String, url: URL, accessToken: String? = nil, nonce: String? = nil, now: Date = Date())
        throws(AuthError) -> String
    {
        var payload: JSONObject = [
            "jti": .string(SecureRandom.token(bytes: 16)),
            "htm": .string(method),
            "htu": .string(Self.target(of: url)),
            "iat": .integer(Int64(now.timeIntervalSince1970)),
        ]
        if let accessToken {
            payload["ath"] = .string(Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8))))
        }
        if let nonce { payload["nonce"] = .string(nonce) }
        let body: [UInt8]
        do {
            body = try JSONValue.object(payload).encoded()
        } catch {
            throw AuthError(.configurationInvalid, "the DPoP proof could not be encoded", underlying: error)
        }
        let input = headerSegment + "." + Base64URL.encode(body)
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }

    private func sign(_ input: Data) throws(AuthError) -> Data {
        do {
            switch material {
            case .es256(let key): return try key.signature(for: input).rawRepresentation
            case .edDSA(let key): return try key.signature(for: input)
            case .rs256(let key): return try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
            }
        } catch {
            throw AuthError(.configurationInvalid, "the DPoP proof could not be signed", underlying: error)
        }
    }

    // MARK: - The stored form

    /// The stored form, inside the token set's: the algorithm and the private key (raw for P-256
    /// and Ed25519, DER for RSA), base64url. A secret.
    package var storageJSON: JSONValue {
        let bytes: Data
        switch material {
        case .es256(let key): bytes = key.rawRepresentation
        case .edDSA(let key): bytes = key.rawRepresentation
        case .rs256(let key): bytes = key.derRepresentation
        }
        return .object(["alg": .string(algorithm.rawValue), "key": .string(Base64URL.encode(bytes))])
    }

    /// Reads the stored form.
    package init(storageJSON object: JSONObject) throws(JSONFieldError) {
        let name = try object.requiredString("alg")
        guard let algorithm = Algorithm(rawValue: name) else {
            throw JSONFieldError(key: "alg", problem: .wrongKind(expected: "ES256, EdDSA or RS256", found: name))
        }
        guard let bytes = Base64URL.decode(try object.requiredString("key")) else {
            throw JSONFieldError(key: "key", problem: .wrongKind(expected: "base64url", found: "something else"))
        }
        do {
            switch algorithm {
            case .es256: self.init(.es256(try P256.Signing.PrivateKey(rawRepresentation: bytes)))
            case .edDSA: self.init(.edDSA(try Curve25519.Signing.PrivateKey(rawRepresentation: bytes)))
            case .rs256: self.init(.rs256(try _RSA.Signing.PrivateKey(derRepresentation: bytes)))
            }
        } catch {
            throw JSONFieldError(
                key: "key", problem: .wrongKind(expected: "a \(name) private key", found: "other bytes"))
        }
    }
}

extension DPoPKey: Equatable {
    /// Keys are equal when their public halves are (the same thumbprint and algorithm).
    public static func == (lhs: DPoPKey, rhs: DPoPKey) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.thumbprint == rhs.thumbprint
    }
}

extension DPoPKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The algorithm and thumbprint; never the private key.
    public var description: String { "DPoPKey(\(algorithm.rawValue), jkt \(thumbprint))" }

    public var debugDescription: String { description }

    /// Reflection shows the same as the description.
    public var customMirror: Mirror {
        Mirror(self, children: ["algorithm": algorithm.rawValue, "thumbprint": thumbprint], displayStyle: .struct)
    }
}
