import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
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
        try await auth.login(.browser(presenter))
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
