import Crypto
import Foundation
import HTTPTypes
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthGitHub
import TestSupport
import Testing

/// A GitHub stand-in that behaves as GitHub's documentation describes: token answers as JSON or
/// form-encoded by `Accept` (or always form-encoded, like old Enterprise Servers), errors with
/// HTTP 200, PKCE, the device flow with `slow_down`, expiring and non-expiring tokens, and
/// `GET /api/v3/user` with 401 `Bad credentials`.
final class FakeGitHub: Sendable {
    struct Settings: Sendable {
        var alwaysForm = false
        var expiring = false
        var deviceFlowEnabled = true
        var devicePolls: [String] = []
    }

    let server: TestHTTPServer
    private let settings: NIOLockedValueBox<Settings>
    private let requests = NIOLockedValueBox<[(path: String, form: [FormField], accept: String?)]>([])
    private let validTokens = NIOLockedValueBox<Set<String>>([])
    private let validRefresh = NIOLockedValueBox<Set<String>>([])

    private init(server: TestHTTPServer, settings: Settings) {
        self.server = server
        self.settings = NIOLockedValueBox(settings)
    }

    /// Starts the stand-in: in memory for the library's tests, live for the CLI's.
    static func start(_ settings: Settings = Settings(), mode: TestServerMode = .inMemory) async throws -> FakeGitHub {
        let holder = Shared<FakeGitHub?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let github = holder.value else { return .text("starting", status: 503) }
            return github.answer(request)
        }
        let github = FakeGitHub(server: server, settings: settings)
        holder.update { $0 = github }
        return github
    }

    var host: String { server.url("").absoluteString }
    func form(of path: String) -> [[FormField]] {
        requests.withLockedValue { $0.filter { $0.path == path }.map(\.form) }
    }
    func accepts(of path: String) -> [String?] {
        requests.withLockedValue { $0.filter { $0.path == path }.map(\.accept) }
    }

    private func answer(_ request: TestRequest) -> TestResponse {
        let path = request.uri.split(separator: "?").first.map(String.init) ?? ""
        let form = FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self))
        requests.withLockedValue { $0.append((path, form, request.header("Accept"))) }
        let settings = settings.withLockedValue { $0 }
        let json = request.header("Accept")?.contains("application/json") == true && !settings.alwaysForm
        func reply(_ fields: [(String, String)]) -> TestResponse {
            if json {
                let members = fields.map { key, value in
                    let rendered = Int(value) != nil ? value : "\"\(value)\""
                    return "\"\(key)\": \(rendered)"
                }
                return .json("{" + members.joined(separator: ", ") + "}")
            }
            return .text(
                FormURLEncoding.encode(fields.map { FormField($0.0, $0.1) }), contentType: FormURLEncoding.mediaType)
        }
        func error(_ code: String) -> TestResponse {
            reply([
                ("error", code), ("error_description", "The \(code) happened."),
                ("error_uri", "https://docs.github.com/x"),
            ])
        }
        func tokens() -> TestResponse {
            let access = "gho_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            validTokens.withLockedValue { _ = $0.insert(access) }
            IssuedSecrets.record(access)
            var fields = [("access_token", access), ("token_type", "bearer"), ("scope", "repo,read:org")]
            if settings.expiring {
                let refresh = "ghr_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
                validRefresh.withLockedValue { _ = $0.insert(refresh) }
                IssuedSecrets.record(refresh)
                fields += [
                    ("expires_in", "28800"), ("refresh_token", refresh), ("refresh_token_expires_in", "15897600"),
                ]
            }
            return reply(fields)
        }

        switch path {
        case "/login/oauth/authorize":
            // Approves at once: back to the app with a code that carries the PKCE challenge.
            let query = FormURLEncoding.decode(request.uri.split(separator: "?", maxSplits: 1).last ?? "")
            let back = [
                FormField("code", "code:" + (query.first(named: "code_challenge") ?? "")),
                FormField("state", query.first(named: "state") ?? ""),
            ]
            let redirect = (query.first(named: "redirect_uri") ?? "") + "?" + FormURLEncoding.encode(back)
            return TestResponse(status: 302, headers: [("Location", redirect)])
        case "/login/device/code":
            guard settings.deviceFlowEnabled else { return error("device_flow_disabled") }
            return reply([
                ("device_code", "device-code-value"), ("user_code", "WDJB-MJHT"),
                ("verification_uri", host + "/login/device"), ("expires_in", "900"), ("interval", "1"),
            ])
        case "/login/oauth/access_token":
            if form.first(named: "grant_type") == "urn:ietf:params:oauth:grant-type:device_code" {
                let next = self.settings.withLockedValue { $0.devicePolls.isEmpty ? "" : $0.devicePolls.removeFirst() }
                switch next {
                case "": return tokens()
                case "slow_down": return reply([("error", "slow_down"), ("interval", "6")])
                default: return error(next)
                }
            }
            guard form.first(named: "client_secret") == "github-client-secret-5d8e0b" else {
                return error("incorrect_client_credentials")
            }
            if form.first(named: "grant_type") == "refresh_token" {
                let token = form.first(named: "refresh_token") ?? ""
                guard validRefresh.withLockedValue({ $0.remove(token) }) != nil else {
                    return error("bad_refresh_token")
                }
                return tokens()
            }
            // The code carries the PKCE challenge (see the presenter); the verifier must match it.
            let code = form.first(named: "code") ?? ""
            guard code.hasPrefix("code:") else { return error("bad_verification_code") }
            let verifier = form.first(named: "code_verifier") ?? ""
            let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            guard challenge == code.dropFirst(5) else { return error("bad_verification_code") }
            return tokens()
        case "/api/v3/user":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard validTokens.withLockedValue({ $0.contains(token) }) else {
                return .json(
                    #"{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}"#, status: 401
                )
            }
            return .json(#"{"login": "octocat", "id": 583231, "name": "The Octocat", "email": null}"#)
        default:
            return .text("Not Found", status: 404)
        }
    }
}

/// The presenter: approves at once, passing the PKCE challenge in the code.
private let approve = AutoApprovingPresenter { fields in "code:" + (fields.first(named: "code_challenge") ?? "") }

@Suite(.testLogging) struct GitHubErrorMapperTests {
    /// NativeAuthTesting's suite, with GitHub's documented codes sent as GitHub sends them:
    /// form-encoded, with HTTP 200.
    @Test func conformsAndMapsGitHubsOwnCodes() throws {
        try ErrorMapperConformance(
            GitHubErrorMapper(),
            own: [
                .init(
                    .refresh, status: 200, form: "error=bad_refresh_token", expecting: .loginRequired,
                    oauthError: "bad_refresh_token"),
                .init(
                    .tokenExchange, status: 200, form: "error=bad_verification_code", expecting: .tokenExchangeFailed,
                    oauthError: "bad_verification_code"),
                .init(
                    .tokenExchange, status: 200, form: "error=incorrect_client_credentials",
                    expecting: .configurationInvalid, oauthError: "incorrect_client_credentials"),
                .init(
                    .deviceAuthorization, status: 200, form: "error=device_flow_disabled",
                    expecting: .configurationInvalid, oauthError: "device_flow_disabled"),
                .init(.apiRequest, status: 401, json: #"{"message": "Bad credentials"}"#, expecting: .invalidToken),
            ]
        ).run()
    }

    @Test(
        arguments: [
            ("bad_verification_code", AuthOperation.tokenExchange, AuthError.Code.tokenExchangeFailed, nil),
            ("incorrect_client_credentials", .tokenExchange, .configurationInvalid, "--client-secret"),
            ("redirect_uri_mismatch", .tokenExchange, .configurationInvalid, "http://127.0.0.1/callback"),
            ("bad_refresh_token", .refresh, .loginRequired, "sign in again"),
            ("unsupported_grant_type", .tokenExchange, .configurationInvalid, nil),
            ("device_flow_disabled", .deviceAuthorization, .configurationInvalid, "Device Flow"),
            ("incorrect_device_code", .tokenExchange, .tokenExchangeFailed, nil),
            ("authorization_pending", .tokenExchange, .tokenExchangeFailed, nil),
        ] as [(String, AuthOperation, AuthError.Code, String?)])
    func mapsGitHubsCodesSentWithHTTP200(error: String, operation: AuthOperation, code: AuthError.Code, hint: String?)
        throws
    {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = FormURLEncoding.mediaType
        let body = Data("error=\(error)&error_description=Something&error_uri=https%3A%2F%2Fdocs.github.com".utf8)
        let client = ExchangeClient.forTests(try GitHubProvider(configuration: ProviderConfiguration(clientID: "c")))
        let mapped = #expect(throws: AuthError.self) {
            try client.read(response, body, operation: operation, requiredKey: "access_token") { fields in
                try TokenResponseDecoder.decode(fields, context: .init(requestedScopes: [], receivedAt: Date()))
            }
            .mapError(\.error).get()
        }
        #expect(mapped?.code == code)
        #expect(mapped?.oauthError == error, "the OAuth code is kept (the device poll reads it)")
        if let hint { #expect(mapped?.hint?.contains(hint) == true, "\(mapped?.hint ?? "no hint")") }
    }
}

@Suite(.testLogging) struct GitHubProviderTests {
    /// GitHub's device flow takes no client secret. The provider knows a request belongs to it by
    /// the request's operation and grant, never by reading the form.
    @Test func theSecretIsLeftOutByTheGrantNotByTheForm() throws {
        let provider = try GitHubProvider(
            configuration: ProviderConfiguration(clientID: "Iv1.c", clientSecret: "github-client-secret-5d8e0b"))
        let url = try #require(URL(string: "https://github.com/login/oauth/access_token"))
        let metadata = ProviderMetadata(issuer: nil, authorizationEndpoint: url, tokenEndpoint: url)
        func prepared(_ request: OAuthRequest) -> [FormField] {
            var request = request
            provider.prepare(&request, metadata: metadata)
            return request.form
        }
        let device = prepared(OAuthRequest(tokenEndpoint: url, grant: .deviceCode("dc")))
        #expect(device.first(named: "client_secret") == nil)
        #expect(device.first(named: "client_id") == "Iv1.c")
        let deviceAuthorization = prepared(OAuthRequest(url: url, operation: .deviceAuthorization, form: []))
        #expect(deviceAuthorization.first(named: "client_secret") == nil)
        // A form that merely looks like the device flow's changes nothing.
        var disguised = OAuthRequest(tokenEndpoint: url, grant: .refreshToken("rt"))
        disguised.setForm("grant_type", Grant.Kind.deviceCode.rawValue)
        #expect(prepared(disguised).first(named: "client_secret") == "github-client-secret-5d8e0b")
    }

    private func provider(_ github: FakeGitHub, secret: String? = "github-client-secret-5d8e0b") throws
        -> GitHubProvider
    {
        try GitHubProvider(
            configuration: ProviderConfiguration(
                clientID: "Iv1.client",
                clientSecret: secret,
                scopes: ["repo", "read:org"],
                additional: ["host": .string(github.host)]
            )
        )
    }

    private func authenticator(
        _ github: FakeGitHub,
        secret: String? = "github-client-secret-5d8e0b",
        clock: AuthClock = .system
    ) throws -> Authenticator {
        Authenticator(
            provider: try provider(github, secret: secret), store: MemoryTokenStore(),
            transport: github.server.transport,
            clock: clock)
    }

    @Test func endpointsAreStaticForGitHubAndEnterpriseServers() async throws {
        let dotCom = try GitHubProvider(configuration: ProviderConfiguration(clientID: "c"))
        #expect(dotCom.apiBaseURL?.absoluteString == "https://api.github.com")
        let metadata = try await ExchangeClient.forTests(dotCom).metadata()
        #expect(metadata.authorizationEndpoint.absoluteString == "https://github.com/login/oauth/authorize")
        #expect(metadata.tokenEndpoint.absoluteString == "https://github.com/login/oauth/access_token")
        #expect(metadata.deviceAuthorizationEndpoint?.absoluteString == "https://github.com/login/device/code")
        #expect(metadata.userInfoEndpoint?.absoluteString == "https://api.github.com/user")

        let enterprise = try GitHubProvider(
            configuration: ProviderConfiguration(clientID: "c", additional: ["host": "https://github.example.com/"]))
        #expect(enterprise.apiBaseURL?.absoluteString == "https://github.example.com/api/v3")
        #expect(
            try await ExchangeClient.forTests(enterprise).metadata().userInfoEndpoint?.absoluteString
                == "https://github.example.com/api/v3/user")
        #expect(enterprise.tokenIssuer == "https://github.example.com")

        #expect(throws: AuthError.self) {
            try GitHubProvider(configuration: ProviderConfiguration(clientID: "c", additional: ["host": "not a url"]))
        }
    }

    @Test func aFormEncodedAnswerWithNonExpiringTokenSignsIn() async throws {
        let github = try await FakeGitHub.start(.init(alwaysForm: true))
        let auth = try authenticator(github)
        let tokens = try await auth.login(.browser(approve))
        #expect(tokens.accessToken.hasPrefix("gho_"))
        #expect(tokens.scopes == ["repo", "read:org"], "comma-separated scope")
        #expect(tokens.expiresAt == nil, "a non-expiring token")
        #expect(tokens.refreshToken == nil)
        #expect(tokens.idToken == nil)
        let exchange = try #require(github.form(of: "/login/oauth/access_token").first)
        #expect(
            exchange.first(named: "client_secret") == "github-client-secret-5d8e0b",
            "GitHub wants the secret even with PKCE")
        #expect(exchange.first(named: "code_verifier") != nil)
        #expect(github.accepts(of: "/login/oauth/access_token").first == "application/json")
        await github.server.stop()
    }

    @Test func expiringTokensRefreshWithRotation() async throws {
        let github = try await FakeGitHub.start(.init(expiring: true))
        let auth = try authenticator(github)
        let first = try await auth.login(.browser(approve))
        #expect(first.refreshToken?.hasPrefix("ghr_") == true)
        #expect(first.expiresAt != nil)
        let second = try await auth.refresh()
        #expect(second.accessToken != first.accessToken)
        #expect(second.refreshToken != first.refreshToken)
        await github.server.stop()
    }

    @Test func errorsSentWithHTTP200AreErrors() async throws {
        let github = try await FakeGitHub.start(.init(expiring: true))
        let wrongSecret = await #expect(throws: AuthError.self) {
            try await authenticator(github, secret: "wrong").login(.browser(approve))
        }
        #expect(wrongSecret?.code == .configurationInvalid)
        #expect(wrongSecret?.oauthError == "incorrect_client_credentials")
        #expect(wrongSecret?.hint?.contains("--client-secret") == true)

        let badCode = await #expect(throws: AuthError.self) {
            try await authenticator(github).login(.browser(AutoApprovingPresenter { _ in "stale" }))
        }
        #expect(badCode?.code == .tokenExchangeFailed)
        #expect(badCode?.oauthError == "bad_verification_code")

        let auth = try authenticator(github)
        try await auth.login(.browser(approve))
        try await auth.expireRefreshToken()
        let refused = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(refused?.code == .loginRequired)
        #expect(refused?.oauthError == "bad_refresh_token")
        await github.server.stop()
    }

    @Test func theDeviceFlowSendsNoSecretAndHonoursSlowDown() async throws {
        let github = try await FakeGitHub.start(
            .init(devicePolls: ["authorization_pending", "slow_down", "authorization_pending"]))
        let clock = TestClock()
        let auth = try authenticator(github, clock: clock.clock)
        let tokens = try await auth.login(.device(TerminalDeviceCodeDisplay(output: ConsoleOutput { _ in })))
        #expect(tokens.accessToken.hasPrefix("gho_"))
        #expect(
            clock.sleeps == [.seconds(1), .seconds(1), .seconds(6), .seconds(6)], "slow_down carries GitHub's interval")
        let requests = github.form(of: "/login/device/code") + github.form(of: "/login/oauth/access_token")
        #expect(requests.count == 5)
        #expect(requests.allSatisfy { $0.first(named: "client_secret") == nil }, "no secret in the device flow")
        #expect(requests.allSatisfy { $0.first(named: "client_id") == "Iv1.client" })
        await github.server.stop()
    }

    @Test func aDisabledDeviceFlowSaysWhatToEnable() async throws {
        let github = try await FakeGitHub.start(.init(deviceFlowEnabled: false))
        let error = await #expect(throws: AuthError.self) {
            try await authenticator(github).login(.device(TerminalDeviceCodeDisplay(output: ConsoleOutput { _ in })))
        }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.hint?.contains("Device Flow") == true)
        await github.server.stop()
    }

    @Test func userInfoIsTheUserAndBadCredentialsIsInvalidToken() async throws {
        let github = try await FakeGitHub.start()
        let store = MemoryTokenStore()
        let auth = Authenticator(provider: try provider(github), store: store, transport: github.server.transport)
        try await auth.login(.browser(approve))
        let user = try await auth.userInfo()
        #expect(user.subject == "583231")
        #expect(user.preferredUsername == "octocat")
        #expect(user.name == "The Octocat")

        // A token GitHub no longer knows (revoked on the website): no refresh token to try.
        var revoked = try #require(await store.load(auth.key))
        revoked.accessToken = "gho_revoked"
        await store.save(revoked, for: auth.key)
        let fresh = Authenticator(provider: try provider(github), store: store, transport: github.server.transport)
        let error = await #expect(throws: AuthError.self) { try await fresh.userInfo() }
        #expect(error?.code == .invalidToken, "\(String(describing: error))")
        #expect(error?.message == "GitHub refused the token (Bad credentials)")
        #expect(error?.message.contains("gho_revoked") == false)
        await github.server.stop()
    }
}

@Suite(.testLogging) struct GitHubLoginCLITests {
    /// GitHub declares `host` once; github-login and nativeauth derive `--host` and `NATIVEAUTH_HOST`.
    @Test func theHostOptionDerivesFromTheDeclaration() async throws {
        #expect(
            try await problemsWithDeclaredSettings(cli: cliPath("github-login"), settings: GitHubProvider.settings)
                == [])
        #expect(
            try await problemsWithDeclaredSettings(
                cli: cliPath("nativeauth"), settings: GitHubProvider.settings, arguments: ["--provider", "github"])
                == [])
    }

    @Test func signsInCallsTheAPIRefreshesAndLogsOut() async throws {
        let github = try await FakeGitHub.start(.init(expiring: true), mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("github-login")
        let common = [
            "--host", github.host, "--client-id", "Iv1.client", "--client-secret", "github-client-secret-5d8e0b",
            "--store",
            directory.path + "/store",
        ]
        // The "browser" follows the authorize redirect back to the loopback receiver.
        let browser = redirectFollowingBrowser
        let login = try await run(cli, ["login"] + common, environment: ["BROWSER": browser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as octocat\n")

        let status = try await run(cli, ["status", "--json"] + common)
        #expect(status.status == 0)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true)
        #expect(object["scope"] == ["repo", "read:org"])
        #expect(object["has_refresh_token"] == true)
        // GitHub's login names the account; its refresh_token_expires_in is how long it lasts.
        #expect(object["account"] == "octocat")
        #expect(object["subject"] != .null, "the subject comes from GET /user")
        let until = try #require(object["refresh_expires_at"]?.stringValue)
        let expiry = try #require(try? Date(until, strategy: .iso8601))
        #expect(abs(expiry.timeIntervalSinceNow - 15_897_600) < 120)
        let text = try await run(cli, ["status"] + common)
        #expect(text.stdout.contains("Signed in until: "), "\(text.stdout)")

        let api = try await run(cli, ["api", "/user"] + common)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("\"login\": \"octocat\""))

        let refresh = try await run(cli, ["refresh"] + common)
        #expect(refresh.status == 0, "\(refresh.stderr)")

        let logout = try await run(cli, ["logout", "--no-browser"] + common)
        #expect(logout.status == 0, "\(logout.stderr)")
        let after = try await run(cli, ["status", "--json"] + common)
        #expect(try JSONValue.parse(after.stdout).objectValue?["signed_in"] == false)

        for result in [login, status, api, refresh, logout, after] {
            #expect(!result.stdout.contains("gho_") && !result.stderr.contains("gho_"), "no token on screen")
            #expect(!result.stderr.contains("github-client-secret-5d8e0b"))
        }
        await github.server.stop()
    }
}

extension GitHubLoginCLITests {
    /// Every command at trace level, with a client secret: no token and no secret on screen.
    @Test func everyCommandAtTraceLevelPrintsNoTokenAndNoSecret() async throws {
        let github = try await FakeGitHub.start(.init(expiring: true), mode: .live)
        let directory = try TemporaryDirectory()
        let run = try await runEveryCommand(
            cliPath("github-login"),
            connection: [
                "--host", github.host, "--client-id", "Iv1.client", "--client-secret", "github-client-secret-5d8e0b",
                "--store",
                directory.path + "/store",
            ],
            store: directory.path + "/store",
            apiPath: "/user",
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_LOG_LEVEL": "trace"]
        )
        // At least 3 tokens: an access and a refresh token, and a new access token.
        #expect(run.problems(minimumTokens: 3, besides: ["github-client-secret-5d8e0b"]) == [])
        await github.server.stop()
    }

    @Test func theDeviceFlowPrintsCodeAndOpenAndSignsIn() async throws {
        let github = try await FakeGitHub.start(.init(devicePolls: ["authorization_pending"]), mode: .live)
        let directory = try TemporaryDirectory()
        let login = try await run(
            cliPath("github-login"),
            ["login", "--device", "--host", github.host, "--client-id", "Iv1.client", "--store", directory.path + "/s"]
        )
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("\nCode: WDJB-MJHT\n"))
        #expect(login.stderr.contains("\nOpen: \(github.host)/login/device\n"))
        #expect(login.stdout == "Signed in as octocat\n")
        await github.server.stop()
    }
}

@Suite(.testLogging) struct NativeAuthCLIWithGitHubTests {
    @Test func theAllProvidersCLIPicksGitHubFromTheConfigFile() async throws {
        let github = try await FakeGitHub.start(mode: .live)
        let directory = try TemporaryDirectory()
        let config = directory.path + "/github.json"
        try #"{"provider": "github", "host": "\#(github.host)", "client_id": "Iv1.client", "scope": "repo read:org"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let cli = cliPath("nativeauth")
        let common = [
            "--config", config, "--client-secret", "github-client-secret-5d8e0b", "--store", directory.path + "/store",
        ]
        let browser = redirectFollowingBrowser
        let login = try await run(cli, ["login"] + common, environment: ["BROWSER": browser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as octocat\n")
        let api = try await run(cli, ["api", "/user"] + common)
        #expect(api.stdout.contains("octocat"), "\(api.stderr)")

        let unknown = try await run(cli, ["status", "--provider", "acme", "--client-id", "c"])
        #expect(unknown.status == 1)
        #expect(
            unknown.stderr.contains("registered: auth0, cognito, entra, github, gitlab, google, keycloak, oidc, okta"))
        await github.server.stop()
    }
}
