import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// The client credentials grant (RFC 6749 §4.4) and the signed client authentication of RFC 7523
/// §2.2 (`private_key_jwt`, `client_secret_jwt`), against the in-process sandbox, which verifies
/// every assertion's signature, `iss`/`sub`, `aud`, `exp` and `jti`.
@Suite(.testLogging) struct ClientCredentialsTests {
    static let serviceID = "sandbox-service"
    static let serviceSecret = "sandbox-service-secret-0123456789"

    func sandbox(_ clients: [SandboxAuthorizationServer.Client], lifetime: Duration = .seconds(3600)) async throws
        -> SandboxAuthorizationServer
    {
        try await SandboxAuthorizationServer.start(
            .init(clients: clients, accessTokenLifetime: lifetime), mode: .inMemory)
    }

    func authenticator(
        _ sandbox: SandboxAuthorizationServer,
        _ configuration: ProviderConfiguration,
        store: any TokenStore = MemoryTokenStore()
    ) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport)
    }

    /// A private key file only its owner may read, in a fresh directory.
    func keyFile(_ pem: String, mode: Int = 0o600) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nativeauth-key-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("client.pem").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(pem.utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test func aSecretGetsRenewableTokensRenewedOnceForEveryWaitingCaller() async throws {
        let sandbox = try await sandbox([.init(id: Self.serviceID, secret: Self.serviceSecret)])
        let store = MemoryTokenStore()
        let auth = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, clientSecret: Self.serviceSecret,
                scopes: ["openid", "api"]),
            store: store)
        let tokens = try await auth.login(.clientCredentials)
        #expect(tokens.renewableGrant == .clientCredentials)
        #expect(tokens.refreshToken == nil)
        #expect(tokens.idToken == nil)
        #expect(tokens.subject == Self.serviceID)
        #expect(tokens.scopes == ["api"], "openid is left out: there is no person")
        #expect(sandbox.grantCount(.clientCredentials) == 1)

        let (response, body) = try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource)))
        #expect(response.status.code == 200)
        #expect(try JSONValue.parse(body).objectValue?.string("sub") == Self.serviceID)

        // Expired: 100 callers at once, one new token request.
        try await auth.expireAccessToken()
        let fresh = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await auth.accessToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(fresh.count == 1)
        #expect(fresh.first != tokens.accessToken)
        #expect(sandbox.grantCount(.clientCredentials) == 2)
        #expect(sandbox.grantCount(.refreshToken) == 0)
        let stored = try #require(await store.load(auth.key))
        #expect(stored.renewableGrant == .clientCredentials)
        #expect(stored.accessToken == fresh.first)
        #expect(stored.subject == Self.serviceID)
        await sandbox.stop()
    }

    @Test func aRefusedTokenIsRenewedAndTheRequestRetriedOnce() async throws {
        let sandbox = try await sandbox([.init(id: Self.serviceID, secret: Self.serviceSecret)])
        let auth = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, clientSecret: Self.serviceSecret, scopes: []))
        let tokens = try await auth.login(.clientCredentials)
        // The server forgets the token (revoked): the 401 renews it, and the retry succeeds.
        let revocation = HTTPRequest(method: .post, url: sandbox.url(.revocation))
        _ = try await sandbox.transport.send(
            revocation.withFormContent,
            body: Data(
                FormURLEncoding.encode([
                    FormField("token", tokens.accessToken), FormField("client_id", Self.serviceID),
                    FormField("client_secret", Self.serviceSecret),
                ]).utf8))
        let (response, _) = try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource)))
        #expect(response.status.code == 200)
        #expect(sandbox.grantCount(.clientCredentials) == 2)
        await sandbox.stop()
    }

    @Test func aStoredRenewableSetLoadsBackEqual() throws {
        let tokens = TokenSet(
            accessToken: "at", scopes: ["api"], expiresAt: Date(timeIntervalSince1970: 2_000_000_000),
            issuedAt: Date(timeIntervalSince1970: 1_999_996_400), subject: "svc", renewableGrant: .clientCredentials)
        let object = try #require(tokens.storageJSON.objectValue)
        #expect(try object.string("grant_type") == "client_credentials")
        #expect(try TokenSet(storageJSON: object) == tokens)
        #expect("\(tokens)".contains("renewed by client_credentials"))
    }

    @Test func aPublicClientIsRefusedWithTheServersReasonAndNothingIsStored() async throws {
        let sandbox = try await sandbox([.init(id: "public-client")])
        let store = MemoryTokenStore()
        let auth = try authenticator(
            sandbox, ProviderConfiguration(issuer: sandbox.issuer, clientID: "public-client", scopes: []),
            store: store)
        let error = try await #require(throws: AuthError.self) { try await auth.login(.clientCredentials) }
        #expect(error.code == .configurationInvalid, "the client's registration does not allow it")
        #expect(error.oauthError == "unauthorized_client")
        #expect(await store.keys().isEmpty)
        await sandbox.stop()
    }

    // MARK: - private_key_jwt and client_secret_jwt

    @Test(arguments: SandboxAuthorizationServer.ClientKeyPair.Algorithm.allCases)
    func privateKeyJWTSignsAFreshAssertionForEachRequest(algorithm: SandboxAuthorizationServer.ClientKeyPair.Algorithm)
        async throws
    {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(algorithm)
        var client = SandboxAuthorizationServer.Client(id: Self.serviceID)
        client.assertionKeyPEM = pair.publicKeyPEM
        let sandbox = try await sandbox([client])
        // As a configuration file or the command line gives it: a path.
        let configuration = try ProviderConfiguration(
            json: [
                "issuer": .string(sandbox.issuer.absoluteString), "client_id": .string(Self.serviceID),
                "scope": "api", "client_assertion_key": .string(try keyFile(pair.privateKeyPEM)),
            ])
        #expect(configuration.clientAssertionKey?.algorithm == algorithm.rawValue)
        let auth = try authenticator(sandbox, configuration)
        try await auth.login(.clientCredentials)
        // A second request signs a new assertion: the sandbox refuses a jti it has seen.
        try await auth.expireAccessToken()
        _ = try await auth.accessToken()
        #expect(sandbox.grantCount(.clientCredentials) == 2)
        #expect(sandbox.errorCount("invalid_client") == 0)
        await sandbox.stop()
    }

    @Test func theAssertionNamesTheClientTheTokenEndpointAndLivesAMinute() async throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        let configuration = ProviderConfiguration(
            clientID: "svc",
            clientAssertionKey: try ClientAssertionKey(pair.privateKeyPEM, keyID: "key-1"))
        let endpoint = try #require(URL(string: "https://id.example/token"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try await ClientAssertion.make(
            .privateKeyJWT, configuration: configuration, audience: endpoint, now: now)
        let second = try await ClientAssertion.make(
            .privateKeyJWT, configuration: configuration, audience: endpoint, now: now)
        let (header, claims) = try #require(JOSEParsing.parts(ofCompactJWS: first))
        #expect(try header.string("alg") == "ES256")
        #expect(try header.string("kid") == "key-1")
        #expect(try claims.string("iss") == "svc")
        #expect(try claims.string("sub") == "svc")
        #expect(try claims.string("aud") == endpoint.absoluteString)
        #expect(try claims.integer("iat") == 1_800_000_000)
        #expect(try claims.integer("exp") == 1_800_000_060)
        let otherClaims = try #require(JOSEParsing.parts(ofCompactJWS: second)).claims
        #expect(try claims.string("jti") != otherClaims.string("jti"))
        #expect(try (claims.string("jti") ?? "").count >= 22)
    }

    @Test func theAssertionNamesTheIssuerWhereTheConfigurationAsks() async throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        var client = SandboxAuthorizationServer.Client(id: Self.serviceID)
        client.assertionKeyPEM = pair.publicKeyPEM
        let sandbox = try await sandbox([client])
        var object: JSONObject = [
            "issuer": .string(sandbox.issuer.absoluteString), "client_id": .string(Self.serviceID),
            "client_assertion_audience": "issuer",
        ]
        var configuration = try ProviderConfiguration(json: object)
        configuration.clientAssertionKey = try ClientAssertionKey(pair.privateKeyPEM)
        #expect(configuration.clientAssertionAudience == .issuer)
        _ = try await authenticator(sandbox, configuration).login(.clientCredentials)
        configuration.clientAssertionAudience = .tokenEndpoint
        _ = try await authenticator(sandbox, configuration).login(.clientCredentials)
        #expect(
            sandbox.clientAssertionAudiences == [sandbox.issuer.absoluteString, sandbox.url(.token).absoluteString])

        object["client_assertion_audience"] = "the moon"
        let error = #expect(throws: AuthError.self) { try ProviderConfiguration(json: object) }
        #expect(error?.field == "client_assertion_audience")
        await sandbox.stop()
    }

    @Test func aReplayedAssertionIsRefused() async throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.eddsa)
        var client = SandboxAuthorizationServer.Client(id: Self.serviceID)
        client.assertionKeyPEM = pair.publicKeyPEM
        let sandbox = try await sandbox([client])
        let configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: Self.serviceID,
            clientAssertionKey: try ClientAssertionKey(pair.privateKeyPEM))
        let assertion = try await ClientAssertion.make(
            .privateKeyJWT, configuration: configuration, audience: sandbox.url(.token), now: Date())
        let form = FormURLEncoding.encode([
            FormField("grant_type", "client_credentials"),
            FormField("client_assertion_type", ClientAssertion.type), FormField("client_assertion", assertion),
        ])
        let request = HTTPRequest(method: .post, url: sandbox.url(.token)).withFormContent
        let (first, _) = try await sandbox.transport.send(request, body: Data(form.utf8))
        let (second, body) = try await sandbox.transport.send(request, body: Data(form.utf8))
        #expect(first.status.code == 200)
        #expect(second.status.code == 401)
        #expect(String(decoding: body, as: UTF8.self).contains("already used"))
        await sandbox.stop()
    }

    @Test func aKeyTheServerDoesNotHoldIsInvalidClientAndNothingIsStored() async throws {
        var client = SandboxAuthorizationServer.Client(id: Self.serviceID)
        client.assertionKeyPEM = try SandboxAuthorizationServer.ClientKeyPair(.es256).publicKeyPEM
        let sandbox = try await sandbox([client])
        let store = MemoryTokenStore()
        let other = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        let auth = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, scopes: [],
                clientAssertionKey: try ClientAssertionKey(other.privateKeyPEM)),
            store: store)
        let error = try await #require(throws: AuthError.self) { try await auth.login(.clientCredentials) }
        #expect(error.oauthError == "invalid_client")
        #expect(error.message.contains("signature does not verify") || error.description.contains("invalid_client"))
        #expect(await store.keys().isEmpty)
        // Nor may it sign in with no assertion at all.
        let bare = try authenticator(
            sandbox, ProviderConfiguration(issuer: sandbox.issuer, clientID: Self.serviceID, scopes: []))
        let refused = try await #require(throws: AuthError.self) { try await bare.login(.clientCredentials) }
        #expect(refused.oauthError == "invalid_client")
        await sandbox.stop()
    }

    @Test func clientSecretJWTSignsWithTheSecretWithoutSendingIt() async throws {
        let sandbox = try await sandbox([.init(id: Self.serviceID, secret: Self.serviceSecret)])
        let auth = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, clientSecret: Self.serviceSecret, scopes: [],
                clientAuthentication: .clientSecretJWT))
        try await auth.login(.clientCredentials)
        #expect(sandbox.grantCount(.clientCredentials) == 1)
        let wrong = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID,
                clientSecret: "not-the-secret-but-just-as-long-0123", scopes: [], clientAuthentication: .clientSecretJWT
            ))
        let error = try await #require(throws: AuthError.self) { try await wrong.login(.clientCredentials) }
        #expect(error.oauthError == "invalid_client")
        // HS256 needs 32 bytes of key (RFC 7518 §3.2): a shorter secret is refused before anything is sent.
        let requests = sandbox.requestCount(.token)
        let short = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, clientSecret: "short", scopes: [],
                clientAuthentication: .clientSecretJWT))
        let refused = try await #require(throws: AuthError.self) { try await short.login(.clientCredentials) }
        #expect(refused.code == .configurationInvalid)
        #expect(refused.message.contains("at least 32 bytes"))
        #expect(sandbox.requestCount(.token) == requests)
        await sandbox.stop()
    }

    @Test func aPrivateKeyJWTWithoutAKeySaysWhichOptionGivesIt() async throws {
        let sandbox = try await sandbox([.init(id: Self.serviceID, secret: Self.serviceSecret)])
        let auth = try authenticator(
            sandbox,
            ProviderConfiguration(
                issuer: sandbox.issuer, clientID: Self.serviceID, scopes: [], clientAuthentication: .privateKeyJWT))
        let error = try await #require(throws: AuthError.self) { try await auth.login(.clientCredentials) }
        #expect(error.code == .configurationInvalid)
        #expect(error.hint?.contains("`client_assertion_key`") == true)
        #expect(sandbox.requestCount(.token) == 0, "nothing is sent")
        await sandbox.stop()
    }

    @Test func theAssertionIsAmongTheSecretsScrubbedFromErrors() throws {
        let endpoint = try #require(URL(string: "https://id.example/token"))
        var request = OAuthRequest(tokenEndpoint: endpoint, grant: .clientCredentials(scopes: ["api"]))
        request.clientAssertion = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJzdmMifQ.c2lnbmF0dXJl"
        request.applyStandardClientAuthentication(.privateKeyJWT, configuration: ProviderConfiguration(clientID: "svc"))
        #expect(request.sentSecrets.contains("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJzdmMifQ.c2lnbmF0dXJl"))
        #expect(!"\(request)".contains("eyJ"))
        #expect(
            request.form.map(\.name) == [
                "grant_type", "scope", "client_id", "client_assertion_type", "client_assertion",
            ])
    }

    // MARK: - Reading keys

    @Test func aKeyFileOthersCanReadIsRefusedWithTheChmodThatFixesIt() throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        let path = try keyFile(pair.privateKeyPEM, mode: 0o644)
        let error = #expect(throws: AuthError.self) { try ClientAssertionKey.contentsOf(path) }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.message.contains("holds a private key but other users can read or change it") == true)
        #expect(error?.hint?.contains("chmod 600") == true)
        let viaConfiguration = #expect(throws: AuthError.self) {
            try ProviderConfiguration(json: ["client_id": "svc", "client_assertion_key": .string(path)])
        }
        #expect(viaConfiguration?.message.contains("other users can read") == true)
    }

    @Test func whatIsNoPrivateKeyIsAClearErrorThatQuotesNothing() throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.rs256)
        let cases: [(String, String)] = [
            (pair.publicKeyPEM, "public key"),
            ("not a key at all", "neither a PEM nor a JWK"),
            ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "not a P-256, Ed25519 or RSA"),
            (#"{"kty":"EC","crv":"P-384","d":"AAAA"}"#, "P-256"),
            (#"{"kty":"oct","k":"c2VjcmV0"}"#, "none of EC, OKP, RSA"),
            (#"{"kty":"EC","crv":"P-256"}"#, "no \"d\""),
        ]
        for (text, expected) in cases {
            let error = #expect(throws: AuthError.self) { try ClientAssertionKey(text) }
            #expect(error?.message.contains(expected) == true, "\(error?.message ?? "") for \(expected)")
            #expect(error?.field == "client_assertion_key")
        }
    }

    @Test func aPrivateJWKIsReadWithItsKeyIDAndNeverPrinted() throws {
        let jwk = #"""
            {"kty":"OKP","crv":"Ed25519","kid":"agent-key",
             "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
            """#
        let key = try ClientAssertionKey(jwk)
        #expect(key.algorithm == "EdDSA")
        #expect(key.keyID == "agent-key")
        #expect("\(key)" == "ClientAssertionKey(EdDSA, kid agent-key)")
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("nWGxne"))
    }

    @Test func aKeyMakesPrivateKeyJWTTheStandardMethodAndTheNewNamesParse() throws {
        let metadata = ProviderMetadata(
            issuer: "https://id.example", authorizationEndpoint: try #require(URL(string: "https://id.example/a")),
            tokenEndpoint: try #require(URL(string: "https://id.example/t")),
            tokenEndpointAuthMethodsSupported: ["private_key_jwt", "client_secret_jwt", "client_secret_post"])
        let keyed = ProviderConfiguration(
            clientID: "svc",
            clientAssertionKey: try ClientAssertionKey(
                try SandboxAuthorizationServer.ClientKeyPair(.es256).privateKeyPEM))
        #expect(ClientAuthentication.standard(for: keyed, metadata: metadata) == .privateKeyJWT)
        // A secret alone never picks private_key_jwt, whatever the server lists first.
        let secret = ProviderConfiguration(clientID: "svc", clientSecret: "s")
        #expect(ClientAuthentication.standard(for: secret, metadata: metadata) == .clientSecretJWT)
        #expect(ClientAuthentication(name: "private_key_jwt") == .privateKeyJWT)
        #expect(ClientAuthentication(name: "secret_jwt") == .clientSecretJWT)
        #expect(ClientAuthentication.privateKeyJWT.usesAssertion)
        #expect(!ClientAuthentication.clientSecretPost.usesAssertion)
    }
}

extension HTTPRequest {
    /// The request with the form content type.
    fileprivate var withFormContent: HTTPRequest {
        var request = self
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        return request
    }
}
