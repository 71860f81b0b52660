import Foundation
import HTTPTypes
import NativeAuth
import TestSupport
import Testing

/// A local provider, in memory: discovery at /o, a token endpoint that counts requests, and a few APIs.
private struct LocalProvider {
    let server: TestHTTPServer
    let tokenRequests: RequestLog

    static func start(failRefresh: Bool = false) async throws -> LocalProvider {
        let box = IssuerBox()
        let log = RequestLog()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            let path = request.uri.split(separator: "?").first.map(String.init) ?? ""
            switch path {
            case "/o/.well-known/openid-configuration":
                return .json(discoveryDocument(issuer: box.value))
            case "/o/token/":
                log.record(path)
                if failRefresh { return .text("<h1>Bad gateway</h1>", status: 502, contentType: "text/html") }
                var response = TestResponse.json(#"{"access_token": "new-\#(log.paths.count)", "expires_in": "3600"}"#)
                response.delay = .milliseconds(100)
                return response
            case "/api/always401":
                return TestResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            case "/api/scope":
                return TestResponse(
                    status: 403,
                    headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="admin""#)]
                )
            case "/api/echo":
                return .text(request.header("Authorization") ?? "none")
            case "/api/refuses-old":
                guard request.header("Authorization") != "Bearer old" else {
                    return TestResponse(
                        status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)],
                        body: Data("refused".utf8))
                }
                return .text("answer for \(request.header("Authorization") ?? "none")")
            default:
                return .text("not found", status: 404)
            }
        }
        box.value = server.url("/o").absoluteString
        return LocalProvider(server: server, tokenRequests: log)
    }

    func authenticator(store: MemoryTokenStore, expired: Bool) async throws -> Authenticator {
        let provider = try GenericOIDCProvider(configuration: testConfiguration(issuer: server.url("/o")))
        let auth = Authenticator(provider: provider, store: store, transport: server.transport)
        let tokens = TokenSet(
            accessToken: "old",
            refreshToken: "refresh-1",
            expiresAt: Date().addingTimeInterval(expired ? -10 : 3600),
            issuedAt: Date()
        )
        await store.save(tokens, for: auth.key)
        return auth
    }
}

@Suite(.testLogging) struct AuthenticatorRequestTests {
    @Test func concurrentCallersShareOneRefreshAndItsResult() async throws {
        let local = try await LocalProvider.start()
        let store = MemoryTokenStore()
        let auth = try await local.authenticator(store: store, expired: true)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await auth.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        await local.server.stop()
        #expect(tokens.count == 50)
        #expect(Set(tokens) == ["new-1"])
        #expect(local.tokenRequests.paths.count == 1)
        let stored = await store.load(auth.key)
        #expect(stored?.accessToken == "new-1")
        #expect(stored?.refreshToken == "refresh-1", "a response without refresh_token keeps the old one")
    }

    @Test func concurrentCallersShareOneFailureAndTheStoreIsKept() async throws {
        let local = try await LocalProvider.start(failRefresh: true)
        let store = MemoryTokenStore()
        let auth = try await local.authenticator(store: store, expired: true)
        let before = await store.load(auth.key)
        let errors = await withTaskGroup(of: AuthError?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        _ = try await auth.accessToken()
                        return nil
                    } catch {
                        return error as? AuthError
                    }
                }
            }
            return await group.reduce(into: [AuthError?]()) { $0.append($1) }
        }
        await local.server.stop()
        #expect(errors.count == 20)
        #expect(errors.allSatisfy { $0?.code == .serverError && $0?.isRetryable == true })
        #expect(local.tokenRequests.paths.count == 1)
        #expect(await store.load(auth.key) == before)
    }

    @Test func sendAddsTheBearerToken() async throws {
        let local = try await LocalProvider.start()
        let auth = try await local.authenticator(store: MemoryTokenStore(), expired: false)
        let (response, body) = try await auth.send(HTTPRequest(method: .get, url: local.server.url("/api/echo")))
        await local.server.stop()
        #expect(response.status.code == 200)
        #expect(String(decoding: body, as: UTF8.self) == "Bearer old")
    }

    /// With a sink, a 401's body is read to act on (a refresh and one retry), never streamed; the
    /// retry's success goes to the sink, and the body returned is empty.
    @Test func aStreamedAnswerReachesTheSinkOnceAfterARefreshedRetry() async throws {
        let local = try await LocalProvider.start()
        let auth = try await local.authenticator(store: MemoryTokenStore(), expired: false)
        let received = Shared<[String]>([])
        let (response, body) = try await auth.send(
            HTTPRequest(method: .post, url: local.server.url("/api/refuses-old")), body: Data("call".utf8)
        ) { piece in
            received.update { $0.append(String(decoding: piece, as: UTF8.self)) }
        }
        await local.server.stop()
        #expect(response.status.code == 200)
        #expect(body.isEmpty)
        #expect(received.value == ["answer for Bearer new-1"])
        #expect(local.tokenRequests.paths.count == 1)
    }

    @Test func aSecond401IsInvalidTokenAfterOneRefresh() async throws {
        let local = try await LocalProvider.start()
        let auth = try await local.authenticator(store: MemoryTokenStore(), expired: false)
        let error = await #expect(throws: AuthError.self) {
            try await auth.send(HTTPRequest(method: .get, url: local.server.url("/api/always401")))
        }
        await local.server.stop()
        #expect(error?.code == .invalidToken)
        #expect(local.tokenRequests.paths.count == 1)
    }

    @Test func insufficientScopeIsThrown() async throws {
        let local = try await LocalProvider.start()
        let auth = try await local.authenticator(store: MemoryTokenStore(), expired: false)
        let error = await #expect(throws: AuthError.self) {
            try await auth.send(HTTPRequest(method: .get, url: local.server.url("/api/scope")))
        }
        await local.server.stop()
        #expect(error?.code == .insufficientScope)
        #expect(error?.message.contains("admin") == true)
        #expect(local.tokenRequests.paths.isEmpty)
    }

    @Test func logoutWithoutRevocationOrEndSessionRemovesTheTokensAndGivesNoURL() async throws {
        let local = try await LocalProvider.start()
        let store = MemoryTokenStore()
        let auth = try await local.authenticator(store: store, expired: false)
        let withoutPresenter = try await auth.logout()
        #expect(withoutPresenter.endSessionURL == nil)
        #expect(!withoutPresenter.revocationAttempted)
        #expect(await store.load(auth.key) == nil)
        let withPresenter = try await auth.logout(
            presenter: LoopbackPresenter(configuration: .init(opener: nil, output: ConsoleOutput { _ in }))
        )
        await local.server.stop()
        #expect(withPresenter.endSessionURL == nil)
        #expect(!withPresenter.endSessionCompleted)
    }

    @Test func expiringTheRefreshTokenMakesTheNextRefreshFailToSignIn() async throws {
        let local = try await LocalProvider.start()
        let store = MemoryTokenStore()
        let auth = try await local.authenticator(store: store, expired: false)
        try await auth.expireRefreshToken()
        try await auth.expireAccessToken()
        let stored = await store.load(auth.key)
        await local.server.stop()
        #expect(stored?.refreshToken != "refresh-1")
        #expect(stored?.isValid(at: Date()) == false)
    }
}

/// A store whose loads follow a script: what another process wrote between two reads.
private actor ScriptedStore: TokenStore {
    var loads: [TokenSet?]
    var saved: [TokenSet] = []
    nonisolated let lock = InProcessTokenLock()

    init(loads: [TokenSet?]) { self.loads = loads }

    func load(_ key: TokenKey) -> TokenSet? { loads.count > 1 ? loads.removeFirst() : loads.first ?? nil }
    func save(_ tokens: TokenSet, for key: TokenKey) { saved.append(tokens) }
    func remove(_ key: TokenKey) {}
    func keys() -> [TokenKey] { [] }
}

@Suite(.testLogging) struct RotationRaceTests {
    @Test func aLostRotationRaceUsesTheRefreshTokenAnotherProcessStored() async throws {
        let box = IssuerBox()
        let bodies = RequestLog()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            if request.uri.hasPrefix("/o/.well-known/openid-configuration") {
                return .json(discoveryDocument(issuer: box.value))
            }
            let body = String(decoding: request.body, as: UTF8.self)
            bodies.record(body)
            // The old refresh token was already used by another process.
            if body.contains("refresh_token=old-refresh") { return .json(#"{"error": "invalid_grant"}"#, status: 400) }
            return .json(#"{"access_token": "from-new-refresh", "refresh_token": "newest", "expires_in": 3600}"#)
        }
        box.value = server.url("/o").absoluteString
        let expired = Date().addingTimeInterval(-10)
        let mine = TokenSet(accessToken: "old", refreshToken: "old-refresh", expiresAt: expired, issuedAt: expired)
        // Another process refreshed right after our reload: its access token is expired too here,
        // so the stored (newer) refresh token must be used.
        let theirs = TokenSet(
            accessToken: "theirs", refreshToken: "their-refresh", expiresAt: expired, issuedAt: expired)
        let store = ScriptedStore(loads: [mine, mine, theirs])
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: testConfiguration(issuer: server.url("/o"))),
            store: store,
            transport: server.transport
        )
        let token = try await auth.accessToken()
        await server.stop()
        #expect(token == "from-new-refresh")
        #expect(bodies.paths.count == 2)
        #expect(bodies.paths.last?.contains("refresh_token=their-refresh") == true)
        #expect(await store.saved.last?.refreshToken == "newest")
    }
}
