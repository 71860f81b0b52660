import Foundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport

/// A Keycloak realm stand-in, written from Keycloak's documentation:
///
/// - "Securing applications and services guide", OpenID Connect endpoints
///   (keycloak.org/docs/latest/securing_apps/#_oidc): everything under
///   `/realms/{realm}/protocol/openid-connect/` (`auth`, `token`, `userinfo`, `logout`, `certs`,
///   `revoke`, `auth/device`, `ext/par/request`), discovery at `/realms/{realm}/.well-known/openid-configuration`.
/// - Token answers carry `refresh_expires_in` (the SSO Session Idle, 1800 s by default),
///   `not-before-policy` and `session_state`; with `offline_access` the refresh token is an offline
///   token and `refresh_expires_in` is 0. A refresh returns a new refresh token; the old one stays
///   valid ("Revoke Refresh Token" is off by default).
/// - "Server administration guide", sessions: an ended SSO session answers a refresh with
///   `invalid_grant` "Session not active"; a revoked offline session "Offline user session not found".
/// - RP-initiated logout (Keycloak 18 and later): with `post_logout_redirect_uri`, one of
///   `id_token_hint` or `client_id` is required ("Missing parameters: id_token_hint").
/// - Pushed authorization requests: the realm's "Pushed authorization request required" client
///   setting announces `require_pushed_authorization_requests` and takes authorization requests
///   by `request_uri` only (201 answers from `ext/par/request`).
/// - `kc_idp_hint` on the authorization request names the identity provider to go to.
final class FakeKeycloak: Sendable {
    static let realm = "acme"
    static let clientID = "acme-cli"

    let server: TestHTTPServer
    let signer: StandInSigner
    let requiresPushedRequests: Bool
    private let state = NIOLockedValueBox(State())

    struct State {
        var codes: [String: (nonce: String?, scopes: [String])] = [:]
        var refreshTokens: [String: [String]] = [:]
        var accessTokens: Set<String> = []
        var pushed: [String: [FormField]] = [:]
        var deviceCodes: [String: Int] = [:]
        var authorizeQueries: [[FormField]] = []
        /// The authorization requests, pushed ones resolved.
        var authorizationRequests: [[FormField]] = []
        var revokedOffline: Set<String> = []
        var log: [String] = []
    }

    private init(server: TestHTTPServer, signer: StandInSigner, requiresPushedRequests: Bool) {
        self.server = server
        self.signer = signer
        self.requiresPushedRequests = requiresPushedRequests
    }

    static func start(mode: TestServerMode = .inMemory, requiresPushedRequests: Bool = false) async throws
        -> FakeKeycloak
    {
        let holder = Shared<FakeKeycloak?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let keycloak = holder.value else { return .text("starting", status: 503) }
            return await keycloak.answer(request)
        }
        let keycloak = FakeKeycloak(
            server: server, signer: try StandInSigner(kid: "keycloak-rsa"),
            requiresPushedRequests: requiresPushedRequests)
        holder.update { $0 = keycloak }
        return keycloak
    }

    var base: String { server.url("").absoluteString }
    var issuer: String { base + "/realms/" + Self.realm }
    var requests: [String] { state.withLockedValue { $0.log } }
    var authorizeQueries: [[FormField]] { state.withLockedValue { $0.authorizeQueries } }
    var authorizationRequests: [[FormField]] { state.withLockedValue { $0.authorizationRequests } }

    /// Ends every SSO session, as an administrator's "Sign out all active sessions" does; offline
    /// sessions stay.
    func endSessions() {
        state.withLockedValue { state in
            state.refreshTokens = state.refreshTokens.filter { $0.value.contains("offline_access") }
        }
    }

    /// Revokes every offline session.
    func revokeOfflineSessions() {
        state.withLockedValue { state in
            let offline = state.refreshTokens.filter { $0.value.contains("offline_access") }
            state.revokedOffline.formUnion(offline.keys)
            state.refreshTokens = state.refreshTokens.filter { !$0.value.contains("offline_access") }
        }
    }

    private func error(_ error: String, _ description: String, status: Int = 400) -> TestResponse {
        .oauthError(error, description, status: status)
    }

    private func tokens(scopes: [String], nonce: String?) -> TestResponse {
        let access = "eyJhbGciOiJSUzI1NiJ9.keycloak-access-" + UUID().uuidString
        let refresh = "eyJhbGciOiJIUzUxMiJ9.keycloak-refresh-" + UUID().uuidString
        let offline = scopes.contains("offline_access")
        state.withLockedValue { state in
            state.accessTokens.insert(access)
            state.refreshTokens[refresh] = scopes
        }
        IssuedSecrets.record(access, refresh)
        var body: JSONObject = [
            "access_token": .string(access), "expires_in": 300, "refresh_expires_in": offline ? 0 : 1800,
            "refresh_token": .string(refresh), "token_type": "Bearer", "not-before-policy": 0,
            "session_state": "5d5f3a3c-8f2b-4f4e-9a55-6f0f8c1d2e3f", "scope": .string(scopes.joined(separator: " ")),
        ]
        if scopes.contains("openid") {
            let now = Int64(Date().timeIntervalSince1970)
            var claims: JSONObject = [
                "exp": .integer(now + 300), "iat": .integer(now), "auth_time": .integer(now),
                "jti": .string(UUID().uuidString), "iss": .string(issuer), "aud": .string(Self.clientID),
                "sub": "f3b1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "typ": "ID", "azp": .string(Self.clientID),
                "sid": "5d5f3a3c-8f2b-4f4e-9a55-6f0f8c1d2e3f", "preferred_username": "alice",
                "email": "alice@acme.test",
                "email_verified": true,
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
        let prefix = "/realms/\(Self.realm)"
        let oidc = prefix + "/protocol/openid-connect"
        switch path {
        case prefix + "/.well-known/openid-configuration":
            var document: JSONObject = [
                "issuer": .string(issuer), "authorization_endpoint": .string(base + oidc + "/auth"),
                "token_endpoint": .string(base + oidc + "/token"),
                "introspection_endpoint": .string(base + oidc + "/token/introspect"),
                "userinfo_endpoint": .string(base + oidc + "/userinfo"),
                "end_session_endpoint": .string(base + oidc + "/logout"),
                "frontchannel_logout_session_supported": true, "frontchannel_logout_supported": true,
                "jwks_uri": .string(base + oidc + "/certs"),
                "check_session_iframe": .string(base + oidc + "/login-status-iframe.html"),
                "grant_types_supported": [
                    "authorization_code", "implicit", "refresh_token", "password", "client_credentials",
                    "urn:ietf:params:oauth:grant-type:device_code", "urn:openid:params:grant-type:ciba",
                ],
                "response_types_supported": ["code", "none", "id_token", "token", "id_token token", "code id_token"],
                "subject_types_supported": ["public", "pairwise"],
                "id_token_signing_alg_values_supported": ["PS384", "ES384", "RS384", "HS256", "RS256", "ES256"],
                "code_challenge_methods_supported": ["plain", "S256"],
                "token_endpoint_auth_methods_supported": [
                    "private_key_jwt", "client_secret_basic", "client_secret_post", "tls_client_auth",
                    "client_secret_jwt",
                ],
                "revocation_endpoint": .string(base + oidc + "/revoke"),
                "revocation_endpoint_auth_methods_supported": [
                    "private_key_jwt", "client_secret_basic", "client_secret_post", "tls_client_auth",
                    "client_secret_jwt",
                ],
                "device_authorization_endpoint": .string(base + oidc + "/auth/device"),
                "backchannel_logout_supported": true, "backchannel_logout_session_supported": true,
                "pushed_authorization_request_endpoint": .string(base + oidc + "/ext/par/request"),
                "require_pushed_authorization_requests": .bool(requiresPushedRequests),
                "authorization_response_iss_parameter_supported": true,
                "scopes_supported": ["openid", "offline_access", "profile", "email", "roles", "web-origins"],
            ]
            document["mtls_endpoint_aliases"] = ["token_endpoint": .string(base + oidc + "/token")]
            return .json(document)
        case oidc + "/certs":
            return .json((try? signer.jwks()) ?? "{}")
        case oidc + "/ext/par/request":
            guard form.first(named: "client_id") == Self.clientID else {
                return error("invalid_client", "Invalid client or Invalid client credentials", status: 401)
            }
            let uri = "urn:ietf:params:oauth:request_uri:" + UUID().uuidString
            state.withLockedValue { $0.pushed[uri] = form }
            return .json(#"{"request_uri": "\#(uri)", "expires_in": 60}"#, status: 201)
        case oidc + "/auth":
            var fields = query
            if let uri = query.first(named: "request_uri") {
                guard let pushed = state.withLockedValue({ $0.pushed.removeValue(forKey: uri) }) else {
                    return .text("<html>Invalid Request</html>", status: 400, contentType: "text/html")
                }
                fields = pushed
            } else if requiresPushedRequests {
                return .text(
                    "<html>Pushed Authorization Request is only allowed.</html>", status: 400, contentType: "text/html")
            }
            state.withLockedValue { state in
                state.authorizeQueries.append(query)
                state.authorizationRequests.append(fields)
            }
            guard fields.first(named: "client_id") == Self.clientID else {
                return .text("<html>Client not found.</html>", status: 400, contentType: "text/html")
            }
            let code = UUID().uuidString + "." + UUID().uuidString
            let scopes = (fields.first(named: "scope") ?? "").split(separator: " ").map(String.init)
            state.withLockedValue { $0.codes[code] = (fields.first(named: "nonce"), scopes) }
            IssuedSecrets.record(code)
            let back = FormURLEncoding.encode([
                FormField("state", fields.first(named: "state") ?? ""),
                FormField("session_state", "5d5f3a3c-8f2b-4f4e-9a55-6f0f8c1d2e3f"), FormField("iss", issuer),
                FormField("code", code),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (fields.first(named: "redirect_uri") ?? "") + "?" + back)])
        case oidc + "/auth/device":
            let device = "keycloak-device-" + UUID().uuidString
            state.withLockedValue { $0.deviceCodes[device] = 0 }
            IssuedSecrets.record(device)
            return .json(
                #"{"device_code": "\#(device)", "user_code": "WDJB-MJHT", "verification_uri": "\#(issuer)/device", "#
                    + #""verification_uri_complete": "\#(issuer)/device?user_code=WDJB-MJHT", "expires_in": 600, "interval": 1}"#
            )
        case oidc + "/token":
            return token(form)
        case oidc + "/userinfo":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            guard state.withLockedValue({ $0.accessTokens.contains(token) }) else {
                return TestResponse(
                    status: 401,
                    headers: [
                        (
                            "WWW-Authenticate",
                            #"Bearer realm="acme", error="invalid_token", error_description="Token verification failed""#
                        )
                    ])
            }
            return .json(
                #"{"sub": "f3b1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "email_verified": true, "preferred_username": "alice", "email": "alice@acme.test"}"#
            )
        case oidc + "/revoke":
            let token = form.first(named: "token") ?? ""
            state.withLockedValue { state in
                state.refreshTokens[token] = nil
                state.accessTokens.remove(token)
            }
            return TestResponse(status: 200)
        case oidc + "/logout":
            guard let target = query.first(named: "post_logout_redirect_uri") else {
                return .text("<html>You are logged out</html>", contentType: "text/html")
            }
            guard query.first(named: "id_token_hint") != nil || query.first(named: "client_id") == Self.clientID else {
                return .text("<html>Missing parameters: id_token_hint</html>", status: 400, contentType: "text/html")
            }
            let back = FormURLEncoding.url(
                target, adding: query.filter { $0.name == "state" }.map { FormField("state", $0.value) })
            return TestResponse(status: 302, headers: [("Location", back?.absoluteString ?? target)])
        default:
            return .text("not found", status: 404)
        }
    }

    private func token(_ form: [FormField]) -> TestResponse {
        guard form.first(named: "client_id") == Self.clientID else {
            return error("invalid_client", "Invalid client or Invalid client credentials", status: 401)
        }
        switch form.first(named: "grant_type") {
        case "authorization_code":
            guard let issued = state.withLockedValue({ $0.codes.removeValue(forKey: form.first(named: "code") ?? "") })
            else {
                return error("invalid_grant", "Code not valid")
            }
            return tokens(scopes: issued.scopes, nonce: issued.nonce)
        case "refresh_token":
            let presented = form.first(named: "refresh_token") ?? ""
            guard let scopes = state.withLockedValue({ $0.refreshTokens[presented] }) else {
                if state.withLockedValue({ $0.revokedOffline.contains(presented) }) {
                    return error("invalid_grant", "Offline user session not found")
                }
                return error("invalid_grant", "Session not active")
            }
            return tokens(scopes: scopes, nonce: nil)
        case "urn:ietf:params:oauth:grant-type:device_code":
            let device = form.first(named: "device_code") ?? ""
            let polls = state.withLockedValue { state -> Int? in
                guard let count = state.deviceCodes[device] else { return nil }
                state.deviceCodes[device] = count + 1
                return count
            }
            guard let polls else { return error("expired_token", "Device code is expired") }
            if polls == 0 { return error("authorization_pending", "The authorization request is still pending") }
            state.withLockedValue { $0.deviceCodes[device] = nil }
            return tokens(
                scopes: (form.first(named: "scope") ?? "openid").split(separator: " ").map(String.init), nonce: nil)
        default:
            return error("unsupported_grant_type", "Unsupported grant_type")
        }
    }
}
