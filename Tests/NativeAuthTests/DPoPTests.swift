import Crypto
import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// DPoP (RFC 9449): the proofs' contents, tokens bound to a key of the sign-in's own, nonces at the
/// authorization server and at resources, and every refusal, against the in-process sandbox, which
/// checks each proof as §4.3 says.
@Suite(.testLogging) struct DPoPTests {
    func sandbox(
        _ algorithms: [String] = ["ES256"],
        _ change: (inout SandboxAuthorizationServer.Configuration) -> Void = { _ in }
    ) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.dpopSigningAlgorithms = algorithms
        change(&configuration)
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func authenticator(
        _ sandbox: SandboxAuthorizationServer, store: any TokenStore = MemoryTokenStore(),
        _ change: (inout ProviderConfiguration) -> Void = { _ in }
    ) throws -> Authenticator {
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile", "offline_access"])
        change(&configuration)
        return Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport)
    }

    func login(_ auth: Authenticator, _ sandbox: SandboxAuthorizationServer) async throws -> TokenSet {
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
    }

    /// The header and claims of a compact JWS.
    func decode(_ proof: String) throws -> (header: JSONObject, claims: JSONObject, input: Data, signature: Data) {
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try #require(try JSONValue.parse(try bytes(parts[0])).objectValue)
        let claims = try #require(try JSONValue.parse(try bytes(parts[1])).objectValue)
        return (header, claims, Data((parts[0] + "." + parts[1]).utf8), try bytes(parts[2]))
    }

    func bytes(_ text: (some StringProtocol)?) throws -> Data {
        try #require(text.flatMap { Base64URL.decode($0) })
    }

    @Test func aProofHasEveryFieldRFC9449AsksForAndVerifiesWithItsKey() throws {
        let key = try DPoPKey.generate()
        let url = try #require(URL(string: "https://api.example.test/v1/items?page=2#top"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try decode(try key.proof(method: "GET", url: url, accessToken: "the-token", nonce: "n-1", now: now))
        #expect(try first.header.string("typ") == "dpop+jwt")
        #expect(try first.header.string("alg") == "ES256")
        let jwk = try #require(try first.header.object("jwk"))
        #expect(jwk["d"] == nil, "the proof carries the public key only")
        #expect(try jwk.string("kty") == "EC")
        #expect(try jwk.string("crv") == "P-256")
        #expect(try first.claims.string("htm") == "GET")
        #expect(try first.claims.string("htu") == "https://api.example.test/v1/items", "no query, no fragment")
        #expect(try first.claims.integer("iat") == 1_800_000_000)
        #expect(try first.claims.string("nonce") == "n-1")
        let hash = Base64URL.encode(SHA256.hash(data: Data("the-token".utf8)))
        #expect(try first.claims.string("ath") == hash)
        #expect(try first.claims.string("jti")?.count ?? 0 >= 22)

        // The signature verifies with the jwk, whose RFC 7638 thumbprint is the key's.
        let x = try bytes(try jwk.string("x"))
        let y = try bytes(try jwk.string("y"))
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: x + y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: first.signature)
        #expect(publicKey.isValidSignature(signature, for: first.input))
        let canonical =
            #"{"crv":"P-256","kty":"EC","x":""# + (try jwk.string("x") ?? "") + #"","y":""#
            + (try jwk.string("y") ?? "") + #""}"#
        #expect(key.thumbprint == Base64URL.encode(SHA256.hash(data: Data(canonical.utf8))))

        // A token request's proof has no ath and no nonce; every proof has its own jti.
        let second = try decode(try key.proof(method: "POST", url: url, now: now))
        #expect(second.claims["ath"] == nil)
        #expect(second.claims["nonce"] == nil)
        #expect(try second.claims.string("jti") != first.claims.string("jti"))

        // Printing the key shows its thumbprint, never the private key; the stored form reads back.
        let stored = try #require(key.storageJSON.objectValue)
        let privateKey = try #require(try stored.string("key"))
        #expect(!"\(key)".contains(privateKey))
        #expect(!String(reflecting: key).contains(privateKey))
        #expect(try DPoPKey(storageJSON: stored) == key)
    }

    @Test(arguments: ["ES256", "EdDSA", "RS256"])
    func aSignInBindsItsTokensToAKeyOfItsOwnInTheServersAlgorithm(algorithm: String) async throws {
        let sandbox = try await sandbox([algorithm])
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/tokens")
        let auth = try authenticator(sandbox, store: store)
        let tokens = try await login(auth, sandbox)
        #expect(tokens.tokenType == "DPoP")
        let key = try #require(tokens.dpopKey)
        #expect(key.algorithm.rawValue == algorithm)
        #expect(sandbox.lastAuthorizationQuery.first(named: "dpop_jkt") == key.thumbprint)
        #expect(!"\(tokens)".contains(try #require(key.storageJSON.objectValue?["key"]?.stringValue)))

        // Another process (its own authenticator, the same store) signs with the same key.
        let other = try authenticator(sandbox, store: store)
        let (response, _) = try await other.send(HTTPRequest(method: .get, url: sandbox.url(.resource)))
        #expect(response.status.code == 200)
        let proofs = sandbox.dpopProofs
        #expect(proofs.count == 2, "one at the token endpoint, one at the resource")
        let resourceProof = try decode(try #require(proofs.last))
        #expect(try resourceProof.claims.string("htu") == sandbox.url(.resource).absoluteString)
        #expect(resourceProof.claims["ath"] != nil)
        #expect(try resourceProof.header.object("jwk") == decode(try #require(proofs.first)).header.object("jwk"))

        // A refresh spends the bound refresh token with a proof of the same key; the key stays.
        let refreshed = try await other.refresh()
        #expect(refreshed.dpopKey == key)
        #expect(refreshed.tokenType == "DPoP")
        #expect(sandbox.grantCount(.refreshToken) == 1)
        #expect(sandbox.dpopRefusals.isEmpty, "\(sandbox.dpopRefusals)")
        await sandbox.stop()
    }

    @Test func aDPoPTokenSentAsABearerTokenIsRefusedByTheSandbox() async throws {
        let sandbox = try await sandbox()
        let auth = try authenticator(sandbox)
        let tokens = try await login(auth, sandbox)
        var request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        request.headerFields[.authorization] = "Bearer \(tokens.accessToken)"
        let (response, _) = try await sandbox.transport.send(request, body: nil)
        #expect(response.status.code == 401)
        // Nor with a proof of another key.
        let stranger = try DPoPKey.generate()
        request.headerFields[.authorization] = "DPoP \(tokens.accessToken)"
        request.headerFields[.dpop] = try stranger.proof(
            method: "GET", url: sandbox.url(.resource), accessToken: tokens.accessToken, now: Date())
        #expect(try await sandbox.transport.send(request, body: nil).0.status.code == 401)
        await sandbox.stop()
    }

    @Test func aNonceAskedForAtTheServerAndAtTheResourceIsRetriedOnceEach() async throws {
        let sandbox = try await sandbox { $0.requiresDPoPNonce = true }
        let auth = try authenticator(sandbox)
        _ = try await login(auth, sandbox)
        #expect(sandbox.requestCount(.token) == 2, "use_dpop_nonce, then the code with the nonce")
        #expect(sandbox.errorCount("use_dpop_nonce") == 1)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        // The resource shares the server's nonce here (one origin): remembered, it is used at once.
        #expect(try await auth.send(request).0.status.code == 200)
        #expect(sandbox.requestCount(.resource) == 1)

        // A new nonce: one refusal, one retry, at the resource and at the token endpoint.
        sandbox.rotateDPoPNonce()
        #expect(try await auth.send(request).0.status.code == 200)
        #expect(sandbox.requestCount(.resource) == 3)
        sandbox.rotateDPoPNonce()
        _ = try await auth.refresh()
        #expect(sandbox.requestCount(.token) == 4)
        #expect(sandbox.grantCount(.refreshToken) == 2)
        #expect(sandbox.refreshCount(subject: SandboxAuthorizationServer.User.alice.subject) == 1)
        let proof = try decode(try #require(sandbox.dpopProofs.last))
        #expect(try proof.claims.string("nonce") == sandbox.dpopNonce)
        await sandbox.stop()
    }

    @Test func aReplayedOrStaleProofIsRefusedAndTheClientRecoversWithAFreshOne() async throws {
        let sandbox = try await sandbox()
        let auth = try authenticator(sandbox)
        sandbox.refuseNextDPoPProofs(1, as: .replayed)
        _ = try await login(auth, sandbox)
        #expect(sandbox.requestCount(.token) == 2)
        sandbox.refuseNextDPoPProofs(1, as: .stale)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        #expect(try await auth.send(request).0.status.code == 200)
        #expect(sandbox.requestCount(.resource) == 2)
        let jtis = try sandbox.dpopProofs.map { try decode($0).claims.string("jti") }
        #expect(Set(jtis).count == jtis.count, "every proof sent was new")

        // Refused twice: an error, and no refresh (a refresh cannot mend a proof).
        sandbox.refuseNextDPoPProofs(2, as: .stale)
        let error = await #expect(throws: AuthError.self) { try await auth.send(request) }
        #expect(error?.code == .invalidToken, "\(String(describing: error))")
        #expect(sandbox.grantCount(.refreshToken) == 0)
        sandbox.refuseNextDPoPProofs(2, as: .replayed)
        let refused = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(refused?.oauthError == "invalid_dpop_proof", "\(String(describing: refused))")
        #expect(try await auth.send(request).0.status.code == 200, "the stored tokens are untouched")
        await sandbox.stop()
    }

    @Test func aBearerAnswerIsRefusedWhenDPoPIsRequiredAndKeptOtherwise() async throws {
        let sandbox = try await sandbox { $0.answersBearerToDPoP = true }
        let store = MemoryTokenStore()
        let strict = try authenticator(sandbox, store: store) { $0.dpop = .required }
        let error = await #expect(throws: AuthError.self) { try await login(strict, sandbox) }
        #expect(error?.code == .tokenExchangeFailed)
        #expect(error?.message.contains("requires DPoP") == true, "\(String(describing: error))")
        #expect(try await store.load(strict.key) == nil, "nothing was stored")

        let lenient = try authenticator(sandbox)
        let tokens = try await login(lenient, sandbox)
        #expect(tokens.tokenType == "Bearer")
        #expect(tokens.dpopKey != nil, "kept for the refresh token")
        #expect(try await lenient.send(HTTPRequest(method: .get, url: sandbox.url(.resource))).0.status.code == 200)
        await sandbox.stop()
    }

    @Test func aMalformedOrMissingNonceIsAClearErrorAndStoresNothing() async throws {
        let sandbox = try await sandbox { $0.requiresDPoPNonce = true }
        let store = MemoryTokenStore()
        let auth = try authenticator(sandbox, store: store)
        sandbox.failNext(1, .token, with: .addingHeaders([("DPoP-Nonce", "has space\u{7F}")]))
        let error = await #expect(throws: AuthError.self) { try await login(auth, sandbox) }
        #expect(error?.code == .responseMalformed)
        #expect(error?.message.contains("DPoP-Nonce") == true, "\(String(describing: error))")
        #expect(try await store.load(auth.key) == nil)

        // use_dpop_nonce without a new nonce.
        sandbox.failNext(1, .token, with: .oauthError("use_dpop_nonce"))
        let missing = await #expect(throws: AuthError.self) { try await login(auth, sandbox) }
        #expect(missing?.code == .responseMalformed)
        #expect(sandbox.requestCount(.token) == 2, "no retry without a nonce")
        #expect(try await store.load(auth.key) == nil)
        await sandbox.stop()
    }

    @Test func dpopIsOffWhenTheServerDoesNotAnnounceItOrTheConfigurationSaysSo() async throws {
        let plain = try await sandbox([])
        let tokens = try await login(try authenticator(plain), plain)
        #expect(tokens.tokenType == "Bearer")
        #expect(tokens.dpopKey == nil)
        #expect(plain.lastAuthorizationQuery.first(named: "dpop_jkt") == nil)
        await plain.stop()

        let announcing = try await sandbox()
        let off = try await login(try authenticator(announcing) { $0.dpop = .disabled }, announcing)
        #expect(off.dpopKey == nil)
        #expect(announcing.dpopProofs.isEmpty)
        await announcing.stop()

        // Required of a server that takes only algorithms NativeAuth does not sign with: a clear error.
        let odd = try await sandbox(["PS512"])
        let error = await #expect(throws: AuthError.self) {
            try await login(try authenticator(odd) { $0.dpop = .required }, odd)
        }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.field == "dpop")
        #expect(odd.requestCount(.authorization) == 0)
        await odd.stop()
    }

    @Test func clientCredentialsAndTheirRenewalAreBoundToOneKey() async throws {
        let secret = "dpop-service-secret-0123456789abcdef"
        let sandbox = try await sandbox {
            $0.clients.append(SandboxAuthorizationServer.Client(id: "service", secret: secret))
        }
        let auth = try authenticator(sandbox) {
            $0.clientID = "service"
            $0.clientSecret = secret
            $0.scopes = ["api"]
        }
        let tokens = try await auth.login(.clientCredentials)
        #expect(tokens.tokenType == "DPoP")
        try await auth.expireAccessToken()
        #expect(try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource))).0.status.code == 200)
        #expect(sandbox.grantCount(.clientCredentials) == 2)
        #expect(try await auth.currentTokens()?.dpopKey == tokens.dpopKey)
        await sandbox.stop()
    }

    @Test func theConfigurationReadsDPoPAndPAR() throws {
        let configuration = try ProviderConfiguration(json: [
            "client_id": "c", "dpop": "required", "pushed_authorization_requests": "off",
        ])
        #expect(configuration.dpop == .required)
        #expect(configuration.pushedAuthorizationRequests == .disabled)
        #expect(try ProviderConfiguration(json: ["client_id": "c"]).dpop == .automatic)
        let error = #expect(throws: AuthError.self) {
            try ProviderConfiguration(json: ["client_id": "c", "dpop": "yes"])
        }
        #expect(error?.field == "dpop")
    }
}
