import Crypto
import Foundation
import HTTPTypes
import HTTPTypesFoundation
import JWTKit
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthCognito
import TestSupport
import Testing

/// ID token claims for the fake.
struct CognitoClaims: JWTPayload {
    var iss: String
    var sub = "6f1c7a2e-cognito-user"
    var aud: String
    var exp: Int
    var iat: Int
    var nonce: String?
    var email = "user@example.test"
    var tokenUse = "id"

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, email
        case tokenUse = "token_use"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A Cognito user pool stand-in, as AWS documents it: discovery at the issuer (the pool path), the
/// hosted UI on the same host (authorize approves at once), tokens with signed ID tokens, refresh
/// without rotation, `/oauth2/revoke` for refresh tokens only, `/oauth2/userInfo` with
/// `email_verified` as a string, and `/logout` that checks `client_id` and `logout_uri`.
final class FakeCognito: Sendable {
    let server: TestHTTPServer
    let key = ES256PrivateKey()
    let allowedLogoutURI: String
    private let log = NIOLockedValueBox<[String]>([])
    private let nonces = NIOLockedValueBox<[String: String]>([:])
    private let refreshTokens = NIOLockedValueBox<Set<String>>([])
    private let accessTokens = NIOLockedValueBox<Set<String>>([])

    private init(server: TestHTTPServer, allowedLogoutURI: String) {
        self.server = server
        self.allowedLogoutURI = allowedLogoutURI
    }

    /// Starts the stand-in: in memory for the library's tests, live for the CLI's.
    static func start(mode: TestServerMode = .inMemory) async throws -> FakeCognito {
        let holder = Shared<FakeCognito?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let cognito = holder.value else { return .text("starting", status: 503) }
            return await cognito.answer(request)
        }
        let cognito = FakeCognito(server: server, allowedLogoutURI: server.url("/signed-out").absoluteString)
        holder.update { $0 = cognito }
        return cognito
    }

    var issuer: String { server.url("/eu-west-1_TestPool").absoluteString }
    var domain: String { server.url("").absoluteString }
    var requests: [String] { log.withLockedValue { $0 } }

    private func idToken(nonce: String?) async -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: "cognito-key")
        let now = Int(Date().timeIntervalSince1970)
        let claims = CognitoClaims(iss: issuer, aud: "cognito-client", exp: now + 3600, iat: now, nonce: nonce)
        return (try? await keys.sign(claims, kid: "cognito-key")) ?? ""
    }

    private func answer(_ request: TestRequest) async -> TestResponse {
        let parts = request.uri.split(separator: "?", maxSplits: 1)
        let path = parts.first.map(String.init) ?? ""
        let query = FormURLEncoding.decode(parts.count > 1 ? parts[1] : "")
        let form = FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self))
        log.withLockedValue { $0.append(path) }
        switch path {
        case "/eu-west-1_TestPool/.well-known/openid-configuration":
            return .json(
                #"{"issuer": "\#(issuer)", "authorization_endpoint": "\#(domain)/oauth2/authorize", "#
                    + #""token_endpoint": "\#(domain)/oauth2/token", "userinfo_endpoint": "\#(domain)/oauth2/userInfo", "#
                    + #""end_session_endpoint": "\#(domain)/not-the-logout-page", "#
                    + #""jwks_uri": "\#(issuer)/.well-known/jwks.json", "response_types_supported": ["code", "token"], "#
                    + #""id_token_signing_alg_values_supported": ["ES256"], "token_endpoint_auth_methods_supported": "#
                    + #"["client_secret_basic", "client_secret_post"], "scopes_supported": ["openid", "email", "phone", "profile"]}"#
            )
        case "/eu-west-1_TestPool/.well-known/jwks.json":
            let parameters = key.publicKey.parameters
            return .json(
                #"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "cognito-key", "use": "sig", "#
                    + #""x": "\#(parameters?.x ?? "")", "y": "\#(parameters?.y ?? "")"}]}"#)
        case "/oauth2/authorize":
            let code = UUID().uuidString
            nonces.withLockedValue { $0[code] = query.first(named: "nonce") }
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (query.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/oauth2/token":
            let access = "access-" + UUID().uuidString
            accessTokens.withLockedValue { _ = $0.insert(access) }
            IssuedSecrets.record(access)
            if form.first(named: "grant_type") == "refresh_token" {
                guard refreshTokens.withLockedValue({ $0.contains(form.first(named: "refresh_token") ?? "") }) else {
                    return .json(#"{"error": "invalid_grant"}"#, status: 400)
                }
                // No rotation: no refresh_token in the answer.
                let id = await idToken(nonce: nil)
                IssuedSecrets.record(id)
                return .json(
                    #"{"access_token": "\#(access)", "id_token": "\#(id)", "#
                        + #""token_type": "Bearer", "expires_in": 3600}"#)
            }
            guard let nonce = nonces.withLockedValue({ $0.removeValue(forKey: form.first(named: "code") ?? "") }) else {
                return .json(#"{"error": "invalid_grant"}"#, status: 400)
            }
            let refresh = "refresh-" + UUID().uuidString
            refreshTokens.withLockedValue { _ = $0.insert(refresh) }
            let id = await idToken(nonce: nonce)
            IssuedSecrets.record(refresh, id)
            return .json(
                #"{"access_token": "\#(access)", "id_token": "\#(id)", "#
                    + #""refresh_token": "\#(refresh)", "token_type": "Bearer", "expires_in": 3600}"#)
        case "/oauth2/userInfo":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard accessTokens.withLockedValue({ $0.contains(token) }) else {
                return TestResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            return .json(
                #"{"sub": "6f1c7a2e-cognito-user", "email_verified": "true", "email": "user@example.test", "#
                    + #""username": "6f1c7a2e-cognito-user"}"#)
        case "/oauth2/revoke":
            let token = form.first(named: "token") ?? ""
            if refreshTokens.withLockedValue({ $0.remove(token) }) != nil { return TestResponse(status: 200) }
            return .json(#"{"error": "unsupported_token_type"}"#, status: 400)
        case "/logout":
            guard query.first(named: "client_id") == "cognito-client",
                query.first(named: "logout_uri") == allowedLogoutURI
            else {
                return .text(
                    "<html>Required String parameter 'redirect_uri' is not present</html>", status: 400,
                    contentType: "text/html")
            }
            return TestResponse(status: 302, headers: [("Location", allowedLogoutURI)])
        case "/eu-west-1_TestPool/resource":
            // A resource server behind the pool (API Gateway with a Cognito authorizer).
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard accessTokens.withLockedValue({ $0.contains(token) }) else {
                return .json(#"{"message": "Unauthorized"}"#, status: 401)
            }
            return .json(#"{"items": ["from the API"]}"#)
        case "/signed-out":
            return .text("<html>Signed out</html>", contentType: "text/html")
        default:
            return .text("not found", status: 404)
        }
    }
}

@Suite(.testLogging) struct CognitoProviderTests {
    @Test func theIssuerComesFromRegionAndPoolAndTheDomainFromItsPrefix() throws {
        let provider = try CognitoProvider(
            configuration: ProviderConfiguration(
                clientID: "c",
                additional: [
                    "region": "eu-west-1", "user_pool_id": "eu-west-1_AbC", "domain": "myapp",
                    "logout_uri": "https://example.com/out",
                ]
            )
        )
        #expect(
            provider.configuration.issuer?.absoluteString == "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC"
        )
        #expect(provider.domain?.absoluteString == "https://myapp.auth.eu-west-1.amazoncognito.com")
        let custom = try CognitoProvider(
            configuration: ProviderConfiguration(
                issuer: URL(string: "https://cognito-idp.us-east-2.amazonaws.com/us-east-2_X"), clientID: "c",
                additional: ["domain": "https://login.example.com/"]))
        #expect(custom.domain?.absoluteString == "https://login.example.com")

        let missing = #expect(throws: AuthError.self) {
            try CognitoProvider(
                configuration: ProviderConfiguration(clientID: "c", additional: ["region": "eu-west-1"]))
        }
        #expect(missing?.message.contains("user_pool_id") == true)
    }

    @Test func signsInRefreshesWithoutRotationRevokesAndBuildsTheLogoutURL() async throws {
        let cognito = try await FakeCognito.start()
        let configuration = ProviderConfiguration(
            issuer: URL(string: cognito.issuer),
            clientID: "cognito-client",
            scopes: ["openid", "email"],
            additional: ["domain": .string(cognito.domain), "logout_uri": .string(cognito.allowedLogoutURI)]
        )
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try CognitoProvider(configuration: configuration), store: store,
            transport: cognito.server.transport)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: cognito.server.transport)))
        #expect(tokens.subject == "6f1c7a2e-cognito-user", "the ES256 ID token validated")
        #expect(try await auth.userInfo().emailVerified == true, "\"true\" is read as a boolean")

        let refreshed = try await auth.refresh()
        #expect(refreshed.refreshToken == tokens.refreshToken, "Cognito does not rotate")
        #expect(refreshed.accessToken != tokens.accessToken)

        let result = try await auth.logout(presenter: LoopbackPresenter())
        #expect(result.revocationAttempted)
        #expect(result.revocationError == nil, "an unrevocable access token is not an error")
        #expect(cognito.requests.filter { $0 == "/oauth2/revoke" }.count == 2)
        #expect(!result.endSessionCompleted, "nothing is awaited")
        let logout = try #require(result.endSessionURL)
        let query = FormURLEncoding.decode(try #require(logout.query))
        #expect(logout.path == "/logout")
        #expect(query.first(named: "client_id") == "cognito-client")
        #expect(query.first(named: "logout_uri") == cognito.allowedLogoutURI)
        #expect(await store.load(auth.key) == nil)
        await cognito.server.stop()
    }

    /// Cognito's logout page ends on its `logout_uri`: a presenter has nothing to wait for, so no
    /// session (no loopback listener) is begun.
    @Test func aLogoutPageThatDoesNotComeBackBeginsNoSession() async throws {
        struct NeverBegins: UserAgentPresenter {
            func beginSession() async throws -> any UserAgentSession {
                Issue.record("a session was begun for a page that does not come back")
                throw AuthError(.configurationInvalid, "not expected")
            }
        }
        let cognito = try await FakeCognito.start()
        let configuration = ProviderConfiguration(
            issuer: URL(string: cognito.issuer), clientID: "cognito-client",
            additional: ["domain": .string(cognito.domain), "logout_uri": .string(cognito.allowedLogoutURI)])
        let provider = try CognitoProvider(configuration: configuration)
        let page = provider.endSession(
            EndSessionParameters(
                metadata: try await ExchangeClient.forTests(provider, transport: cognito.server.transport).metadata(),
                idToken: "id", postLogoutRedirectURI: nil, state: "s"))
        #expect(page?.returnsToApp == false)
        let authenticator = Authenticator(
            provider: provider, store: MemoryTokenStore(), transport: cognito.server.transport)
        let result = try await authenticator.logout(presenter: NeverBegins(), endingSessionWhenSignedOut: true)
        #expect(result.endSessionURL?.path == "/logout")
        #expect(!result.endSessionCompleted)
        await cognito.server.stop()
    }
}

@Suite(.testLogging) struct CognitoLoginCLITests {
    /// Cognito declares its settings once; cognito-login and nativeauth derive their options,
    /// environment variables and hints from the declaration.
    @Test func theOptionsOfCognitosSettingsDeriveFromItsDeclaration() async throws {
        #expect(
            try await problemsWithDeclaredSettings(
                cli: cliPath("cognito-login"), settings: CognitoProvider.settings,
                required: Setting.cognitoUserPoolID.declaration
            ) == [])
        #expect(
            try await problemsWithDeclaredSettings(
                cli: cliPath("nativeauth"), settings: CognitoProvider.settings, arguments: ["--provider", "cognito"],
                required: Setting.cognitoRegion.declaration) == [])
    }

    /// Every command at trace level, with a client secret: no token and no secret on screen.
    @Test func everyCommandAtTraceLevelPrintsNoTokenAndNoSecret() async throws {
        let cognito = try await FakeCognito.start(mode: .live)
        let directory = try TemporaryDirectory()
        let secret = "cognito-client-secret-4f9a1c"
        let run = try await runEveryCommand(
            cliPath("cognito-login"),
            connection: [
                "--issuer", cognito.issuer, "--domain", cognito.domain, "--client-id", "cognito-client",
                "--client-secret", secret, "--logout-uri", cognito.allowedLogoutURI, "--scope", "openid email",
                "--store", directory.path + "/store",
            ],
            store: directory.path + "/store",
            apiPath: "/resource",
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_LOG_LEVEL": "trace"]
        )
        // At least 4 tokens: access, refresh and ID tokens, and a new access token.
        #expect(run.problems(minimumTokens: 4, besides: [secret]) == [])
        await cognito.server.stop()
    }

    @Test func signsInShowsUserinfoRefreshesAndLogsOutThroughTheLogoutPage() async throws {
        let cognito = try await FakeCognito.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("cognito-login")
        let common = [
            "--issuer", cognito.issuer, "--domain", cognito.domain, "--client-id", "cognito-client",
            "--logout-uri", cognito.allowedLogoutURI, "--scope", "openid email", "--store", directory.path + "/store",
        ]
        let browser = redirectFollowingBrowser
        let login = try await run(cli, ["login"] + common, environment: ["BROWSER": browser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as user@example.test\n")

        let userinfo = try await run(cli, ["userinfo", "--json"] + common)
        #expect(userinfo.status == 0, "\(userinfo.stderr)")
        #expect(userinfo.stdout.contains("6f1c7a2e-cognito-user"))

        let api = try await run(cli, ["api", "/resource"] + common)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("from the API"))

        let refresh = try await run(cli, ["refresh"] + common)
        #expect(refresh.status == 0, "\(refresh.stderr)")

        let logout = try await run(cli, ["logout"] + common, environment: ["BROWSER": browser])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(cognito.requests.contains("/logout"), "the logout page was opened")
        #expect(cognito.requests.last == "/signed-out", "and it accepted the logout_uri")
        let status = try await run(cli, ["status", "--json"] + common)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == false)
        await cognito.server.stop()
    }
}
