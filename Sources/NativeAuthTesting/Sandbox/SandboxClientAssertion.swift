import Crypto
import CryptoExtras
import Foundation
import LenientJSON
import NIOConcurrencyHelpers
import NativeAuth

extension SandboxAuthorizationServer {
    /// A key pair for a client that authenticates with `private_key_jwt`: the private half (PEM,
    /// PKCS#8) for NativeAuth, the public half (PEM) for ``Client/assertionKeyPEM``.
    public struct ClientKeyPair: Sendable {
        /// The JWS algorithm the pair signs with.
        public enum Algorithm: String, Sendable, CaseIterable {
            /// ECDSA with P-256 and SHA-256.
            case es256 = "ES256"
            /// RSA (2048 bits) with PKCS #1 v1.5 and SHA-256.
            case rs256 = "RS256"
            /// Ed25519.
            case eddsa = "EdDSA"
        }

        /// The algorithm.
        public let algorithm: Algorithm
        /// The private key, `BEGIN PRIVATE KEY`.
        public let privateKeyPEM: String
        /// The public key, `BEGIN PUBLIC KEY`.
        public let publicKeyPEM: String

        /// Makes a new key pair.
        ///
        /// - Parameter algorithm: The algorithm.
        public init(_ algorithm: Algorithm) throws {
            self.algorithm = algorithm
            switch algorithm {
            case .es256:
                let key = P256.Signing.PrivateKey()
                privateKeyPEM = key.pemRepresentation
                publicKeyPEM = key.publicKey.pemRepresentation
            case .rs256:
                let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                privateKeyPEM = key.pemRepresentation
                publicKeyPEM = key.publicKey.pemRepresentation
            case .eddsa:
                let key = Curve25519.Signing.PrivateKey()
                privateKeyPEM = key.pemRepresentation
                publicKeyPEM = key.publicKey.pemRepresentation
            }
        }
    }
}

extension SandboxCore {
    /// The audiences an assertion may name: the token endpoint (or its mutual-TLS alias), or the issuer.
    private var assertionAudiences: [String] {
        let issuer = issuer
        return [issuer + Endpoint.token.rawValue, issuer + "/mtls" + Endpoint.token.rawValue, issuer]
    }

    /// The client a `client_assertion` (RFC 7523 §2.2) proves, or why it proves nothing.
    ///
    /// `private_key_jwt` (ES256, RS256, EdDSA) verifies with the client's ``Client/assertionKeyPEM``,
    /// `client_secret_jwt` (HS256) with its secret. Each assertion counts once: its `jti` is kept.
    func client(
        fromAssertion assertion: String,
        type: String?,
        clientID: String?
    ) -> Result<SandboxAuthorizationServer.Client, AssertionFailure> {
        guard type == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" else {
            return .failure(
                .init("client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
        }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let (header, claims) = JOSEParsing.parts(ofCompactJWS: assertion),
            let signature = Base64URL.decode(parts[2])
        else { return .failure(.init("the client assertion is not a compact JWS")) }
        guard let issuer = (try? claims.string("iss")) ?? nil, (try? claims.string("sub")) ?? nil == issuer,
            let client = client(issuer)
        else { return .failure(.init("the assertion's iss and sub must both be a known client's id")) }
        if let clientID, clientID != issuer {
            return .failure(.init("client_id does not match the assertion's iss"))
        }
        let input = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        let algorithm = (try? header.string("alg")) ?? nil
        guard verify(signature, of: input, algorithm: algorithm ?? "", client: client) else {
            return .failure(.init("the client assertion's signature does not verify (alg \(algorithm ?? "none"))"))
        }
        let audiences: [String]
        if let single = (try? claims.string("aud")) ?? nil {
            audiences = [single]
        } else {
            audiences = ((try? claims.stringList("aud")) ?? nil) ?? []
        }
        guard audiences.contains(where: assertionAudiences.contains) else {
            return .failure(.init("the assertion's aud is not this server's token endpoint or issuer"))
        }
        let now = now.timeIntervalSince1970
        guard let expiry = (try? claims.integer("exp")) ?? nil, Double(expiry) > now else {
            return .failure(.init("the client assertion has expired (or has no exp)"))
        }
        guard Double(expiry) <= now + 300 else {
            return .failure(.init("the client assertion lives too long (exp more than 5 minutes away)"))
        }
        guard let jti = (try? claims.string("jti")) ?? nil, !jti.isEmpty else {
            return .failure(.init("the client assertion has no jti"))
        }
        let fresh = state.withLockedValue { $0.usedAssertionIDs.insert(issuer + " " + jti).inserted }
        guard fresh else { return .failure(.init("the client assertion was already used (jti replayed)")) }
        return .success(client)
    }

    private func verify(_ signature: Data, of input: Data, algorithm: String, client: SandboxAuthorizationServer.Client)
        -> Bool
    {
        if algorithm == "HS256" {
            guard let secret = client.secret else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(
                signature, authenticating: input, using: SymmetricKey(data: Data(secret.utf8)))
        }
        guard let pem = client.assertionKeyPEM else { return false }
        switch algorithm {
        case "ES256":
            guard let key = try? P256.Signing.PublicKey(pemRepresentation: pem),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: input)
        case "RS256":
            guard let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem) else { return false }
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        case "EdDSA":
            guard let key = try? Curve25519.Signing.PublicKey(pemRepresentation: pem) else { return false }
            return key.isValidSignature(signature, for: input)
        default:
            return false
        }
    }

    struct AssertionFailure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Client credentials (RFC 6749 §4.4), for a confidential client: tokens for the client itself,
    /// with no refresh token and no ID token.
    func clientCredentials(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?)
        -> TestResponse
    {
        guard client.secret != nil || client.assertionKeyPEM != nil || client.certificateThumbprint != nil else {
            return oauthError("unauthorized_client", "a public client cannot use client credentials")
        }
        let scopes = (form.first(named: "scope") ?? "").split(separator: " ").map(String.init)
        if scopes.contains("openid") {
            return oauthError("invalid_scope", "openid asks for a person; client credentials have none")
        }
        let authorization = Authorization(
            clientID: client.id, subject: client.id, scopes: scopes, authTime: now, nonce: nil,
            family: SecureRandom.token(), certificateThumbprint: binding)
        return issueTokens(authorization, includeNonce: false, newRefreshToken: false)
    }
}
