import Foundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport

/// A GitLab instance stand-in, written from GitLab's documentation:
///
/// - "OAuth 2.0 identity provider API" (docs.gitlab.com/api/oauth2): `/oauth/authorize` and
///   `/oauth/token` with PKCE; token answers with `token_type` "Bearer", `expires_in` 7200,
///   `refresh_token`, `scope` and `created_at`; a refresh returns a new refresh token and revokes
///   the one it used (`invalid_grant` for it afterwards); `/oauth/revoke`; the device authorization
///   grant (GitLab 17.2+) at `/oauth/authorize_device`, polled with `authorization_pending`.
/// - "GitLab as an OpenID Connect identity provider" (docs.gitlab.com/integration/openid_connect_provider):
///   discovery at `/.well-known/openid-configuration` (no device endpoint in it), ID tokens RS256
///   with `sub` the user id, `nickname`, `preferred_username`, `groups_direct`; `/oauth/userinfo`.
/// - The REST API under `/api/v4` (`GET /user`), which takes the OAuth token as `Bearer`.
final class FakeGitLab: Sendable {
    static let clientID = "4f5a0c7e9b1d2a3c4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d"

    let server: TestHTTPServer
    let signer: StandInSigner
    private let state = NIOLockedValueBox(State())

    struct State {
        var codes: [String: (nonce: String?, scopes: String, verifierHash: String?)] = [:]
        var refreshTokens: [String: String] = [:]
        var accessTokens: Set<String> = []
        var deviceCodes: [String: Int] = [:]
        var refreshes = 0
        var log: [String] = []
    }

    private init(server: TestHTTPServer, signer: StandInSigner) {
        self.server = server
        self.signer = signer
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> FakeGitLab {
        let holder = Shared<FakeGitLab?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let gitlab = holder.value else { return .text("starting", status: 503) }
            return await gitlab.answer(request)
        }
        let gitlab = FakeGitLab(server: server, signer: try StandInSigner(kid: "gitlab-key"))
        holder.update { $0 = gitlab }
        return gitlab
    }

    var host: String { server.url("").absoluteString }
    var requests: [String] { state.withLockedValue { $0.log } }
    var refreshes: Int { state.withLockedValue { $0.refreshes } }
    func isValidAccessToken(_ token: String) -> Bool { state.withLockedValue { $0.accessTokens.contains(token) } }

    private func error(_ error: String, _ description: String, status: Int = 400) -> TestResponse {
        .oauthError(error, description, status: status)
    }

    private func tokens(scopes: String, nonce: String?) -> TestResponse {
        let access = "glpat-oauth-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let refresh = "glrt-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        state.withLockedValue { state in
            state.accessTokens.insert(access)
            state.refreshTokens[refresh] = scopes
        }
        IssuedSecrets.record(access, refresh)
        let now = Int64(Date().timeIntervalSince1970)
        var body: JSONObject = [
            "access_token": .string(access), "token_type": "Bearer", "expires_in": 7200,
            "refresh_token": .string(refresh), "scope": .string(scopes), "created_at": .integer(now),
        ]
        if scopes.split(separator: " ").contains("openid") {
            var claims: JSONObject = [
                "iss": .string(host), "sub": "1234567", "aud": .string(Self.clientID), "exp": .integer(now + 120),
                "iat": .integer(now), "auth_time": .integer(now), "sub_legacy": "2ab6b2f0c1", "name": "Alice Example",
                "nickname": "alice", "preferred_username": "alice", "email": "alice@example.test",
                "email_verified": true,
                "groups_direct": ["acme"],
            ]
            if let nonce { claims["nonce"] = .string(nonce) }
            if let id = try? signer.sign(claims) {
                body["id_token"] = .string(id)
                IssuedSecrets.record(id)
            }
        }
        return .json(body)
    }

    private func answer(_ request: TestRequest) async -> TestResponse {
        let (path, query, form) = (request.path, request.query, request.form)
        state.withLockedValue { $0.log.append(path) }
        switch path {
        case "/.well-known/openid-configuration":
            return .json(
                #"{"issuer": "\#(host)", "authorization_endpoint": "\#(host)/oauth/authorize", "#
                    + #""token_endpoint": "\#(host)/oauth/token", "revocation_endpoint": "\#(host)/oauth/revoke", "#
                    + #""introspection_endpoint": "\#(host)/oauth/introspect", "userinfo_endpoint": "\#(host)/oauth/userinfo", "#
                    + #""jwks_uri": "\#(host)/oauth/discovery/keys", "scopes_supported": ["api", "read_api", "read_user", "#
                    + #""read_repository", "write_repository", "openid", "profile", "email"], "#
                    + #""response_types_supported": ["code"], "response_modes_supported": ["query", "fragment", "form_post"], "#
                    + #""grant_types_supported": ["authorization_code", "password", "client_credentials", "device_code", "refresh_token"], "#
                    + #""token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"], "#
                    + #""subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"], "#
                    + #""claim_types_supported": ["normal"], "claims_supported": ["iss", "sub", "aud", "exp", "iat", "#
                    + #""sub_legacy", "name", "nickname", "preferred_username", "email", "email_verified", "groups_direct"]}"#
            )
        case "/oauth/discovery/keys":
            return .json((try? signer.jwks()) ?? "{}")
        case "/oauth/authorize":
            guard query.first(named: "client_id") == Self.clientID else {
                return .text(
                    "<html>Client authentication failed due to unknown client</html>", status: 401,
                    contentType: "text/html")
            }
            let code = UUID().uuidString.replacingOccurrences(of: "-", with: "") + "gl"
            state.withLockedValue {
                $0.codes[code] = (
                    query.first(named: "nonce"), query.first(named: "scope") ?? "", query.first(named: "code_challenge")
                )
            }
            IssuedSecrets.record(code)
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (query.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/oauth/authorize_device":
            let device = "gldc-" + UUID().uuidString
            state.withLockedValue { $0.deviceCodes[device] = 0 }
            IssuedSecrets.record(device)
            return .json(
                #"{"device_code": "\#(device)", "user_code": "0A44L90H", "verification_uri": "\#(host)/oauth/device", "#
                    + #""verification_uri_complete": "\#(host)/oauth/device?user_code=0A44L90H", "expires_in": 300, "interval": 1}"#
            )
        case "/oauth/token":
            return token(form)
        case "/oauth/revoke":
            let token = form.first(named: "token") ?? ""
            state.withLockedValue { state in
                state.refreshTokens[token] = nil
                state.accessTokens.remove(token)
            }
            return .json("{}")
        case "/oauth/userinfo", "/api/v4/user":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard isValidAccessToken(token) else { return .json(#"{"message": "401 Unauthorized"}"#, status: 401) }
            return .json(
                #"{"id": 1234567, "username": "alice", "name": "Alice Example", "sub": "1234567", "state": "active"}"#)
        default:
            return .json(#"{"error": "404 Not Found"}"#, status: 404)
        }
    }

    private func token(_ form: [FormField]) -> TestResponse {
        guard form.first(named: "client_id") == Self.clientID else {
            return error(
                "invalid_client",
                "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
                status: 401)
        }
        switch form.first(named: "grant_type") {
        case "authorization_code":
            guard let issued = state.withLockedValue({ $0.codes.removeValue(forKey: form.first(named: "code") ?? "") })
            else {
                return error(
                    "invalid_grant",
                    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."
                )
            }
            guard issued.verifierHash != nil, form.first(named: "code_verifier") != nil else {
                return error("invalid_grant", "The code verifier is missing.")
            }
            return tokens(scopes: issued.scopes, nonce: issued.nonce)
        case "refresh_token":
            // Rotation: the refresh token used is revoked.
            let scopes = state.withLockedValue { state -> String? in
                state.refreshes += 1
                return state.refreshTokens.removeValue(forKey: form.first(named: "refresh_token") ?? "")
            }
            guard let scopes else {
                return error(
                    "invalid_grant",
                    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."
                )
            }
            return tokens(scopes: scopes, nonce: nil)
        case "urn:ietf:params:oauth:grant-type:device_code":
            let device = form.first(named: "device_code") ?? ""
            let polls = state.withLockedValue { state -> Int? in
                guard let count = state.deviceCodes[device] else { return nil }
                state.deviceCodes[device] = count + 1
                return count
            }
            guard let polls else { return error("expired_token", "The device code has expired.") }
            if polls == 0 { return error("authorization_pending", "The authorization request is still pending.") }
            state.withLockedValue { $0.deviceCodes[device] = nil }
            return tokens(scopes: form.first(named: "scope") ?? "openid read_user api", nonce: nil)
        default:
            return error(
                "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.")
        }
    }
}
