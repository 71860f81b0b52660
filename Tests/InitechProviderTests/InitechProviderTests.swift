import Foundation
import InitechProviderFixture
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Initech Identity as the sample describes it: fixed endpoints, token answers inside `"data"` with
/// `expires_in` as a string, errors as `{"status": "error", "errors": [{"code": …}]}`, `/api/me`
/// inside `"data"`, and a logout page at `/session/end` that returns to `return_to` with `state`.
/// The authorize page approves at once; PKCE is checked; refresh tokens rotate.
final class FakeInitech: Sendable {
    let server: TestHTTPServer
    private let state = NIOLockedValueBox(State())

    private struct State {
        var log: [String] = []
        var codes: [String: (challenge: String, redirect: String)] = [:]
        var refreshTokens: Set<String> = []
        var accessTokens: Set<String> = []
        /// The next token requests answer this Initech error code, with HTTP 400.
        var failNextToken: [String] = []
        /// The next token request answers this instead.
        var nextTokenAnswer: TestResponse?
    }

    private init(server: TestHTTPServer) { self.server = server }

    /// Starts the stand-in: in memory for the library's tests, live for the CLI's.
    static func start(mode: TestServerMode = .inMemory) async throws -> FakeInitech {
        let initech = Shared<FakeInitech?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let fake = initech.value else { return .text("starting", status: 503) }
            return fake.answer(request)
        }
        let fake = FakeInitech(server: server)
        initech.update { $0 = fake }
        return fake
    }

    var host: String { server.url("").absoluteString }
    var requests: [String] { state.withLockedValue { $0.log } }

    func failNextToken(with code: String) { state.withLockedValue { $0.failNextToken.append(code) } }
    func answerNextToken(with response: TestResponse) { state.withLockedValue { $0.nextTokenAnswer = response } }
    func revokeAllRefreshTokens() { state.withLockedValue { $0.refreshTokens.removeAll() } }

    private static func error(_ code: String, status: Int = 400) -> TestResponse {
        .json(
            #"{"status": "error", "errors": [{"code": "\#(code)", "detail": "see the Initech handbook"}]}"#,
            status: status)
    }

    private func bearer(_ request: TestRequest) -> Bool {
        let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
        return state.withLockedValue { $0.accessTokens.contains(token) }
    }

    private func answer(_ request: TestRequest) -> TestResponse {
        state.withLockedValue { $0.log.append(request.path) }
        let query = request.query
        switch (request.method, request.path) {
        case ("GET", "/oauth/authorize"):
            guard query.first(named: "client_id") == "initech-cli",
                query.first(named: "code_challenge_method") == "S256",
                let challenge = query.first(named: "code_challenge"), let redirect = query.first(named: "redirect_uri")
            else { return .text("<html>Bad request</html>", status: 400, contentType: "text/html") }
            let code = "code-" + UUID().uuidString
            state.withLockedValue { $0.codes[code] = (challenge, redirect) }
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
            ])
            return TestResponse(status: 302, headers: [("Location", redirect + "?" + back)])
        case ("POST", "/oauth/token"):
            return token(request.form)
        case ("GET", "/api/me"):
            guard bearer(request) else { return Self.error("ACCESS_TOKEN_INVALID", status: 401) }
            return .json(
                #"{"status": "ok", "data": {"sub": "initech-7", "name": "Peter Gibbons", "email": "peter@initech.example"}}"#
            )
        case ("GET", "/api/reports"):
            guard bearer(request) else { return Self.error("ACCESS_TOKEN_INVALID", status: 401) }
            return .json(#"{"status": "ok", "data": ["TPS report"]}"#)
        case ("GET", "/session/end"):
            guard query.first(named: "client") == "initech-cli", let back = query.first(named: "return_to"),
                back.hasPrefix("http://127.0.0.1:"), let returnState = query.first(named: "state")
            else { return .text("<html>Unknown client</html>", status: 400, contentType: "text/html") }
            return TestResponse(
                status: 302,
                headers: [("Location", back + "?" + FormURLEncoding.encode([FormField("state", returnState)]))]
            )
        default:
            return .text("not found", status: 404)
        }
    }

    private func token(_ form: [FormField]) -> TestResponse {
        let (failure, canned) = state.withLockedValue { state in
            (state.failNextToken.isEmpty ? nil : state.failNextToken.removeFirst(), state.nextTokenAnswer.take())
        }
        if let failure { return Self.error(failure) }
        if let canned { return canned }
        guard form.first(named: "client_id") == "initech-cli" else { return Self.error("CLIENT_UNKNOWN", status: 401) }
        switch form.first(named: "grant_type") {
        case "authorization_code":
            let issued = state.withLockedValue { $0.codes.removeValue(forKey: form.first(named: "code") ?? "") }
            guard let issued, let verifier = form.first(named: "code_verifier"),
                (try? PKCE(verifier: verifier))?.challenge == issued.challenge,
                form.first(named: "redirect_uri") == issued.redirect
            else { return Self.error("AUTH_CODE_INVALID") }
        case "refresh_token":
            let known = state.withLockedValue {
                $0.refreshTokens.remove(form.first(named: "refresh_token") ?? "") != nil
            }
            guard known else { return Self.error("REFRESH_TOKEN_REVOKED") }
        default:
            return Self.error("GRANT_TYPE_UNSUPPORTED")
        }
        let access = "initech-at-" + UUID().uuidString
        let refresh = "initech-rt-" + UUID().uuidString
        IssuedSecrets.record(access, refresh)
        state.withLockedValue { state in
            state.accessTokens.insert(access)
            state.refreshTokens.insert(refresh)
        }
        return .json(
            #"{"status": "ok", "data": {"access_token": "\#(access)", "token_type": "bearer", "#
                + #""expires_in": "3600", "refresh_token": "\#(refresh)", "scope": "profile reports"}}"#
        )
    }
}

extension Optional {
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}

@Suite(.testLogging) struct InitechProviderTests {
    /// NativeAuthTesting's suite, with Initech's documented codes in its own error format.
    @Test func theErrorMapperConforms() throws {
        func initech(_ code: String) -> String {
            #"{"status": "error", "errors": [{"code": "\#(code)", "detail": "x"}]}"#
        }
        try ErrorMapperConformance(
            InitechErrorMapper(),
            own: [
                .init(
                    .refresh, status: 401, json: initech("REFRESH_TOKEN_EXPIRED"), expecting: .loginRequired,
                    oauthError: "REFRESH_TOKEN_EXPIRED"),
                .init(
                    .tokenExchange, status: 400, json: initech("AUTH_CODE_INVALID"), expecting: .tokenExchangeFailed,
                    oauthError: "AUTH_CODE_INVALID"),
                .init(.tokenExchange, status: 400, json: initech("CLIENT_UNKNOWN"), expecting: .configurationInvalid),
            ]
        ).run()
    }

    func authenticator(_ initech: FakeInitech, store: any TokenStore = MemoryTokenStore()) throws -> Authenticator {
        var registry = ProviderRegistry()
        try registry.register(InitechProvider.self)
        let configuration = ProviderConfiguration(
            provider: InitechProvider.id,
            clientID: "initech-cli",
            scopes: ["profile", "reports"],
            additional: ["host": .string(initech.host)]
        )
        return Authenticator(
            provider: try registry.makeProvider(configuration), store: store, transport: initech.server.transport)
    }

    /// Approves at once: follows the authorize (and logout) pages' redirects back, in memory.
    func presenter(_ initech: FakeInitech) -> RedirectFollowingPresenter {
        RedirectFollowingPresenter(transport: initech.server.transport)
    }

    @Test func signsInReadingTheDataEnvelopeRefreshesAndLogsOutThroughItsPage() async throws {
        let initech = try await FakeInitech.start()
        let auth = try authenticator(initech)
        let tokens = try await auth.login(.browser(presenter(initech)))
        #expect(tokens.accessToken.hasPrefix("initech-at-"), "read from inside \"data\"")
        #expect(tokens.refreshToken?.hasPrefix("initech-rt-") == true)
        #expect(tokens.tokenType == "bearer")
        let lifetime = try #require(tokens.expiresAt).timeIntervalSince(tokens.issuedAt)
        #expect(abs(lifetime - 3600) < 1, "expires_in \"3600\", a string, is one hour")
        #expect(initech.requests.prefix(2) == ["/oauth/authorize", "/oauth/token"], "no discovery")

        let user = try await auth.userInfo()
        #expect(user.subject == "initech-7", "the claims come from inside \"data\"")
        #expect(user.name == "Peter Gibbons")

        let refreshed = try await auth.refresh()
        #expect(refreshed.accessToken != tokens.accessToken)
        #expect(refreshed.refreshToken != tokens.refreshToken, "Initech rotates refresh tokens")

        let result = try await auth.logout(presenter: presenter(initech))
        #expect(!result.revocationAttempted, "Initech has no revocation endpoint")
        #expect(result.endSessionCompleted, "the logout page came back with our state")
        let logout = try #require(result.endSessionURL)
        #expect(logout.path == "/session/end")
        let query = FormURLEncoding.decode(try #require(logout.query))
        #expect(query.first(named: "client") == "initech-cli")
        #expect(query.first(named: "return_to")?.hasPrefix("http://127.0.0.1:") == true)
        #expect(try await auth.currentTokens() == nil)
        await initech.server.stop()
    }

    @Test func initechErrorCodesAreMappedAndKept() async throws {
        let initech = try await FakeInitech.start()
        let auth = try authenticator(initech)

        initech.failNextToken(with: "AUTH_CODE_EXPIRED")
        let exchange = await #expect(throws: AuthError.self) { try await auth.login(.browser(presenter(initech))) }
        #expect(exchange?.code == .tokenExchangeFailed)
        #expect(exchange?.oauthError == "AUTH_CODE_EXPIRED")
        #expect(exchange?.message.contains("see the Initech handbook") == false, "the server's prose is not copied")
        #expect(try await auth.currentTokens() == nil, "nothing is stored")

        let tokens = try await auth.login(.browser(presenter(initech)))
        initech.revokeAllRefreshTokens()
        let refresh = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(refresh?.code == .loginRequired, "a revoked Initech session means signing in again")
        #expect(refresh?.oauthError == "REFRESH_TOKEN_REVOKED")
        #expect(refresh?.hint == "sign in again")
        #expect(try await auth.currentTokens()?.accessToken == tokens.accessToken, "nothing else is lost")

        let stranger = Authenticator(
            provider: try InitechProvider(
                configuration: ProviderConfiguration(
                    clientID: "someone-else", scopes: ["profile"], additional: ["host": .string(initech.host)])),
            store: MemoryTokenStore(),
            transport: initech.server.transport
        )
        initech.answerNextToken(
            with: .json(#"{"status": "error", "errors": [{"code": "CLIENT_UNKNOWN"}]}"#, status: 401))
        let unknown = await #expect(throws: AuthError.self) {
            try await stranger.login(.browser(AutoApprovingPresenter { _ in "x" }))
        }
        #expect(unknown?.code == .configurationInvalid)
        #expect(unknown?.hint?.contains("--client-id") == true)
        await initech.server.stop()
    }

    @Test func answersOutsideTheDialectGetTheStandardTreatment() async throws {
        let initech = try await FakeInitech.start()
        let auth = try authenticator(initech)
        let approve = AutoApprovingPresenter { _ in "unused" }

        initech.answerNextToken(
            with: .text("<html><h1>502 Bad Gateway</h1></html>", status: 502, contentType: "text/html"))
        let proxy = await #expect(throws: AuthError.self) { try await auth.login(.browser(approve)) }
        #expect(proxy?.code == .serverError, "\(String(describing: proxy))")

        initech.answerNextToken(with: .json(#"{"status": "ok"}"#))
        let empty = await #expect(throws: AuthError.self) { try await auth.login(.browser(approve)) }
        #expect(empty?.code == .responseMalformed, "\(String(describing: empty))")
        #expect(empty?.message.contains("data") == true, "\(String(describing: empty))")

        initech.answerNextToken(with: .json(#"{"status": "ok", "data": {"access_token": "a", "expires_in": "soon"}}"#))
        let badLifetime = await #expect(throws: AuthError.self) { try await auth.login(.browser(approve)) }
        #expect(badLifetime?.code == .responseMalformed, "\(String(describing: badLifetime))")
        #expect(badLifetime?.message.contains("expires_in") == true, "\(String(describing: badLifetime))")

        initech.failNextToken(with: "SOMETHING_NEW")
        let unknownCode = await #expect(throws: AuthError.self) { try await auth.login(.browser(approve)) }
        #expect(unknownCode?.code == .tokenExchangeFailed, "an unknown code falls back to the HTTP status")
        #expect(try await auth.currentTokens() == nil)
        await initech.server.stop()
    }

    @Test func theHostIsCheckedAndBecomesTheTokenIssuer() throws {
        let provider = try InitechProvider(configuration: ProviderConfiguration(clientID: "c"))
        #expect(provider.tokenIssuer == InitechProvider.defaultHost)
        let bad = #expect(throws: AuthError.self) {
            try InitechProvider(configuration: ProviderConfiguration(clientID: "c", additional: ["host": "not a url"]))
        }
        #expect(bad?.code == .configurationInvalid)
        #expect(bad?.message.contains("host") == true)
    }
}

@Suite(.testLogging) struct InitechLoginCLITests {
    /// A provider written outside the core declares `host`; its CLI offers it without a line of its own.
    @Test func theHostOptionDerivesFromTheDeclaration() async throws {
        #expect(
            try await problemsWithDeclaredSettings(cli: cliPath("initech-login"), settings: InitechProvider.settings)
                == [])
    }

    /// Every command at trace level, with a client secret: no token and no secret on screen.
    @Test func everyCommandAtTraceLevelPrintsNoTokenAndNoSecret() async throws {
        let initech = try await FakeInitech.start(mode: .live)
        let directory = try TemporaryDirectory()
        let secret = "initech-client-secret-8d2e7b"
        let run = try await runEveryCommand(
            cliPath("initech-login"),
            connection: [
                "--host", initech.host, "--client-id", "initech-cli", "--client-secret", secret, "--client-auth",
                "post", "--scope",
                "profile reports", "--store", directory.path + "/store",
            ],
            store: directory.path + "/store",
            apiPath: "/api/reports",
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_LOG_LEVEL": "trace"]
        )
        // At least 3 tokens: an access and a refresh token, and a new access token.
        #expect(run.problems(minimumTokens: 3, besides: [secret]) == [])
        await initech.server.stop()
    }

    @Test func signsInShowsUserinfoCallsTheAPIRefreshesAndLogsOut() async throws {
        let initech = try await FakeInitech.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("initech-login")
        let common = [
            "--host", initech.host, "--client-id", "initech-cli", "--scope", "profile reports",
            "--store", directory.path + "/store",
        ]
        let browser = ["BROWSER": redirectFollowingBrowser]
        let login = try await run(cli, ["login"] + common, environment: browser)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Signed in"), "\(login.stdout)")

        let userinfo = try await run(cli, ["userinfo", "--json"] + common)
        #expect(userinfo.status == 0, "\(userinfo.stderr)")
        #expect(userinfo.stdout.contains("Peter Gibbons"))

        let api = try await run(cli, ["api", "/api/reports"] + common)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("TPS report"))

        let before = try await run(cli, ["token"] + common)
        let refresh = try await run(cli, ["refresh"] + common)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let after = try await run(cli, ["token"] + common)
        #expect(before.stdout != after.stdout && !after.stdout.isEmpty, "a new access token")

        let logout = try await run(cli, ["logout"] + common, environment: browser)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(initech.requests.last == "/session/end", "the logout page was opened")
        let status = try await run(cli, ["status", "--json"] + common)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == false)
        for output in [login, userinfo, api, refresh, logout, status] {
            #expect(!(output.stdout + output.stderr).contains("initech-rt-"), "no refresh token is printed")
        }
        await initech.server.stop()
    }
}
