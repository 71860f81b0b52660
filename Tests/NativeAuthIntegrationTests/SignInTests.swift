import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Test func theTestServerRunsWhenRequired() {
    #expect(
        TestServer.isRunning || !TestServer.isRequired,
        "NATIVEAUTH_REQUIRE_TEST_SERVER=1 but no server: run scripts/test-server start"
    )
}

@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct SignInTests {
    let server: TestServer

    init() throws { server = try TestServer.load() }

    private func authenticator(_ configuration: ProviderConfiguration, store: any TokenStore) throws -> Authenticator {
        Authenticator(provider: try GenericOIDCProvider(configuration: configuration), store: store)
    }

    private func presenter(_ opener: any BrowserOpener) -> LoopbackPresenter {
        LoopbackPresenter(configuration: .init(timeout: .seconds(60), opener: opener, output: ConsoleOutput { _ in }))
    }

    /// Two people signed in at the real server as two accounts: each account's token gets its
    /// own person's userinfo.
    @Test func twoPeopleAreTwoAccountsWhoseTokensAreTheirOwn() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/tokens"
        let accounts = Accounts(
            try authenticator(server.configuration(), store: FileTokenStore(directory: path)),
            active: FileActiveAccountStore(directory: path))
        let alice = try await accounts.login(.browser(presenter(TestServer.scriptedBrowser())))
        let bob = try await accounts.login(.browser(presenter(TestServer.scriptedBrowser("--second-user"))))
        #expect(alice.account == server.username && alice.isActive)
        #expect(bob.account == server.secondUsername && !bob.isActive)
        #expect(try await accounts.list().map(\.name) == [server.username, server.secondUsername])
        let aliceInfo = try await accounts.authenticator(for: alice.account).userInfo()
        let bobInfo = try await accounts.authenticator(for: bob.account).userInfo()
        #expect(aliceInfo.preferredUsername == server.username)
        #expect(bobInfo.preferredUsername == server.secondUsername)
        #expect(aliceInfo.subject != bobInfo.subject)
        #expect(aliceInfo.subject == alice.tokens.subject && bobInfo.subject == bob.tokens.subject)
        try await accounts.logout(bob.account)
        #expect(try await accounts.names() == [server.username])
    }

    @Test func aFullSignInStoresTheTokensPrivately() async throws {
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/tokens")
        let auth = try authenticator(server.configuration(), store: store)
        let tokens = try await auth.login(.browser(presenter(TestServer.scriptedBrowser())))

        #expect(!tokens.accessToken.isEmpty)
        #expect(tokens.refreshToken != nil)
        #expect(tokens.idToken != nil)
        #expect(tokens.displayName == server.username)
        #expect(tokens.scopes.contains("openid"))
        #expect(tokens.expiresAt.map { $0 > Date() } == true)

        let path = store.path(for: auth.key)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: store.directory)
        #expect(directoryAttributes[.posixPermissions] as? Int == 0o700)
        #expect(try store.load(auth.key) == tokens)

        // A fresh authenticator finds the tokens in the store, and the server accepts them.
        let again = try authenticator(server.configuration(), store: store)
        let accessToken = try await again.accessToken()
        #expect(accessToken == tokens.accessToken)
        let userinfo = try #require(try await again.metadata().userInfoEndpoint)
        var request = HTTPRequest(method: .get, url: userinfo)
        request.headerFields[.authorization] = "Bearer \(accessToken)"
        let (response, body) = try await URLSessionTransport().send(request, body: nil)
        #expect(response.status.code == 200)
        #expect(try JSONValue.parse(body).objectValue?.string("sub") == tokens.subject)
    }

    @Test(arguments: [ClientAuthentication.clientSecretBasic, .clientSecretPost])
    func aConfidentialClientSignsIn(method: ClientAuthentication) async throws {
        let store = MemoryTokenStore()
        let configuration = server.configuration(
            clientID: server.confidentialClientID,
            secret: server.confidentialClientSecret,
            authentication: method
        )
        let tokens = try await authenticator(configuration, store: store)
            .login(.browser(presenter(TestServer.scriptedBrowser())))
        #expect(tokens.refreshToken != nil)
    }

    @Test func aWrongSecretIsAConfigurationErrorAndStoresNothing() async throws {
        let store = MemoryTokenStore()
        let configuration = server.configuration(
            clientID: server.confidentialClientID,
            secret: "not-the-secret",
            authentication: .clientSecretBasic
        )
        let auth = try authenticator(configuration, store: store)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(presenter(TestServer.scriptedBrowser())))
        }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.oauthError == "invalid_client")
        #expect(await store.load(auth.key) == nil)
    }

    @Test func aForgedCallbackFirstIsRejectedAndTheRealSignInCompletes() async throws {
        let forgedStatus = ForgedStatus()
        let opener = ClosureOpener { url in
            // Before the person's browser gets there, something else calls the receiver with its own
            // state. (The browser gets the receiver's one-time start address, on the same port.)
            let port = try #require(url.port)
            let forged = try #require(
                URL(string: "http://127.0.0.1:\(port)/callback?code=forged-code&state=forged-state"))
            let (_, response) = try await URLSession.shared.data(from: forged)
            await forgedStatus.set((response as? HTTPURLResponse)?.statusCode)
            try await TestServer.scriptedBrowser().open(url)
        }
        let store = MemoryTokenStore()
        let auth = try authenticator(server.configuration(), store: store)
        let tokens = try await auth.login(.browser(presenter(opener)))
        #expect(await forgedStatus.value == 400)
        #expect(await store.load(auth.key) == tokens)
    }

    @Test func deniedConsentIsAuthorizationFailedWithAccessDenied() async throws {
        let store = MemoryTokenStore()
        let auth = try authenticator(server.configuration(), store: store)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(presenter(TestServer.scriptedBrowser("--deny"))))
        }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
        #expect(await store.load(auth.key) == nil)
    }

    @Test func aCallbackFromAnotherIssuerIsRejected() async throws {
        let opener = ClosureOpener { url in
            let callback = try await scriptedCallback(for: url)
            var components = try #require(URLComponents(url: callback, resolvingAgainstBaseURL: false))
            let iss = components.queryItems?.first { $0.name == "iss" }?.value
            #expect(iss == server.issuer.absoluteString, "the server sends iss (RFC 9207)")
            components.queryItems = components.queryItems?.map {
                $0.name == "iss" ? URLQueryItem(name: "iss", value: "https://evil.example/o") : $0
            }
            _ = try await URLSession.shared.data(from: try #require(components.url))
        }
        let store = MemoryTokenStore()
        let auth = try authenticator(server.configuration(), store: store)
        let error = await #expect(throws: AuthError.self) { try await auth.login(.browser(presenter(opener))) }
        #expect(error?.code == .invalidState)
        #expect(error?.message.contains("evil.example") == true)
        #expect(await store.load(auth.key) == nil)
    }

    @Test func aDiscoveryDocumentWithAnotherIssuerIsRejected() async throws {
        let slashed = try #require(URL(string: server.issuer.absoluteString + "/"))
        let auth = try authenticator(server.configuration(issuer: slashed), store: MemoryTokenStore())
        let error = await #expect(throws: AuthError.self) { try await auth.metadata() }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.message.contains("must be equal exactly") == true)
    }

    @Test func theRealServersRS256IDTokenIsValidatedAgainstItsJWKS() async throws {
        // The server's own JWKS: the sign-in validates (RS256, iss, aud, nonce, at_hash, exp, iat).
        let tokens = try await authenticator(server.configuration(), store: MemoryTokenStore())
            .login(.browser(presenter(TestServer.scriptedBrowser())))
        let header = try #require(tokens.idToken?.split(separator: ".").first)
        #expect(String(decoding: Data(base64Encoded: String(header) + "==") ?? Data(), as: UTF8.self).contains("RS256"))

        // Another JWKS (without the server's key): the same real token is refused and nothing stored.
        let empty = try await TestHTTPServer.start { _ in .json(#"{"keys": []}"#) }
        var configuration = server.configuration()
        configuration.endpoints.jwks = empty.url("/jwks")
        let store = MemoryTokenStore()
        let auth = try authenticator(configuration, store: store)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(presenter(TestServer.scriptedBrowser())))
        }
        await empty.stop()
        #expect(error?.code == .idTokenInvalid)
        #expect(error?.message.contains("in the JWKS") == true, "\(error?.message ?? "")")
        #expect(await store.load(auth.key) == nil)
    }

    @Test func discoveryFallsBackToRFC8414OnTheRealServer() async throws {
        let metadata = try await Discovery.load(
            issuer: server.issuer,
            overrides: EndpointOverrides(),
            client: try .forTests(issuer: server.issuer)
        )
        #expect(metadata.authorizationResponseIssParameterSupported)
        // The OIDC document lists no revocation endpoint; the RFC 8414 one does.
        #expect(metadata.revocationEndpoint == nil)
        var rfc8414 = Discovery.documentURLs(for: server.issuer)
        rfc8414.removeFirst()
        let (response, body) = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: rfc8414[0]), body: nil)
        #expect(response.status.code == 200)
        #expect(try JSONValue.parse(body).objectValue?.string("issuer") == server.issuer.absoluteString)
    }
}

actor ForgedStatus {
    var value: Int?
    func set(_ value: Int?) { self.value = value }
}
