import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// The refresh machinery under load and failure, against the in-process sandbox: the library's
/// behaviour is the point here, not a real server's (RefreshTests in the integration tests keep
/// rotation, revocation and expiry on django-oauth-toolkit). In memory, except where a socket is
/// the point: the transport's deadline, and processes sharing a store.
@Suite(.testLogging, .serialized) struct SandboxRefreshTests {
    func signedIn(_ sandbox: SandboxAuthorizationServer, store: any TokenStore) async throws -> Authenticator {
        let auth = Authenticator(provider: try provider(sandbox), store: store, transport: sandbox.transport)
        switch sandbox.mode {
        case .inMemory:
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        case .live:
            try await auth.login(
                .browser(
                    LoopbackPresenter(
                        configuration: .init(
                            timeout: .seconds(30), opener: RedirectFollowingBrowser(), output: ConsoleOutput { _ in })
                    )))
        }
        return auth
    }

    func provider(_ sandbox: SandboxAuthorizationServer) throws -> GenericOIDCProvider {
        try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                scopes: ["openid", "profile", "email"]))
    }

    /// A consumer of the ID token (kubectl's exec credential) gets one valid for the minute asked:
    /// an expiring ID token is refreshed even with a good access token, once for many callers; a
    /// refresh that brings none is an error, never an expired ID token.
    @Test func anExpiringIDTokenIsRefreshedOnceEvenWithAGoodAccessToken() async throws {
        let clock = TestClock()
        for issuesIDTokens in [true, false] {
            var configuration = SandboxAuthorizationServer.Configuration(
                autoApprove: true, accessTokenLifetime: .seconds(3600), idTokenLifetime: .seconds(300),
                clock: clock.clock)
            configuration.issuesIDTokensOnRefresh = issuesIDTokens
            let sandbox = try await SandboxAuthorizationServer.start(configuration)
            let auth = Authenticator(
                provider: try provider(sandbox), store: MemoryTokenStore(), transport: sandbox.transport,
                clock: clock.clock)
            let first = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
            #expect(try await auth.tokensWithValidIDToken().idToken == first.idToken)
            clock.advance(by: .seconds(280))  // the ID token has 20 s left, the access token 55 minutes
            if issuesIDTokens {
                let served = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<20 { group.addTask { try await auth.tokensWithValidIDToken().idToken } }
                    return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
                }
                #expect(sandbox.grantCount(.refreshToken) == 1, "one refresh for 20 callers")
                #expect(served.count == 1 && served.first != first.idToken)
                #expect(try await auth.currentTokens()?.idTokenIsValid(at: clock.now, leeway: 60) == true)
            } else {
                let refused = await #expect(throws: AuthError.self) { try await auth.tokensWithValidIDToken() }
                #expect(refused?.code == .loginRequired)
                #expect(
                    refused?.message.contains("the refresh brought no new one") == true,
                    "\(String(describing: refused))")
                #expect(try await auth.accessToken() != first.accessToken, "the refresh's access token is kept")
            }
            await sandbox.stop()
        }
    }

    @Test func twoHundredConcurrentSendsAfterExpiryCauseOneRefresh() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = try await signedIn(sandbox, store: MemoryTokenStore())
        try await auth.expireAccessToken()
        let request = HTTPRequest(method: .get, url: sandbox.url(.userInfo))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await auth.send(request).0.status.code } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(sandbox.grantCount(.refreshToken) == 1)
        #expect(sandbox.requestCount(.userInfo) == 200)
        await sandbox.stop()
    }

    @Test func a401AfterAnotherInstanceRefreshedUsesTheStoredTokensWithoutARequest() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let first = try await signedIn(sandbox, store: store)
        let stale = try await first.accessToken()
        // Another instance (another process, say) refreshes, and the old access token is revoked.
        let second = Authenticator(provider: try provider(sandbox), store: store, transport: sandbox.transport)
        try await second.refresh()
        var revoke = HTTPRequest(method: .post, url: sandbox.url(.revocation))
        revoke.headerFields[.contentType] = FormURLEncoding.mediaType
        let form = [FormField("token", stale), FormField("client_id", SandboxAuthorizationServer.Client.defaultID)]
        _ = try await sandbox.transport.send(revoke, body: Data(FormURLEncoding.encode(form).utf8))

        let (response, _) = try await first.send(HTTPRequest(method: .get, url: sandbox.url(.resource)))
        #expect(response.status.code == 200)
        #expect(sandbox.grantCount(.refreshToken) == 1, "only the other instance's refresh")
        #expect(try await first.accessToken() != stale)
        await sandbox.stop()
    }

    /// A long-running process (an IDE extension, a credential helper) holds the tokens in memory
    /// while the person runs `tool logout` in another: its next `accessToken()` says a sign-in is
    /// needed (the store's revision changed), it neither refreshes from its copy nor writes the copy
    /// back; and a new sign-in elsewhere is what it uses next.
    @Test func aLogoutElsewhereIsNotUndoneByTheTokensInMemory() async throws {
        let time = TestClock()
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(autoApprove: true, clock: time.clock), mode: .inMemory)
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let longRunning = Authenticator(
            provider: try provider(sandbox), store: store, transport: sandbox.transport, clock: time.clock)
        try await longRunning.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        _ = try await longRunning.accessToken()

        let other = Authenticator(provider: try provider(sandbox), store: store, transport: sandbox.transport)
        let result = try await other.logout()
        #expect(result.revocationAttempted && result.revocationError == nil)
        #expect(try store.load(longRunning.key) == nil)

        await #expect { _ = try await longRunning.accessToken() } throws: { Self.isLoginRequired($0) }
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        await #expect { _ = try await longRunning.send(request) } throws: { Self.isLoginRequired($0) }
        await #expect { _ = try await longRunning.refresh() } throws: { Self.isLoginRequired($0) }
        #expect(try store.load(longRunning.key) == nil, "nothing was written back")
        #expect(try await longRunning.currentTokens() == nil)
        #expect(sandbox.grantCount(.refreshToken) == 0, "no refresh token was sent after the logout")

        let again = try await other.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await longRunning.accessToken() == again.accessToken, "the new sign-in counts at once")
        await sandbox.stop()
    }

    /// A store whose saves fail once `failing` is set (a full disk, say).
    struct FailingSaves: TokenStore {
        let base = MemoryTokenStore()
        let failing = Shared(false)
        var lock: InProcessTokenLock { base.lock }
        func load(_ key: TokenKey) async throws -> TokenSet? { await base.load(key) }
        func save(_ tokens: TokenSet, for key: TokenKey) async throws {
            if failing.value { throw AuthError(.tokenStoreFailed, "the disk is full") }
            await base.save(tokens, for: key)
        }
        func remove(_ key: TokenKey) async throws { await base.remove(key) }
        func keys() async throws -> [TokenKey] { await base.keys() }
    }

    /// A save that fails after a rotating refresh: the new refresh token (the old one is spent) is
    /// kept in memory and used, and the error says so.
    @Test func aFailedSaveAfterARefreshKeepsTheNewTokensInMemory() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = FailingSaves()
        let auth = try await signedIn(sandbox, store: store)
        let before = try #require(try await auth.currentTokens())
        store.failing.update { $0 = true }
        let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("this process keeps them in memory") == true)
        let kept = try #require(try await auth.currentTokens())
        #expect(kept.refreshToken != before.refreshToken && kept.accessToken != before.accessToken)
        #expect(try await auth.accessToken() == kept.accessToken)
        store.failing.update { $0 = false }
        try await auth.refresh()
        #expect(sandbox.grantCount(.refreshToken) == 2, "the second refresh sent the new refresh token")
        #expect(sandbox.errorCount("invalid_grant") == 0)
        await sandbox.stop()
    }

    static func isLoginRequired(_ error: any Error) -> Bool {
        (error as? AuthError)?.code == .loginRequired
    }

    static let faults: [(SandboxAuthorizationServer.Failure, String)] = [
        (.response(status: 503, contentType: "text/html", body: "<h1>503</h1>"), "a 503 page"),
        (.response(status: 200, contentType: "text/html", body: "<html>captive portal</html>"), "an HTML 200"),
        (
            .response(status: 200, contentType: "application/json", body: #"{"access_token": "abc", "refr"#),
            "truncated JSON"
        ),
        (.oauthError("temporarily_unavailable", status: 400), "temporarily_unavailable"),
    ]

    @Test(arguments: 0..<faults.count)
    func aFailedRefreshLeavesTheStoreByteForByte(fault: Int) async throws {
        let (failure, name) = Self.faults[fault]
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let auth = try await signedIn(sandbox, store: store)
        try await auth.expireAccessToken()
        let path = store.path(for: auth.key)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        sandbox.failNext(1, .token, with: failure)
        let error = await #expect(throws: AuthError.self, "\(name)") { try await auth.accessToken() }
        #expect(error?.isRetryable == true, "\(name): \(String(describing: error))")
        #expect(error?.isLoginRequired == false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(name)")
        // The next try works, with the same refresh token.
        _ = try await auth.accessToken()
        #expect(sandbox.grantCount(.refreshToken) == 2)
        await sandbox.stop()
    }

    /// A refresh refused with an OAuth error that is neither passing nor about the request (a
    /// server that lost its session says `invalid_request`) ends the sign-in: the refresh token is
    /// removed, and the error says to sign in again.
    @Test(arguments: ["invalid_request", "invalid_grant", "session_lost"])
    func aRefusedRefreshRemovesTheRefreshToken(code: String) async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let auth = try await signedIn(sandbox, store: store)
        try await auth.expireAccessToken()
        sandbox.failNext(1, .token, with: .oauthError(code, status: 400))
        let error = await #expect(throws: AuthError.self) { try await auth.accessToken() }
        #expect(error?.isLoginRequired == true, "\(code): \(String(describing: error))")
        #expect(error?.hint == "sign in again")
        #expect(try await store.load(auth.key)?.refreshToken == nil, "the dead refresh token is gone")
        #expect(sandbox.grantCount(.refreshToken) == 1, "not tried again")
        await sandbox.stop()
    }

    /// Errors about the request, not the refresh token, keep it: the client's authentication (a
    /// secret to fix), a scope or resource asked for.
    @Test(arguments: ["invalid_client", "unauthorized_client", "invalid_scope"])
    func aRefusalAboutTheRequestKeepsTheRefreshToken(code: String) async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let auth = try await signedIn(sandbox, store: store)
        try await auth.expireAccessToken()
        let before = try await store.load(auth.key)?.refreshToken
        sandbox.failNext(1, .token, with: .oauthError(code, status: 400))
        let error = await #expect(throws: AuthError.self) { try await auth.accessToken() }
        #expect(error?.isLoginRequired == false, "\(code): \(String(describing: error))")
        #expect(try await store.load(auth.key)?.refreshToken == before)
        await sandbox.stop()
    }

    @Test func aTimeoutLeavesTheStoreByteForByte() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        _ = try await signedIn(sandbox, store: store)
        let impatient = Authenticator(
            provider: try provider(sandbox), store: store,
            transport: URLSessionTransport(configuration: .init(timeout: .milliseconds(300))))
        try await impatient.expireAccessToken()
        let path = store.path(for: impatient.key)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        sandbox.failNext(1, .token, with: .delay(.seconds(2)))
        let error = await #expect(throws: AuthError.self) { try await impatient.accessToken() }
        #expect(error?.code == .timeout)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        await sandbox.stop()
    }

    @Test func fourProcessesShareOneRefresh() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let auth = try await signedIn(sandbox, store: store)
        let before = try #require(try await auth.currentTokens())
        try await auth.expireAccessToken()
        let arguments = [
            "token", "--issuer", sandbox.issuer.absoluteString, "--client-id",
            SandboxAuthorizationServer.Client.defaultID, "--store", directory.path + "/store",
        ]
        let cli = cliPath("oidc-login")
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<4 { group.addTask { try await run(cli, arguments) } }
            return try await group.reduce(into: [CommandResult]()) { $0.append($1) }
        }
        #expect(sandbox.grantCount(.refreshToken) == 1, "exactly one refresh request reached the server")
        let stored = try #require(try store.load(auth.key))
        for result in results {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == stored.accessToken + "\n")
        }
        #expect(stored.accessToken != before.accessToken)
        #expect(stored.refreshToken != before.refreshToken, "one rotation")
        await sandbox.stop()
    }
}
