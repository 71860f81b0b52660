import Crypto
import CryptoExtras
public import Foundation
import LenientJSON
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
        return [url(.token), state.withLock { $0.host } + "/mtls" + dialect.path(.token), issuer]
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
        var found: SandboxAuthorizationServer.Client?
        let checked = verifiedClaims(of: assertion, "the client assertion") { header, claims, signature, input in
            guard let issuer = (try? claims.string("iss")) ?? nil, (try? claims.string("sub")) ?? nil == issuer,
                let client = client(issuer)
            else { return AssertionFailure("the assertion's iss and sub must both be a known client's id") }
            if let clientID, clientID != issuer {
                return AssertionFailure("client_id does not match the assertion's iss")
            }
            let algorithm = (try? header.string("alg")) ?? nil
            guard verify(signature, of: input, algorithm: algorithm ?? "", client: client) else {
                return AssertionFailure("the client assertion's signature does not verify (alg \(algorithm ?? "none"))")
            }
            found = client
            return nil
        }
        let claims: JSONObject
        switch checked {
        case .success(let value): claims = value
        case .failure(let failure): return .failure(failure)
        }
        guard let client = found, let expiry = (try? claims.integer("exp")) ?? nil,
            Double(expiry) <= now.timeIntervalSince1970 + 300
        else {
            return .failure(.init("the client assertion lives too long (exp more than 5 minutes away)"))
        }
        guard let jti = (try? claims.string("jti")) ?? nil, !jti.isEmpty else {
            return .failure(.init("the client assertion has no jti"))
        }
        let audience = ((try? claims.string("aud")) ?? nil) ?? ""
        let fresh = state.withLock { state in
            guard state.usedAssertionIDs.insert(client.id + " " + jti).inserted else { return false }
            state.clientAssertionAudiences.append(audience)
            return true
        }
        guard fresh else { return .failure(.init("the client assertion was already used (jti replayed)")) }
        return .success(client)
    }

    /// The claims of a compact JWS once `check` (the issuer and signature) passes, its `aud` names
    /// this server and its `exp` is still ahead; `what` names it in the failures.
    private func verifiedClaims(
        of token: String,
        _ what: String,
        check: (_ header: JSONObject, _ claims: JSONObject, _ signature: Data, _ input: Data) -> AssertionFailure?
    ) -> Result<JSONObject, AssertionFailure> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let (header, claims) = JOSEParsing.parts(ofCompactJWS: token),
            let signature = Base64URL.decode(parts[2])
        else { return .failure(.init("\(what) is not a compact JWS")) }
        let input = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        if let failure = check(header, claims, signature, input) { return .failure(failure) }
        let audiences =
            ((try? claims.string("aud")) ?? nil).map { [$0] } ?? ((try? claims.stringList("aud")) ?? nil) ?? []
        guard audiences.contains(where: assertionAudiences.contains) else {
            return .failure(.init("\(what)'s aud is not this server's token endpoint or issuer"))
        }
        guard let expiry = (try? claims.integer("exp")) ?? nil, Double(expiry) > now.timeIntervalSince1970 else {
            return .failure(.init("\(what) has expired (or has no exp)"))
        }
        return .success(claims)
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
        return issueTokens(authorization, includeNonce: false, newRefreshToken: false, form: form)
    }
}

extension SandboxAuthorizationServer {
    /// An identity provider whose tokens the sandbox trusts as the subject of a token exchange
    /// (RFC 8693) and as JWT bearer grants (RFC 7523 §2.1): a stand-in for a Kubernetes cluster's
    /// service-account issuer or a CI provider's OIDC issuer. Its tokens are ES256 JWTs.
    public struct FederatedIssuer: Sendable {
        /// Its `iss`.
        public let issuer: String
        let key: P256.Signing.PrivateKey

        /// Makes an issuer with a new key.
        ///
        /// - Parameter issuer: Its `iss`, like `https://kubernetes.default.svc`.
        public init(issuer: String) {
            self.issuer = issuer
            self.key = P256.Signing.PrivateKey()
        }

        /// Makes an issuer that signs with a P-256 key it is given (a real server's trusted key).
        ///
        /// - Parameters:
        ///   - issuer: Its `iss`.
        ///   - privateKeyPEM: The key, PEM (PKCS #8 or SEC 1).
        public init(issuer: String, privateKeyPEM: String) throws {
            self.issuer = issuer
            self.key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        }

        /// A token it signs.
        ///
        /// - Parameters:
        ///   - subject: `sub`, the workload (`system:serviceaccount:ns:name`).
        ///   - audience: `aud`: the sandbox's issuer (or its token endpoint) for the sandbox to take it.
        ///   - issuedAt: `iat`; `exp` is `lifetime` later.
        ///   - lifetime: How long it is good for.
        public func token(
            subject: String,
            audience: String,
            issuedAt: Date = Date(),
            lifetime: TimeInterval = 600
        ) throws -> String {
            let issued = Int64(issuedAt.timeIntervalSince1970)
            let claims: JSONObject = [
                "iss": .string(issuer), "sub": .string(subject), "aud": .string(audience), "iat": .integer(issued),
                "exp": .integer(issued + Int64(lifetime)), "jti": .string(SecureRandom.token()),
            ]
            let header: JSONObject = ["alg": "ES256", "typ": "JWT"]
            let input =
                Base64URL.encode(try JSONValue.object(header).encoded()) + "."
                + Base64URL.encode(try JSONValue.object(claims).encoded())
            let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
            let token = input + "." + Base64URL.encode(signature)
            IssuedSecrets.record([token])
            return token
        }
    }
}

extension SandboxCore {
    /// The subject of a federated token (`sub`), or why it is no good: signed by a trusted
    /// issuer's key, for this server (`aud`), not expired.
    func federatedSubject(of token: String) -> Result<String, AssertionFailure> {
        let checked = verifiedClaims(of: token, "the token") { header, claims, signature, input in
            guard let issuer = (try? claims.string("iss")) ?? nil,
                let trusted = configuration.federatedIssuers.first(where: { $0.issuer == issuer })
            else { return AssertionFailure("the token's issuer is not trusted here") }
            guard (try? header.string("alg")) ?? nil == "ES256",
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                trusted.key.publicKey.isValidSignature(parsed, for: input)
            else { return AssertionFailure("the token's signature does not verify") }
            return nil
        }
        let claims: JSONObject
        switch checked {
        case .success(let value): claims = value
        case .failure(let failure): return .failure(failure)
        }
        guard let subject = (try? claims.string("sub")) ?? nil, !subject.isEmpty else {
            return .failure(.init("the token has no sub"))
        }
        return .success(subject)
    }

    /// A token exchange (RFC 8693): a federated subject token (and actor token, when given) for
    /// this server's access token, `issued_token_type` saying so.
    func tokenExchange(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?)
        -> TestResponse
    {
        let jwtTypes = ["urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token"]
        guard let subjectToken = form.first(named: "subject_token"),
            let type = form.first(named: "subject_token_type")
        else { return oauthError("invalid_request", "subject_token and subject_token_type are required") }
        guard jwtTypes.contains(type) else {
            return oauthError("invalid_request", "the sandbox exchanges JWT subject tokens only")
        }
        if form.first(named: "actor_token") != nil, form.first(named: "actor_token_type") == nil {
            return oauthError("invalid_request", "actor_token_type is required with actor_token")
        }
        let subject: String
        switch federatedSubject(of: subjectToken) {
        case .success(let value): subject = value
        case .failure(let failure): return oauthError("invalid_grant", "subject_token: " + failure.reason)
        }
        if let actor = form.first(named: "actor_token"), case .failure(let failure) = federatedSubject(of: actor) {
            return oauthError("invalid_grant", "actor_token: " + failure.reason)
        }
        return issueFederated(subject: subject, form: form, client: client, binding: binding, exchange: true)
    }

    /// A JWT bearer grant (RFC 7523 §2.1): a federated JWT as the grant.
    func jwtBearer(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?) -> TestResponse {
        guard let assertion = form.first(named: "assertion") else {
            return oauthError("invalid_request", "assertion is required")
        }
        switch federatedSubject(of: assertion) {
        case .success(let subject):
            return issueFederated(subject: subject, form: form, client: client, binding: binding, exchange: false)
        case .failure(let failure):
            return oauthError("invalid_grant", "assertion: " + failure.reason)
        }
    }

    private func issueFederated(
        subject: String,
        form: [FormField],
        client: SandboxAuthorizationServer.Client,
        binding: String?,
        exchange: Bool
    ) -> TestResponse {
        let scopes = (form.first(named: "scope") ?? "").split(separator: " ").map(String.init)
        if scopes.contains("openid") {
            return oauthError("invalid_scope", "openid asks for a person's sign-in; a workload has none")
        }
        state.withLock { $0.federatedSubjects.append(subject) }
        let authorization = Authorization(
            clientID: client.id, subject: subject, scopes: scopes, authTime: now, nonce: nil,
            family: SecureRandom.token(), certificateThumbprint: binding)
        return issueTokens(
            authorization, includeNonce: false, newRefreshToken: false, form: form,
            extra: exchange ? ["issued_token_type": "urn:ietf:params:oauth:token-type:access_token"] : [:])
    }
}
