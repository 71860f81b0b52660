import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Dynamic client registration (RFC 7591) and Client ID Metadata Documents against the in-process
/// sandbox: registered once and kept in the token store, registered again when expired, never twice
/// at once, and every refusal an error that stores nothing.
@Suite(.testLogging) struct ClientRegistrationTests {
    func sandbox(_ change: (inout SandboxAuthorizationServer.Configuration) -> Void = { _ in }) async throws
        -> SandboxAuthorizationServer
    {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        change(&configuration)
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    /// An authenticator of `sandbox` with no client id yet.
    func unregistered(
        _ sandbox: SandboxAuthorizationServer, store: any TokenStore, clock: AuthClock = .system
    ) throws -> Authenticator {
        var object: JSONObject = ["issuer": .string(sandbox.issuer.absoluteString), "register_client": true]
        object["scope"] = "openid profile"
        let configuration = try ProviderConfiguration(json: object)
        #expect(configuration.registersClient && configuration.clientID.isEmpty)
        return Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport, clock: clock)
    }

    let app = ClientMetadata(clientName: "registration-tests", scope: "openid profile")

    @Test func aClientRegistersOnceSignsInAndTheRegistrationIsKeptInTheStore() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let auth = try await unregistered(sandbox, store: store).registeringClient(app)
        let clientID = auth.provider.configuration.clientID
        #expect(clientID.hasPrefix("dyn-"))
        #expect(auth.key.clientID == clientID, "its tokens are kept under the registered client")
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await auth.userInfo().subject == SandboxAuthorizationServer.User.alice.subject)

        // Another start (a new authenticator on the same store) uses the kept registration.
        let again = try await unregistered(sandbox, store: store).registeringClient(app)
        #expect(again.provider.configuration.clientID == clientID)
        #expect(try await again.currentTokens() != nil, "and finds the tokens it signed in with")
        #expect(sandbox.requestCount(.registration) == 1)

        let record = try #require(
            await store.load(
                ClientRegistration.storeKey(
                    issuer: auth.provider.tokenIssuer, clientName: app.clientName, scope: app.scope))
        )
        #expect(record.clientRegistration?.clientID == clientID)
        #expect(record.clientRegistration?.clientSecret == nil, "a public client has no secret")
        let accounts = Accounts(auth, active: MemoryActiveAccountStore())
        #expect(try await accounts.names() == ["default"], "the registration is not an account")
        await sandbox.stop()
    }

    /// Issue 60: two resources of one server asking for other scopes (the MCP SDK's server takes
    /// only the scopes a client registered) keep a registration each: using the first again
    /// registers nothing and finds its sign-in, instead of replacing the other's registration.
    @Test func eachScopeSetKeepsARegistrationOfItsOwn() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let first = try await unregistered(sandbox, store: store).registeringClient(app)
        try await first.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        var wider = app
        wider.scope = "openid profile email"
        let second = try await unregistered(sandbox, store: store).registeringClient(wider)
        #expect(second.provider.configuration.clientID != first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 2)

        let again = try await unregistered(sandbox, store: store).registeringClient(app)
        #expect(again.provider.configuration.clientID == first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 2, "the first registration was kept")
        #expect(try await again.currentTokens() != nil, "and so was the sign-in made under it")
        var reordered = app
        reordered.scope = "profile openid"
        #expect(
            ClientRegistration.storeKey(issuer: "i", clientName: "c", scope: reordered.scope)
                == ClientRegistration.storeKey(issuer: "i", clientName: "c", scope: app.scope))
        await sandbox.stop()
    }

    /// A registration an earlier version kept under the client name alone is taken over by the
    /// same request (no second registration; the sign-in under its client id goes on), and not by
    /// a request for other scopes.
    @Test func aRegistrationKeptUnderTheClientNameAloneIsTakenOver() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let first = try await unregistered(sandbox, store: store).registeringClient(app)
        try await first.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let issuer = first.provider.tokenIssuer
        let scoped = ClientRegistration.storeKey(issuer: issuer, clientName: app.clientName, scope: app.scope)
        let unscoped = ClientRegistration.storeKey(issuer: issuer, clientName: app.clientName)
        let kept = try #require(await store.load(scoped))
        try await store.save(kept, for: unscoped)
        try await store.remove(scoped)

        let again = try await unregistered(sandbox, store: store).registeringClient(app)
        #expect(again.provider.configuration.clientID == first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 1, "the kept registration was taken over")
        #expect(try await again.currentTokens() != nil)
        #expect(try await store.load(scoped)?.clientRegistration?.clientID == first.provider.configuration.clientID)
        var other = app
        other.scope = "openid email"
        let elsewhere = try await unregistered(sandbox, store: store).registeringClient(other)
        #expect(elsewhere.provider.configuration.clientID != first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 2)
        await sandbox.stop()
    }

    /// A server that matches redirect URIs exactly (the MCP SDK's): the client registers one
    /// loopback port, keeps it, and signs in there; a later start asking with another free port
    /// uses the kept registration and its port, not a new one.
    @Test func anExactLoopbackPortIsRegisteredKeptAndSignedInWith() async throws {
        let sandbox = try await sandbox { $0 = $0.with(.exactRedirectURIs) }
        let store = MemoryTokenStore()
        var exact = app
        exact.redirectURIs = try ClientMetadata.loopbackRedirectURIs()
        let auth = try await unregistered(sandbox, store: store).registeringClient(exact)
        let port = try #require(auth.provider.configuration.loopbackRedirectPort)
        #expect(exact.redirectURIs == ["http://127.0.0.1:\(port)/callback"])
        let record = try #require(
            await store.load(
                ClientRegistration.storeKey(
                    issuer: auth.provider.tokenIssuer, clientName: app.clientName, scope: app.scope))
        )
        #expect(record.clientRegistration?.redirectURIs == exact.redirectURIs)
        #expect(record.clientRegistration?.loopbackRedirectPort == port)

        var later = app
        later.redirectURIs = try ClientMetadata.loopbackRedirectURIs()
        let again = try await unregistered(sandbox, store: store).registeringClient(later)
        #expect(again.provider.configuration.clientID == auth.provider.configuration.clientID)
        #expect(again.provider.configuration.loopbackRedirectPort == port, "the kept registration's port")
        #expect(sandbox.requestCount(.registration) == 1)

        // The registered port signs in; another one is refused by the server as not registered.
        await #expect(throws: AuthError.self, "another port is not the registered one") {
            try await again.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        try await again.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport, port: port)))
        #expect(try await again.currentTokens() != nil)
        await sandbox.stop()
    }

    @Test func anUnregisteredClientSaysToRegisterFirstAndSendsNothing() async throws {
        let sandbox = try await sandbox()
        let auth = try unregistered(sandbox, store: MemoryTokenStore())
        let login = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(login?.hint?.contains("register it first") == true, "\(String(describing: login))")
        let service = await #expect(throws: AuthError.self) { try await auth.login(.clientCredentials) }
        #expect(service?.field == "client_id")
        #expect(sandbox.requestCount(.authorization) == 0 && sandbox.requestCount(.token) == 0)
        await sandbox.stop()
    }

    @Test func concurrentFirstCallsRegisterExactlyOnce() async throws {
        let sandbox = try await sandbox()
        let directory = try TemporaryDirectory()
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    // Each its own store value and lock handle, as separate processes would have.
                    let store = FileTokenStore(directory: directory.path + "/store")
                    return try await unregistered(sandbox, store: store).registeringClient(app).provider.configuration
                        .clientID
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(sandbox.requestCount(.registration) == 1)
        await sandbox.stop()
    }

    @Test func anExpiredRegistrationIsRegisteredAgain() async throws {
        let time = TestClock()
        let sandbox = try await sandbox {
            $0.clock = time.clock
            $0.registeredSecretLifetime = .seconds(3600)
        }
        let store = MemoryTokenStore()
        let confidential = ClientMetadata(clientName: "confidential", tokenEndpointAuthMethod: "client_secret_basic")
        let first = try await unregistered(sandbox, store: store, clock: time.clock).registeringClient(confidential)
        let registration = try #require(await first.storedRegistration(of: confidential))
        #expect(registration.clientSecret != nil)
        #expect(
            registration.clientSecretExpiresAt
                == Date(timeIntervalSince1970: (time.now + 3600).timeIntervalSince1970.rounded(.down)))
        #expect(!"\(registration)".contains(registration.clientSecret ?? "-"), "printing it hides the secret")
        try await first.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(first.provider.configuration.clientAuthentication == .clientSecretBasic)

        time.advance(by: .seconds(3600 - 120))
        let stillGood = try await unregistered(sandbox, store: store, clock: time.clock).registeringClient(confidential)
        #expect(stillGood.provider.configuration.clientID == first.provider.configuration.clientID)

        time.advance(by: .seconds(90))  // within the minute before it expires
        let renewed = try await unregistered(sandbox, store: store, clock: time.clock).registeringClient(confidential)
        #expect(renewed.provider.configuration.clientID != first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 2)
        #expect(
            try await renewed.storedRegistration(of: confidential)?.clientID == renewed.provider.configuration.clientID)
        try await renewed.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await renewed.userInfo().subject == SandboxAuthorizationServer.User.alice.subject)
        await sandbox.stop()
    }

    @Test func otherClientMetadataRegistersAnewButANewVersionDoesNot() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        var versioned = app
        versioned.softwareVersion = "1.0"
        let first = try await unregistered(sandbox, store: store).registeringClient(versioned)
        versioned.softwareVersion = "1.1"
        let upgraded = try await unregistered(sandbox, store: store).registeringClient(versioned)
        #expect(upgraded.provider.configuration.clientID == first.provider.configuration.clientID)
        var moved = app
        moved.redirectURIs = ["http://127.0.0.1/other"]
        let second = try await unregistered(sandbox, store: store).registeringClient(moved)
        #expect(second.provider.configuration.clientID != first.provider.configuration.clientID)
        #expect(sandbox.requestCount(.registration) == 2)
        await sandbox.stop()
    }

    @Test(arguments: [
        (
            SandboxAuthorizationServer.Failure.oauthError("invalid_redirect_uri"), AuthError.Code.registrationFailed,
            "invalid_redirect_uri"
        ),
        (.response(status: 201, contentType: "text/html", body: "<html>proxy</html>"), .responseMalformed, "JSON"),
        (
            .response(status: 201, contentType: "application/json", body: #"{"client_secret":"x"}"#),
            .responseMalformed, "client_id"
        ),
        (.response(status: 503, contentType: "text/plain", body: "down"), .serverError, "503"),
    ])
    func aRefusedOrMalformedRegistrationIsAClearErrorAndStoresNothing(
        failure: SandboxAuthorizationServer.Failure, code: AuthError.Code, mentions: String
    ) async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        sandbox.failNext(1, .registration, with: failure)
        let error = await #expect(throws: AuthError.self) {
            try await unregistered(sandbox, store: store).registeringClient(app)
        }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.operation == .registration)
        #expect("\(String(describing: error))".contains(mentions), "\(String(describing: error))")
        #expect(try await store.keys().isEmpty)
        // The next attempt registers.
        _ = try await unregistered(sandbox, store: store).registeringClient(app)
        #expect(try await store.keys().count == 1)
        await sandbox.stop()
    }

    @Test func aServerThatWantsAnInitialAccessTokenGetsItAndItIsNotKept() async throws {
        let initial = "initial-access-" + SecureRandom.token()
        let sandbox = try await sandbox { $0.registrationAccessToken = initial }
        let store = MemoryTokenStore()
        let error = await #expect(throws: AuthError.self) {
            try await unregistered(sandbox, store: store).registeringClient(app)
        }
        #expect(error?.code == .registrationFailed)
        #expect(error?.hint?.contains("initial access token") == true, "\(String(describing: error))")
        let auth = try await unregistered(sandbox, store: store).registeringClient(app, initialAccessToken: initial)
        #expect(!auth.provider.configuration.clientID.isEmpty)
        let key = try #require(await store.keys().first)
        let record = try #require(await store.load(key))
        let stored = try JSONValue.object(#require(record.storageJSON.objectValue)).encodedString()
        #expect(!stored.contains(initial))
        await sandbox.stop()
    }

    @Test func aServerWithoutARegistrationEndpointIsAClearError() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        var object: JSONObject = ["issuer": .string(sandbox.issuer.absoluteString), "register_client": true]
        object["authorization_endpoint"] = .string(sandbox.url(.authorization).absoluteString)
        // A provider whose metadata names no registration endpoint.
        let provider = try FixedMetadataProvider(configuration: ProviderConfiguration(json: object))
        let auth = Authenticator(provider: provider, store: store, transport: sandbox.transport)
        let error = await #expect(throws: AuthError.self) { try await auth.registeringClient(app) }
        #expect(error?.code == .registrationFailed)
        #expect(error?.message.contains("registration_endpoint") == true)
        #expect(error?.hint?.contains("`client_id`") == true)
        #expect(try await store.keys().isEmpty)
        await sandbox.stop()
    }

    @Test func aClientIDMetadataDocumentIsTheClientIDWhereTheServerTakesThem() async throws {
        let sandbox = try await sandbox {
            $0.acceptsClientMetadataDocuments = true
            $0.clientMetadataDocuments = ["app": ["http://127.0.0.1/callback"]]
        }
        let store = MemoryTokenStore()
        var published = app
        published.metadataDocument = sandbox.url(.clientMetadataDocument).appendingPathComponent("app")
        let auth = try await unregistered(sandbox, store: store).registeringClient(published)
        #expect(auth.provider.configuration.clientID == published.metadataDocument?.absoluteString)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await auth.userInfo().subject == SandboxAuthorizationServer.User.alice.subject)
        #expect(sandbox.requestCount(.registration) == 0)
        #expect(try await store.keys() == [auth.key], "nothing but the tokens is stored")

        // A server that does not take them registers the client instead.
        let plain = try await self.sandbox()
        let registered = try await unregistered(plain, store: MemoryTokenStore()).registeringClient(published)
        #expect(registered.provider.configuration.clientID.hasPrefix("dyn-"))
        #expect(plain.requestCount(.registration) == 1)
        await sandbox.stop()
        await plain.stop()
    }
}

/// A provider with metadata built in code: the sandbox's endpoints, and no registration endpoint.
private struct FixedMetadataProvider: AuthProvider {
    static let id = "fixed"
    let configuration: ProviderConfiguration

    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }

    func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        let issuer = try #require(configuration.issuer)
        return ProviderMetadata(
            issuer: issuer.absoluteString, authorizationEndpoint: issuer.appendingPathComponent("authorize"),
            tokenEndpoint: issuer.appendingPathComponent("token"))
    }
}
