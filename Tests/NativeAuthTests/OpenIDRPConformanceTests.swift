import Foundation
import HTTPTypes
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// The OpenID Foundation's relying-party certification tests (the Basic, Config and Dynamic
/// profiles of the code flow), each named by its test id and run against the sandbox set up to do
/// what that test's OP does. CONFORMANCE.md lists every id with its result, and says why the ones
/// without a test here do not apply to a native client.
///
/// Each refusal is checked for what the test asks: the sign-in fails with the reason named, and
/// nothing is stored.
@Suite(.testLogging) struct OpenIDRPConformanceTests {
    /// A relying party against a sandbox, in memory.
    struct RP {
        let sandbox: SandboxAuthorizationServer
        let auth: Authenticator
        let store: MemoryTokenStore
        let requests: NIOLockedValueBox<[HTTPRequest]>

        static func start(
            _ configuration: SandboxAuthorizationServer.Configuration = .init(autoApprove: true),
            client: (String, secret: String?) = (SandboxAuthorizationServer.Client.defaultID, nil),
            scopes: [String] = ["openid", "profile", "email"],
            adjust: (inout ProviderConfiguration) throws -> Void = { _ in }
        ) async throws -> RP {
            let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
            var provider = ProviderConfiguration(
                issuer: sandbox.issuer, clientID: client.0, clientSecret: client.secret, scopes: scopes)
            try adjust(&provider)
            let requests = NIOLockedValueBox<[HTTPRequest]>([])
            let store = MemoryTokenStore()
            let auth = Authenticator(
                provider: try GenericOIDCProvider(configuration: provider), store: store,
                transport: RecordingTransport(base: sandbox.transport, requests: requests))
            return RP(sandbox: sandbox, auth: auth, store: store, requests: requests)
        }

        func login(_ options: LoginOptions = LoginOptions()) async throws -> TokenSet {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport), options: options))
        }

        /// The sign-in is refused with an `id_token_invalid` error saying `reason`, and nothing is stored.
        func expectRefusal(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let error = await #expect(throws: AuthError.self, sourceLocation: sourceLocation) { try await login() }
            #expect(error?.code == .idTokenInvalid, "\(String(describing: error))", sourceLocation: sourceLocation)
            #expect(
                error?.message.contains(reason) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
            #expect(try await auth.currentTokens() == nil, "nothing stored", sourceLocation: sourceLocation)
        }

        func sent(to endpoint: SandboxAuthorizationServer.Endpoint) -> [HTTPRequest] {
            requests.withLockedValue { $0 }.filter { $0.url?.path == endpoint.rawValue }
        }
    }

    /// Records the requests the relying party sends, then sends them on.
    struct RecordingTransport: HTTPTransport {
        let base: any HTTPTransport
        let requests: NIOLockedValueBox<[HTTPRequest]>

        func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
            requests.withLockedValue { $0.append(request) }
            return try await base.send(request, body: body)
        }
    }

    /// A confidential client whose secret is as long as HS512's hash (RFC 7518 §3.2).
    static let secret = String(repeating: "s3cr3t-of-the-client-", count: 4)
    static let confidential = SandboxAuthorizationServer.Client(id: "confidential", secret: secret)

    static func signing(_ algorithm: SandboxAuthorizationServer.SigningAlgorithm, confidential: Bool = false)
        -> SandboxAuthorizationServer.Configuration
    {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true, signingAlgorithm: algorithm)
        if confidential { configuration.clients = [Self.confidential] }
        return configuration
    }

    // MARK: - Basic: response type and scopes

    @Test("rp-response_type-code") func responseTypeCode() async throws {
        let rp = try await RP.start()
        let tokens = try await rp.login()
        #expect(rp.sandbox.lastAuthorizationQuery.first(named: "response_type") == "code")
        #expect(tokens.subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    @Test("rp-scope-userinfo-claims") func scopeUserInfoClaims() async throws {
        let rp = try await RP.start()
        try await rp.login()
        let info = try await rp.auth.userInfo()
        #expect(info.email == "alice@example.test" && info.name == "Alice Example")
        await rp.sandbox.stop()
    }

    @Test("rp-userinfo-bearer-header") func userInfoBearerHeader() async throws {
        let rp = try await RP.start()
        let tokens = try await rp.login()
        _ = try await rp.auth.userInfo()
        let sent = try #require(rp.sent(to: .userInfo).last)
        #expect(sent.headerFields[.authorization] == "Bearer \(tokens.accessToken)")
        #expect(sent.method == .get, "the token is in the header, never in a body or query")
        await rp.sandbox.stop()
    }

    @Test("rp-userinfo-bad-sub-claim") func userInfoBadSubClaim() async throws {
        let rp = try await RP.start()
        try await rp.login()
        rp.sandbox.alterNextUserInfo(.claims(["sub": "someone-else"]))
        let error = await #expect(throws: AuthError.self) { try await rp.auth.userInfo() }
        #expect(error?.message.contains("not the signed-in") == true, "\(String(describing: error))")
        await rp.sandbox.stop()
    }

    // MARK: - Basic: nonce and ID token claims

    @Test("rp-nonce-invalid") func nonceInvalid() async throws {
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.claims(["nonce": "not-the-nonce-sent"]))
        try await rp.expectRefusal("nonce does not match")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-aud") func idTokenAudience() async throws {
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.claims(["aud": "another-client"]))
        try await rp.expectRefusal("does not contain the client id")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-iat") func idTokenIssuedAt() async throws {
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.claims(["iat": .null]))
        try await rp.expectRefusal("iat is missing")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-sub") func idTokenSubject() async throws {
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.claims(["sub": .null]))
        try await rp.expectRefusal("sub is missing")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-issuer-mismatch") func idTokenIssuerMismatch() async throws {
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.claims(["iss": "https://op.example/not-the-issuer"]))
        try await rp.expectRefusal("is not the issuer")
        await rp.sandbox.stop()
    }

    // MARK: - Basic: signatures

    @Test("rp-id_token-sig-rs256") func idTokenSignedRS256() async throws {
        let rp = try await RP.start(Self.signing(.rs256))
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-sig-es256") func idTokenSignedES256() async throws {
        let rp = try await RP.start(Self.signing(.es256))
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-sig-hs256") func idTokenSignedHS256() async throws {
        let rp = try await RP.start(Self.signing(.hs256, confidential: true), client: ("confidential", Self.secret))
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-sig-none") func idTokenUnsigned() async throws {
        // The test's OP may expect an unsigned token from the token endpoint to be accepted; NativeAuth
        // never accepts one (CONFORMANCE.md).
        let rp = try await RP.start()
        rp.sandbox.alterNextIDTokens(.unsigned)
        try await rp.expectRefusal("alg is \"none\"")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-bad-sig-rs256") func idTokenBadSignatureRS256() async throws {
        let rp = try await RP.start(Self.signing(.rs256))
        rp.sandbox.alterNextIDTokens(.badSignature)
        try await rp.expectRefusal("the signature does not verify")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-bad-sig-es256") func idTokenBadSignatureES256() async throws {
        let rp = try await RP.start(Self.signing(.es256))
        rp.sandbox.alterNextIDTokens(.badSignature)
        try await rp.expectRefusal("the signature does not verify")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-bad-sig-hs256") func idTokenBadSignatureHS256() async throws {
        let rp = try await RP.start(Self.signing(.hs256, confidential: true), client: ("confidential", Self.secret))
        rp.sandbox.alterNextIDTokens(.badSignature)
        try await rp.expectRefusal("does not verify with the client secret")
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-kid-absent-single-jwks") func idTokenWithoutKeyIDSingleKey() async throws {
        let rp = try await RP.start(Self.signing(.rs256))
        rp.sandbox.alterNextIDTokens(.withoutKeyID)
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    @Test("rp-id_token-kid-absent-multiple-jwks") func idTokenWithoutKeyIDSeveralKeys() async throws {
        // The test allows either outcome: trying every key, or refusing. NativeAuth refuses: which key
        // signed is ambiguous (RFC 8725 §3.1 would have the algorithm and key decided, not guessed).
        let rp = try await RP.start(Self.signing(.rs256))
        try rp.sandbox.rotateSigningKey(retainPrevious: true)
        rp.sandbox.alterNextIDTokens(.withoutKeyID)
        try await rp.expectRefusal("the signing key is ambiguous")
        await rp.sandbox.stop()
    }

    // MARK: - Basic: client authentication at the token endpoint

    @Test("rp-token_endpoint-client_secret_basic") func clientSecretBasic() async throws {
        let rp = try await RP.start(Self.signing(.es256, confidential: true), client: ("confidential", Self.secret)) {
            $0.clientAuthentication = .clientSecretBasic
        }
        try await rp.login()
        let sent = try #require(rp.sent(to: .token).last)
        #expect(sent.headerFields[.authorization]?.hasPrefix("Basic ") == true)
        await rp.sandbox.stop()
    }

    @Test("rp-token_endpoint-client_secret_post") func clientSecretPost() async throws {
        let rp = try await RP.start(Self.signing(.es256, confidential: true), client: ("confidential", Self.secret)) {
            $0.clientAuthentication = .clientSecretPost
        }
        try await rp.login()
        let sent = try #require(rp.sent(to: .token).last)
        #expect(sent.headerFields[.authorization] == nil, "the secret is in the form")
        await rp.sandbox.stop()
    }

    @Test("rp-token_endpoint-client_secret_jwt") func clientSecretJWT() async throws {
        let rp = try await RP.start(Self.signing(.es256, confidential: true), client: ("confidential", Self.secret)) {
            $0.clientAuthentication = .clientSecretJWT
        }
        try await rp.login()
        #expect(rp.sandbox.clientAssertionAudiences.count == 1)
        await rp.sandbox.stop()
    }

    @Test("rp-token_endpoint-private_key_jwt") func privateKeyJWT() async throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        var client = SandboxAuthorizationServer.Client(id: "keyed")
        client.assertionKeyPEM = pair.publicKeyPEM
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.clients = [client]
        let rp = try await RP.start(configuration, client: ("keyed", nil)) {
            $0.clientAssertionKey = try ClientAssertionKey(pair.privateKeyPEM)
        }
        try await rp.login()
        #expect(rp.sandbox.clientAssertionAudiences.count == 1)
        await rp.sandbox.stop()
    }

    // MARK: - Basic: signed and encrypted userinfo

    @Test("rp-userinfo-sig") func signedUserInfo() async throws {
        var configuration = Self.signing(.rs256)
        configuration.signsUserInfo = true
        let rp = try await RP.start(configuration)
        try await rp.login()
        #expect(try await rp.auth.userInfo().email == "alice@example.test")
        rp.sandbox.alterNextUserInfo(.badSignature)
        let tampered = await #expect(throws: AuthError.self) { try await rp.auth.userInfo() }
        #expect(
            tampered?.message.contains("the signed userinfo answer is refused") == true,
            "\(String(describing: tampered))")
        rp.sandbox.alterNextUserInfo(.unsigned)
        await #expect(throws: AuthError.self) { try await rp.auth.userInfo() }
        await rp.sandbox.stop()
    }

    @Test("rp-userinfo-enc") func encryptedUserInfo() async throws {
        let rp = try await RP.start()
        try await rp.login()
        rp.sandbox.failNext(
            1, .userInfo, with: .response(status: 200, contentType: "application/jwt", body: "a.b.c.d.e"))
        let error = await #expect(throws: AuthError.self) { try await rp.auth.userInfo() }
        #expect(error?.message.contains("it is encrypted (a JWE)") == true, "\(String(describing: error))")
        await rp.sandbox.stop()
    }

    // MARK: - Basic and Config: key rotation

    @Test("rp-key-rotation-op-sign-key") func opSigningKeyRotation() async throws {
        let rp = try await RP.start(Self.signing(.rs256))
        let first = try await rp.login()
        try rp.sandbox.rotateSigningKey(retainPrevious: false)
        let refreshed = try await rp.auth.refresh()
        #expect(refreshed.idToken != first.idToken && refreshed.subject == first.subject)
        #expect(rp.sandbox.requestCount(.jwks) == 2, "the JWKS fetched again for the new kid")
        await rp.sandbox.stop()
    }

    @Test("rp-key-rotation-op-sign-key-native") func opSigningKeyRotationKeepingTheOldKey() async throws {
        let rp = try await RP.start(Self.signing(.es256))
        try await rp.login()
        try rp.sandbox.rotateSigningKey(retainPrevious: true)
        let refreshed = try await rp.auth.refresh()
        #expect(refreshed.subject == SandboxAuthorizationServer.User.alice.subject)
        #expect(rp.sandbox.requestCount(.jwks) == 2)
        await rp.sandbox.stop()
    }

    // MARK: - Basic: claims

    @Test("rp-claims_request-id_token") func claimsRequest() async throws {
        let rp = try await RP.start()
        let claims: JSONObject = ["id_token": ["email": ["essential": true]]]
        try await rp.login(LoginOptions(claims: claims))
        let sent = try #require(rp.sandbox.lastAuthorizationQuery.first(named: "claims"))
        #expect(try JSONValue.parse(Data(sent.utf8)).objectValue == claims)
        await rp.sandbox.stop()
    }

    @Test("rp-claims_request-userinfo") func claimsRequestForUserInfo() async throws {
        let rp = try await RP.start()
        let claims: JSONObject = ["userinfo": ["email": ["essential": true]]]
        try await rp.login(LoginOptions(claims: claims))
        let sent = try #require(rp.sandbox.lastAuthorizationQuery.first(named: "claims"))
        #expect(try JSONValue.parse(Data(sent.utf8)).objectValue == claims)
        #expect(try await rp.auth.userInfo().email == "alice@example.test")
        await rp.sandbox.stop()
    }

    // MARK: - Config

    @Test("rp-discovery-openid-configuration") func discovery() async throws {
        let rp = try await RP.start()
        let metadata = try await rp.auth.metadata()
        #expect(metadata.tokenEndpoint == rp.sandbox.url(.token))
        #expect(rp.requests.withLockedValue { $0 }.first?.url?.path == "/.well-known/openid-configuration")
        await rp.sandbox.stop()
    }

    @Test("rp-discovery-jwks_uri-keys") func discoveryJWKSKeys() async throws {
        let rp = try await RP.start(Self.signing(.ps256))
        try await rp.login()
        #expect(rp.sent(to: .jwks).count == 1, "the keys came from the metadata's jwks_uri")
        await rp.sandbox.stop()
    }

    @Test("rp-discovery-issuer-not-matching-config") func discoveryIssuerMismatch() async throws {
        let rp = try await RP.start()
        let (_, body) = try await rp.sandbox.transport.send(
            HTTPRequest(method: .get, url: rp.sandbox.url(.discovery)), body: nil)
        var document = try #require(try JSONValue.parse(body).objectValue)
        document["issuer"] = "https://op.example/another"
        rp.sandbox.failNext(
            1, .discovery,
            with: .response(
                status: 200, contentType: "application/json", body: try JSONValue.object(document).encodedString()))
        let error = await #expect(throws: AuthError.self) { try await rp.login() }
        #expect(error?.message.contains("issuer") == true, "\(String(describing: error))")
        #expect(try await rp.auth.currentTokens() == nil)
        await rp.sandbox.stop()
    }

    // MARK: - Dynamic

    @Test("rp-registration-dynamic") func dynamicRegistration() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        var configuration = ProviderConfiguration(issuer: sandbox.issuer, clientID: "", scopes: ["openid"])
        configuration.registersClient = true
        let unregistered = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: sandbox.transport)
        let auth = try await unregistered.registeringClient(ClientMetadata(clientName: "conformance"))
        #expect(sandbox.requestCount(.registration) == 1)
        #expect(
            auth.provider.configuration.idTokenSigningAlgorithm == "ES256", "the registered algorithm, and no other")
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await auth.currentTokens()?.subject == SandboxAuthorizationServer.User.alice.subject)
        await sandbox.stop()
    }

    // MARK: - Every algorithm, and who may use HMAC

    /// Every asymmetric algorithm OpenID Connect names verifies, with `at_hash` under its own hash.
    @Test(arguments: [
        SandboxAuthorizationServer.SigningAlgorithm.rs384, .rs512, .ps384, .ps512, .es384, .es512, .edDSA,
    ])
    func everyAsymmetricAlgorithmVerifies(_ algorithm: SandboxAuthorizationServer.SigningAlgorithm) async throws {
        let rp = try await RP.start(Self.signing(algorithm))
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    /// HS384 and HS512 are keyed by the client secret, as HS256 is (OIDC Core §10.1).
    @Test(arguments: [SandboxAuthorizationServer.SigningAlgorithm.hs384, .hs512])
    func aConfidentialClientVerifiesHMACWithItsSecret(_ algorithm: SandboxAuthorizationServer.SigningAlgorithm)
        async throws
    {
        let rp = try await RP.start(Self.signing(algorithm, confidential: true), client: ("confidential", Self.secret))
        #expect(try await rp.login().subject == SandboxAuthorizationServer.User.alice.subject)
        await rp.sandbox.stop()
    }

    /// A public client has no secret to check an HMAC with: anyone could have made it.
    @Test func aPublicClientRefusesAnHMACSignedIDToken() async throws {
        let rp = try await RP.start(Self.signing(.hs256))
        try await rp.expectRefusal("a public client has no secret to check")
        await rp.sandbox.stop()
    }

    /// A provider narrows the algorithms; a registered `id_token_signed_response_alg` allows only itself.
    @Test func theRegisteredAlgorithmIsTheOnlyOneAccepted() async throws {
        let rp = try await RP.start(Self.signing(.rs512)) { $0.idTokenSigningAlgorithm = "RS256" }
        try await rp.expectRefusal("not the id_token_signed_response_alg the client is registered with (RS256)")
        await rp.sandbox.stop()
        let accepted = try await RP.start(Self.signing(.rs512)) { $0.idTokenSigningAlgorithm = "RS512" }
        try await accepted.login()
        await accepted.sandbox.stop()
    }

    /// An extra audience is refused unless the configuration trusts it (`trusted_audience`).
    @Test func anExtraAudienceIsAcceptedOnlyWhenTrusted() async throws {
        let extra: JSONObject = [
            "aud": [.string(SandboxAuthorizationServer.Client.defaultID), "https://api.example"],
            "azp": .string(SandboxAuthorizationServer.Client.defaultID),
        ]
        let untrusted = try await RP.start()
        untrusted.sandbox.alterNextIDTokens(.claims(extra))
        try await untrusted.expectRefusal("that are not trusted (https://api.example)")
        await untrusted.sandbox.stop()
        let trusted = try await RP.start {
            $0 = try ProviderConfiguration(json: [
                "issuer": .string($0.issuer?.absoluteString ?? ""), "client_id": .string($0.clientID),
                "scope": "openid", "trusted_audience": "https://api.example",
            ])
        }
        trusted.sandbox.alterNextIDTokens(.claims(extra))
        try await trusted.login()
        await trusted.sandbox.stop()
    }
}
