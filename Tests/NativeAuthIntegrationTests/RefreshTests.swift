import Foundation
import HTTPTypes
import LenientJSON
import NativeAuth
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real transport, counting refresh requests and optionally failing them.
final class CountingTransport: HTTPTransport {
    enum Fault: Sendable, CaseIterable {
        case serverError, timeout, html, truncatedJSON
    }

    private let inner = URLSessionTransport()
    private let refreshes = Mutex(0)
    let fault: Fault?

    init(fault: Fault? = nil) { self.fault = fault }

    var refreshCount: Int { refreshes.withLock { $0 } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        let isRefresh = body.map { String(decoding: $0, as: UTF8.self).contains("grant_type=refresh_token") } ?? false
        if isRefresh {
            refreshes.withLock { $0 += 1 }
            switch fault {
            case .serverError?:
                return (
                    HTTPResponse(status: .serviceUnavailable, headerFields: [.contentType: "text/html"]),
                    Data("<h1>503</h1>".utf8)
                )
            case .timeout?:
                throw AuthError(.timeout, "injected timeout", isRetryable: true)
            case .html?:
                return (
                    HTTPResponse(status: .ok, headerFields: [.contentType: "text/html"]),
                    Data("<html>portal</html>".utf8)
                )
            case .truncatedJSON?:
                return (
                    HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                    Data(#"{"access_token": "abc", "refr"#.utf8)
                )
            case nil:
                break
            }
        }
        return try await inner.send(request, body: body)
    }
}

@Suite(.enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct RefreshTests {
    let server: TestServer

    init() throws { server = try TestServer.load() }

    private var presenter: LoopbackPresenter {
        LoopbackPresenter(
            configuration: .init(
                timeout: .seconds(60), opener: TestServer.scriptedBrowser(), output: ConsoleOutput { _ in }))
    }

    private func signedIn(
        store: any TokenStore,
        transport: any HTTPTransport = URLSessionTransport(),
        configuration: ProviderConfiguration? = nil
    ) async throws -> Authenticator {
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration ?? server.configuration()),
            store: store,
            transport: transport
        )
        try await auth.login(presenter: presenter)
        return auth
    }

    /// Sends a raw refresh request, outside NativeAuth.
    private func rawRefresh(_ refreshToken: String) async throws -> (Int, JSONObject?) {
        var request = HTTPRequest(method: .post, url: server.issuer.appendingPathComponent("token/"))
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        let form = FormURLEncoding.encode([
            FormField("grant_type", "refresh_token"), FormField("refresh_token", refreshToken),
            FormField("client_id", server.publicClientID),
        ])
        let (response, body) = try await URLSessionTransport().send(request, body: Data(form.utf8))
        return (response.status.code, try? JSONValue.parse(body).objectValue)
    }

    private func userinfo(_ auth: Authenticator) throws -> HTTPRequest {
        HTTPRequest(method: .get, url: server.issuer.appendingPathComponent("userinfo/"))
    }

    @Test func anExpiredTokenIsRefreshedAndTheOldRefreshTokenIsRejected() async throws {
        let store = MemoryTokenStore()
        let auth = try await signedIn(store: store)
        let before = try #require(try await auth.currentTokens())
        try await auth.expireAccessToken()
        let token = try await auth.accessToken()
        #expect(token != before.accessToken)
        let after = try #require(try await auth.currentTokens())
        #expect(after.refreshToken != before.refreshToken, "rotation is on")
        #expect(await store.load(auth.key) == after)
        let (status, body) = try await rawRefresh(try #require(before.refreshToken))
        #expect(status == 400)
        #expect(try body?.string("error") == "invalid_grant")
    }

    @Test func twoHundredConcurrentSendsAfterExpiryCauseOneRefresh() async throws {
        let transport = CountingTransport()
        let auth = try await signedIn(store: MemoryTokenStore(), transport: transport)
        try await auth.expireAccessToken()
        let request = try userinfo(auth)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await auth.send(request).0.status.code } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(transport.refreshCount == 1)
    }

    @Test func a401AfterAnotherInstanceRefreshedUsesTheStoredTokensWithoutARequest() async throws {
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let counting = CountingTransport()
        let first = try await signedIn(store: store, transport: counting)
        let stale = try await first.accessToken()
        // Another instance (another process, say) refreshes: rotation revokes the old access token.
        let second = Authenticator(
            provider: try GenericOIDCProvider(configuration: server.configuration()), store: store)
        try await second.refresh()
        let (response, _) = try await first.send(try userinfo(first))
        #expect(response.status.code == 200)
        #expect(counting.refreshCount == 0)
        #expect(try await first.accessToken() != stale)
    }

    @Test func aRevokedRefreshTokenMeansLoginRequiredAndIsRemoved() async throws {
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let auth = try await signedIn(store: store)
        let tokens = try #require(try await auth.currentTokens())
        var request = HTTPRequest(method: .post, url: server.issuer.appendingPathComponent("revoke_token/"))
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        let form = FormURLEncoding.encode([
            FormField("token", try #require(tokens.refreshToken)), FormField("client_id", server.publicClientID),
        ])
        let (revoked, _) = try await URLSessionTransport().send(request, body: Data(form.utf8))
        #expect(revoked.status.code == 200)

        let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(error?.isLoginRequired == true)
        let stored = try store.load(auth.key)
        #expect(stored?.refreshToken == nil)
        try await auth.expireAccessToken()
        let again = await #expect(throws: AuthError.self) { try await auth.accessToken() }
        #expect(again?.isLoginRequired == true)
    }

    @Test(arguments: CountingTransport.Fault.allCases)
    func aFailedRefreshLeavesTheStoreByteForByte(fault: CountingTransport.Fault) async throws {
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        _ = try await signedIn(store: store)
        let faulty = Authenticator(
            provider: try GenericOIDCProvider(configuration: server.configuration()),
            store: store,
            transport: CountingTransport(fault: fault)
        )
        try await faulty.expireAccessToken()
        let path = store.path(for: faulty.key)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = await #expect(throws: AuthError.self) { try await faulty.accessToken() }
        #expect(error?.isRetryable == true, "\(String(describing: error))")
        #expect(error?.isLoginRequired == false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func fourProcessesShareOneRefresh() async throws {
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let auth = try await signedIn(store: store)
        let before = try #require(try await auth.currentTokens())
        try await auth.expireAccessToken()
        // The processes reach the token endpoint through a proxy that counts refresh requests.
        let tokenEndpoint = server.issuer.appendingPathComponent("token/")
        let refreshes = Mutex(0)
        let proxy = try await TestHTTPServer.start { request in
            if String(decoding: request.body, as: UTF8.self).contains("grant_type=refresh_token") {
                refreshes.withLock { $0 += 1 }
            }
            var forwarded = HTTPRequest(method: .post, url: tokenEndpoint)
            for (name, value) in request.headers where ["content-type", "authorization"].contains(name.lowercased()) {
                if let field = HTTPField.Name(name) { forwarded.headerFields[field] = value }
            }
            guard let (response, body) = try? await URLSessionTransport().send(forwarded, body: request.body) else {
                return TestResponse(status: 502)
            }
            return TestResponse(
                status: response.status.code,
                headers: [("Content-Type", response.headerFields[.contentType] ?? "application/json")],
                body: body
            )
        }
        let config = directory.path + "/config.json"
        try #"{"token_endpoint": "\#(proxy.url("/token/").absoluteString)"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let arguments = [
            "token", "--issuer", server.issuer.absoluteString, "--client-id", server.publicClientID, "--store",
            directory.path + "/store", "--config", config,
        ]
        let cli = cliPath("oidc-login")
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<4 { group.addTask { try await run(cli, arguments) } }
            return try await group.reduce(into: [CommandResult]()) { $0.append($1) }
        }
        await proxy.stop()
        #expect(refreshes.withLock { $0 } == 1, "exactly one refresh request reached the server")
        let stored = try #require(try store.load(auth.key))
        for result in results {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == stored.accessToken + "\n")
        }
        #expect(stored.accessToken != before.accessToken)
        // Exactly one refresh reached the server: one rotation, so the refresh token before it is
        // refused and the stored one is the only one that works.
        let (oldStatus, _) = try await rawRefresh(try #require(before.refreshToken))
        #expect(oldStatus == 400)
        #expect(stored.refreshToken != before.refreshToken)
    }

    @Test func anExpiredRefreshTokenMeansSignInAgain() async throws {
        let auth = try await signedIn(store: MemoryTokenStore())
        try await auth.expireRefreshToken()
        try await auth.expireAccessToken()
        let error = await #expect(throws: AuthError.self) { try await auth.accessToken() }
        #expect(error?.isLoginRequired == true)
        #expect(error?.oauthError == "invalid_grant")
    }

    @Test func userInfoHasTheTypedClaims() async throws {
        let auth = try await signedIn(store: MemoryTokenStore())
        let info = try await auth.userInfo()
        #expect(info.subject == (try await auth.currentTokens())?.subject)
        #expect(info.email == "alice@example.test")
        #expect(info.emailVerified == true)
        #expect(info.preferredUsername == server.username)
        #expect(info.claims["name"] == "Alice Liddell")
    }

    @Test func logoutRevokesRemovesAndEndsTheSession() async throws {
        var configuration = server.configuration()
        configuration.endpoints.revocation = server.issuer.appendingPathComponent("revoke_token/")
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let auth = try await signedIn(store: store, configuration: configuration)
        let tokens = try #require(try await auth.currentTokens())
        let logoutPresenter = LoopbackPresenter(
            configuration: .init(
                callbackPath: "/logged-out",
                timeout: .seconds(60),
                opener: TestServer.scriptedBrowser(),
                output: ConsoleOutput { _ in }
            )
        )
        let result = try await auth.logout(presenter: logoutPresenter)
        #expect(result.revocationAttempted)
        #expect(result.revocationError == nil)
        #expect(result.endSessionCompleted)
        let url = try #require(result.endSessionURL)
        #expect(url.absoluteString.hasPrefix(server.issuer.absoluteString + "/logout/?id_token_hint="))
        #expect(try store.load(auth.key) == nil)
        #expect(try await auth.currentTokens() == nil)
        let (status, _) = try await rawRefresh(try #require(tokens.refreshToken))
        #expect(status == 400)
    }
}
