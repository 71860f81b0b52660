import Foundation
import JWTKit
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthGoogle
import TestSupport
import Testing

/// Claims of the fake's ID tokens; `iss` is the issuer without its scheme, as Google may send it.
struct GoogleClaims: JWTPayload {
    var iss: String
    var sub = "110169484474386276334"
    var aud = "google-client.apps.googleusercontent.com"
    var azp = "google-client.apps.googleusercontent.com"
    var exp: Int
    var iat: Int
    var nonce: String?
    var email = "user@gmail.test"

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Google as its documentation describes it, on loopback: discovery with revocation, a refresh
/// token only for `access_type=offline` with `prompt=consent`, the client secret required at the
/// token endpoint, ID tokens whose `iss` lacks the scheme, and revocation.
final class FakeGoogle: Sendable {
    let server: TestHTTPServer
    let key = ES256PrivateKey()
    private let log = NIOLockedValueBox<[String]>([])
    private let codes = NIOLockedValueBox<[String: (nonce: String?, offline: Bool)]>([:])
    private let refreshTokens = NIOLockedValueBox<Set<String>>([])
    private let accessTokens = NIOLockedValueBox<Set<String>>([])

    private init(server: TestHTTPServer) { self.server = server }

    static func start() async throws -> FakeGoogle {
        let holder = Shared<FakeGoogle?>(nil)
        let server = try await TestHTTPServer.start { request in
            guard let google = holder.value else { return .text("starting", status: 503) }
            return await google.answer(request)
        }
        let google = FakeGoogle(server: server)
        holder.update { $0 = google }
        return google
    }

    var issuer: String { server.url("").absoluteString }
    var requests: [String] { log.withLockedValue { $0 } }

    private func idToken(nonce: String?) async -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: "google-key")
        let now = Int(Date().timeIntervalSince1970)
        let bare = issuer.replacingOccurrences(of: "http://", with: "")
        return
            (try? await keys.sign(GoogleClaims(iss: bare, exp: now + 3600, iat: now, nonce: nonce), kid: "google-key"))
            ?? ""
    }

    private func answer(_ request: TestRequest) async -> TestResponse {
        let parts = request.uri.split(separator: "?", maxSplits: 1)
        let path = parts.first.map(String.init) ?? ""
        let query = FormURLEncoding.decode(parts.count > 1 ? parts[1] : "")
        let form = FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self))
        log.withLockedValue { $0.append(path) }
        switch path {
        case "/.well-known/openid-configuration":
            return .json(
                #"{"issuer": "\#(issuer)", "authorization_endpoint": "\#(issuer)/o/oauth2/v2/auth", "#
                    + #""device_authorization_endpoint": "\#(issuer)/device/code", "token_endpoint": "\#(issuer)/token", "#
                    + #""userinfo_endpoint": "\#(issuer)/v1/userinfo", "revocation_endpoint": "\#(issuer)/revoke", "#
                    + #""jwks_uri": "\#(issuer)/oauth2/v3/certs", "id_token_signing_alg_values_supported": ["ES256"], "#
                    + #""token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"], "#
                    + #""code_challenge_methods_supported": ["plain", "S256"]}"#)
        case "/oauth2/v3/certs":
            let parameters = key.publicKey.parameters
            return .json(
                #"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "google-key", "alg": "ES256", "#
                    + #""x": "\#(parameters?.x ?? "")", "y": "\#(parameters?.y ?? "")"}]}"#)
        case "/o/oauth2/v2/auth":
            let code = "4/" + UUID().uuidString
            let offline = query.first(named: "access_type") == "offline" && query.first(named: "prompt") == "consent"
            codes.withLockedValue { $0[code] = (query.first(named: "nonce"), offline) }
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (query.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/token":
            guard form.first(named: "client_secret") == "GOCSPX-not-secret" else {
                return .json(#"{"error": "invalid_client", "error_description": "Unauthorized"}"#, status: 401)
            }
            let access = "ya29." + UUID().uuidString
            accessTokens.withLockedValue { _ = $0.insert(access) }
            IssuedSecrets.record(access)
            if form.first(named: "grant_type") == "refresh_token" {
                guard refreshTokens.withLockedValue({ $0.contains(form.first(named: "refresh_token") ?? "") }) else {
                    return .json(#"{"error": "invalid_grant", "error_description": "Bad Request"}"#, status: 400)
                }
                return .json(
                    #"{"access_token": "\#(access)", "expires_in": 3599, "token_type": "Bearer", "scope": "openid"}"#)
            }
            guard let grant = codes.withLockedValue({ $0.removeValue(forKey: form.first(named: "code") ?? "") }) else {
                return .json(#"{"error": "invalid_grant"}"#, status: 400)
            }
            var refresh = ""
            if grant.offline {
                let token = "1//" + UUID().uuidString
                refreshTokens.withLockedValue { _ = $0.insert(token) }
                IssuedSecrets.record(token)
                refresh = #", "refresh_token": "\#(token)""#
            }
            let id = await idToken(nonce: grant.nonce)
            IssuedSecrets.record(id)
            return .json(
                #"{"access_token": "\#(access)", "expires_in": 3599, "token_type": "Bearer", "scope": "openid email", "#
                    + #""id_token": "\#(id)"\#(refresh)}"#)
        case "/v1/userinfo":
            return .json(#"{"sub": "110169484474386276334", "email": "user@gmail.test", "email_verified": true}"#)
        case "/drive/v3/about":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard accessTokens.withLockedValue({ $0.contains(token) }) else {
                return TestResponse(
                    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="https://accounts.google.com/""#)])
            }
            return .json(#"{"user": {"emailAddress": "user@gmail.test"}}"#)
        case "/revoke":
            refreshTokens.withLockedValue { _ = $0.remove(form.first(named: "token") ?? "") }
            return TestResponse(status: 200)
        default:
            return .text("not found", status: 404)
        }
    }
}

@Suite(.testLogging) struct GoogleLoginTests {
    @Test func theIssuerDefaultsToGoogleAndOfflineAccessIsAskedFor() throws {
        let provider = try GoogleProvider(configuration: ProviderConfiguration(clientID: "c"))
        #expect(provider.configuration.issuer?.absoluteString == "https://accounts.google.com")
        #expect(provider.idTokenValidation.issuerAliases == ["accounts.google.com"])
        let parameters = provider.authorizationParameters(
            for: .init(scopes: ["openid"], redirectURI: URL(fileURLWithPath: "/")))
        #expect(parameters.first(named: "access_type") == "offline")
        #expect(parameters.first(named: "prompt") == "consent")
    }

    /// Google's own `prompt=consent` is sent once, whether or not `offline_access` is asked for
    /// (OIDC Core §11's consent, which the generic provider adds, is there already).
    @Test func consentIsAskedForOnceWithOfflineAccess() throws {
        let provider = try GoogleProvider(configuration: ProviderConfiguration(clientID: "c"))
        for scopes in [["openid"], ["openid", "offline_access"]] {
            let parameters = CodeFlow.askingConsentForOfflineAccess(
                provider.authorizationParameters(for: .init(scopes: scopes, redirectURI: URL(fileURLWithPath: "/"))),
                scopes: scopes, provider: provider)
            #expect(parameters.filter { $0.name == "prompt" }.map(\.value) == ["consent"], "\(scopes)")
        }
    }

    /// Every command at trace level, with a client secret: no token and no secret on screen.
    @Test func everyCommandAtTraceLevelPrintsNoTokenAndNoSecret() async throws {
        let google = try await FakeGoogle.start()
        let directory = try TemporaryDirectory()
        let secret = "GOCSPX-not-secret"
        let run = try await runEveryCommand(
            cliPath("google-login"),
            connection: [
                "--issuer", google.issuer, "--client-id", "google-client.apps.googleusercontent.com",
                "--client-secret", secret, "--scope", "openid email", "--store", directory.path + "/store",
            ],
            store: directory.path + "/store",
            apiPath: google.issuer + "/drive/v3/about",
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_LOG_LEVEL": "trace"]
        )
        // At least 4 tokens: access, refresh and ID tokens, and a new access token.
        #expect(run.problems(minimumTokens: 4, besides: [secret]) == [])
        await google.server.stop()
    }

    @Test func googleLoginSignsInRefreshesAndRevokesAtLogout() async throws {
        let google = try await FakeGoogle.start()
        let directory = try TemporaryDirectory()
        let cli = cliPath("google-login")
        let common = [
            "--issuer", google.issuer, "--client-id", "google-client.apps.googleusercontent.com", "--client-secret",
            "GOCSPX-not-secret", "--scope", "openid email", "--store", directory.path + "/store",
        ]
        let browser = redirectFollowingBrowser
        let login = try await run(cli, ["login"] + common, environment: ["BROWSER": browser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as user@gmail.test\n", "the schemeless iss was accepted")

        let status = try await run(cli, ["status", "--json"] + common)
        #expect(try JSONValue.parse(status.stdout).objectValue?["has_refresh_token"] == true, "offline access")
        let userinfo = try await run(cli, ["userinfo", "--json"] + common)
        #expect(userinfo.stdout.contains("110169484474386276334"), "\(userinfo.stderr)")
        // A path is relative to the provider's API base (the issuer here; a full URL works too).
        let api = try await run(cli, ["api", google.issuer + "/drive/v3/about"] + common)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("emailAddress"))
        let refresh = try await run(cli, ["refresh"] + common)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let logout = try await run(cli, ["logout"] + common)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(google.requests.filter { $0 == "/revoke" }.count == 2)
        for result in [login, status, userinfo, api, refresh, logout] {
            #expect(!result.stdout.contains("ya29.") && !result.stderr.contains("ya29."))
            #expect(!result.stderr.contains("GOCSPX-not-secret"))
        }
        await google.server.stop()
    }
}
