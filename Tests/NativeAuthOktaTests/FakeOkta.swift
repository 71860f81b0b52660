import Foundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport

/// An Okta org stand-in, written from Okta's documentation:
///
/// - "Authorization servers" (developer.okta.com/docs/concepts/auth-servers): the org authorization
///   server (issuer `https://DOMAIN`, endpoints under `/oauth2/v1/`) and custom ones (issuer
///   `https://DOMAIN/oauth2/{authorizationServerId}`, endpoints under `/oauth2/{id}/v1/`), `default`
///   among them; each with its own discovery document.
/// - "OpenID Connect & OAuth 2.0 API" (developer.okta.com/docs/api/openapi/okta-oauth): `/v1/authorize`,
///   `/v1/token`, `/v1/keys`, `/v1/userinfo`, `/v1/revoke`, `/v1/logout` (with `id_token_hint`),
///   `/v1/device/authorize`; a refresh token only with `offline_access`; refusals such as
///   `access_denied` "Policy evaluation failed for this request, please check the policy configurations."
/// - The management API (`/api/v1/users/me`) takes only the org server's access tokens and answers
///   others with `{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}`.
final class FakeOkta: Sendable {
    static let clientID = "0oa1b2c3d4e5f6g7h8i9"
    static let customServer = "aus9o8wzkhckw9TLa0h7"

    let server: TestHTTPServer
    let signer: StandInSigner
    private let state = NIOLockedValueBox(State())

    struct State {
        var codes: [String: (nonce: String?, scopes: String, server: String)] = [:]
        var refreshTokens: [String: (scopes: String, server: String)] = [:]
        var accessTokens: [String: String] = [:]
        var deviceCodes: [String: (polls: Int, server: String, scopes: String)] = [:]
        /// Grant types no access policy allows.
        var deniedGrants: Set<String> = []
        var revoked: [String] = []
        var log: [String] = []
    }

    private init(server: TestHTTPServer, signer: StandInSigner) {
        self.server = server
        self.signer = signer
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> FakeOkta {
        let holder = Shared<FakeOkta?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let okta = holder.value else { return .text("starting", status: 503) }
            return await okta.answer(request)
        }
        let okta = FakeOkta(server: server, signer: try StandInSigner(kid: "okta-key"))
        holder.update { $0 = okta }
        return okta
    }

    var host: String { server.url("").absoluteString }
    /// The issuer of `server`: `org`, `default` or a custom server's id.
    func issuer(_ server: String) -> String { server == "org" ? host : host + "/oauth2/" + server }
    func deny(_ grant: String) { state.withLockedValue { _ = $0.deniedGrants.insert(grant) } }
    var revoked: [String] { state.withLockedValue { $0.revoked } }
    var requests: [String] { state.withLockedValue { $0.log } }

    private func error(_ error: String, _ description: String, status: Int = 400) -> TestResponse {
        .oauthError(error, description, status: status)
    }

    private func tokens(scopes: String, nonce: String?, server: String) -> TestResponse {
        let access = "eyJraWQiOiJva3RhIn0.okta-access-" + UUID().uuidString
        state.withLockedValue { $0.accessTokens[access] = server }
        IssuedSecrets.record(access)
        var body: JSONObject = [
            "token_type": "Bearer", "expires_in": 3600, "access_token": .string(access), "scope": .string(scopes),
        ]
        let list = scopes.split(separator: " ")
        if list.contains("offline_access") {
            let refresh = "okta-refresh-" + UUID().uuidString
            state.withLockedValue { $0.refreshTokens[refresh] = (scopes, server) }
            IssuedSecrets.record(refresh)
            body["refresh_token"] = .string(refresh)
        }
        if list.contains("openid") {
            let now = Int64(Date().timeIntervalSince1970)
            var claims: JSONObject = [
                "sub": "00uid4BxXw6I6TV4m0g3", "ver": 1, "iss": .string(issuer(server)), "aud": .string(Self.clientID),
                "iat": .integer(now), "exp": .integer(now + 3600), "jti": .string("ID." + UUID().uuidString),
                "amr": ["pwd"], "idp": "00ok1u7AsAkrwdZL3z0g3", "auth_time": .integer(now),
                "preferred_username": "alice@acme.test",
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
        if path == "/api/v1/users/me" || path == "/orders" { return resource(request, management: path != "/orders") }
        // The server a path belongs to: /oauth2/v1/… is the org's, /oauth2/ID/v1/… a custom one's.
        let server: String
        let rest: String
        if path == "/.well-known/openid-configuration" {
            (server, rest) = ("org", "/.well-known/openid-configuration")
        } else if path.hasPrefix("/oauth2/v1/") {
            (server, rest) = ("org", String(path.dropFirst("/oauth2".count)))
        } else if path.hasPrefix("/oauth2/") {
            let segments = path.split(separator: "/").map(String.init)
            guard segments.count >= 3, ["default", Self.customServer].contains(segments[1]) else {
                return .json(
                    #"{"errorCode": "E0000007", "errorSummary": "Not found: Resource not found"}"#, status: 404)
            }
            (server, rest) = (segments[1], "/" + segments.dropFirst(2).joined(separator: "/"))
        } else {
            return .json(
                #"{"errorCode": "E0000022", "errorSummary": "The endpoint does not support the provided HTTP method"}"#,
                status: 404)
        }
        let base = issuer(server) + (server == "org" ? "/oauth2" : "")
        switch rest {
        case "/.well-known/openid-configuration":
            let document: JSONObject = [
                "issuer": .string(issuer(server)), "authorization_endpoint": .string(base + "/v1/authorize"),
                "token_endpoint": .string(base + "/v1/token"), "userinfo_endpoint": .string(base + "/v1/userinfo"),
                "registration_endpoint": .string(host + "/oauth2/v1/clients"), "jwks_uri": .string(base + "/v1/keys"),
                "response_types_supported": [
                    "code", "id_token", "code id_token", "code token", "id_token token", "code id_token token",
                ],
                "response_modes_supported": ["query", "fragment", "form_post", "okta_post_message"],
                "grant_types_supported": [
                    "authorization_code", "implicit", "refresh_token", "password",
                    "urn:ietf:params:oauth:grant-type:device_code",
                ],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "email", "profile", "address", "phone", "offline_access", "device_sso"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none",
                ],
                "code_challenge_methods_supported": ["S256"],
                "introspection_endpoint": .string(base + "/v1/introspect"),
                "revocation_endpoint": .string(base + "/v1/revoke"),
                "revocation_endpoint_auth_methods_supported": [
                    "client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none",
                ],
                "end_session_endpoint": .string(base + "/v1/logout"), "request_parameter_supported": true,
                "request_object_signing_alg_values_supported": [
                    "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512",
                ],
                "device_authorization_endpoint": .string(base + "/v1/device/authorize"),
                "dpop_signing_alg_values_supported": ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"],
                "pushed_authorization_request_endpoint": .string(base + "/v1/par"),
            ]
            return .json(document)
        case "/v1/keys":
            return .json((try? signer.jwks()) ?? "{}")
        case "/v1/par":
            // The stand-in serves PAR like Okta, with the pushed parameters kept for /v1/authorize.
            guard form.first(named: "client_id") == Self.clientID else {
                return error("invalid_client", "Invalid value for 'client_id' parameter.", status: 401)
            }
            let uri = "urn:okta:" + UUID().uuidString
            state.withLockedValue { $0.codes["par:" + uri] = (nil, FormURLEncoding.encode(form), server) }
            return .json(#"{"request_uri": "\#(uri)", "expires_in": 60}"#, status: 201)
        case "/v1/authorize":
            var fields = query
            if let uri = query.first(named: "request_uri") {
                guard let pushed = state.withLockedValue({ $0.codes.removeValue(forKey: "par:" + uri) }) else {
                    return .text(
                        "<html>The request_uri is invalid or expired.</html>", status: 400, contentType: "text/html")
                }
                fields = FormURLEncoding.decode(pushed.scopes)
            }
            let code = "okta-code-" + UUID().uuidString
            state.withLockedValue {
                $0.codes[code] = (fields.first(named: "nonce"), fields.first(named: "scope") ?? "", server)
            }
            IssuedSecrets.record(code)
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", fields.first(named: "state") ?? ""),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (fields.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/v1/device/authorize":
            if state.withLockedValue({ $0.deniedGrants.contains("urn:ietf:params:oauth:grant-type:device_code") }) {
                return error(
                    "access_denied",
                    "Policy evaluation failed for this request, please check the policy configurations.", status: 403)
            }
            let device = "okta-device-" + UUID().uuidString
            state.withLockedValue { $0.deviceCodes[device] = (0, server, form.first(named: "scope") ?? "openid") }
            IssuedSecrets.record(device)
            return .json(
                #"{"device_code": "\#(device)", "user_code": "RGKTRGHR", "verification_uri": "\#(host)/activate", "#
                    + #""verification_uri_complete": "\#(host)/activate?user_code=RGKTRGHR", "expires_in": 600, "interval": 1}"#
            )
        case "/v1/token":
            return token(form, server: server)
        case "/v1/userinfo":
            return resource(request, management: false)
        case "/v1/revoke":
            let token = form.first(named: "token") ?? ""
            state.withLockedValue { state in
                state.revoked.append(form.first(named: "token_type_hint") ?? "")
                state.refreshTokens[token] = nil
                state.accessTokens[token] = nil
            }
            return TestResponse(status: 200)
        case "/v1/logout":
            guard query.first(named: "id_token_hint") != nil else {
                return .text(
                    "<html>The id_token_hint parameter is required.</html>", status: 400, contentType: "text/html")
            }
            let target = query.first(named: "post_logout_redirect_uri") ?? host
            let back = FormURLEncoding.url(
                target, adding: query.filter { $0.name == "state" }.map { FormField("state", $0.value) })
            return TestResponse(status: 302, headers: [("Location", back?.absoluteString ?? target)])
        default:
            return .json(#"{"errorCode": "E0000007", "errorSummary": "Not found: Resource not found"}"#, status: 404)
        }
    }

    private func token(_ form: [FormField], server: String) -> TestResponse {
        guard form.first(named: "client_id") == Self.clientID else {
            return error(
                "invalid_client",
                "Client authentication failed. Either the client or the client credentials are invalid.", status: 401)
        }
        let grant = form.first(named: "grant_type") ?? ""
        if state.withLockedValue({ $0.deniedGrants.contains(grant) }) {
            return error(
                "access_denied", "Policy evaluation failed for this request, please check the policy configurations.",
                status: 403)
        }
        switch grant {
        case "authorization_code":
            guard let issued = state.withLockedValue({ $0.codes.removeValue(forKey: form.first(named: "code") ?? "") }),
                issued.server == server
            else { return error("invalid_grant", "The authorization code is invalid or has expired.") }
            return tokens(scopes: issued.scopes, nonce: issued.nonce, server: server)
        case "refresh_token":
            guard let held = state.withLockedValue({ $0.refreshTokens[form.first(named: "refresh_token") ?? ""] }),
                held.server == server
            else { return error("invalid_grant", "The refresh token is invalid or expired.") }
            return tokens(scopes: held.scopes, nonce: nil, server: server)
        case "urn:ietf:params:oauth:grant-type:device_code":
            let device = form.first(named: "device_code") ?? ""
            let polled = state.withLockedValue { state -> (polls: Int, server: String, scopes: String)? in
                guard let entry = state.deviceCodes[device] else { return nil }
                state.deviceCodes[device]?.polls += 1
                return entry
            }
            guard let polled else { return error("expired_token", "The device code has expired.") }
            if polled.polls == 0 {
                return error("authorization_pending", "The device authorization is pending. Please try again later.")
            }
            state.withLockedValue { $0.deviceCodes[device] = nil }
            return tokens(scopes: polled.scopes, nonce: nil, server: server)
        default:
            return error("unsupported_grant_type", "The grant type is not supported.")
        }
    }

    /// The management API takes only the org server's tokens; `/orders` (an app's API) only custom ones.
    private func resource(_ request: TestRequest, management: Bool) -> TestResponse {
        let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
        guard let server = state.withLockedValue({ $0.accessTokens[token] }) else {
            return .json(#"{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}"#, status: 401)
        }
        if management, server != "org" {
            return .json(#"{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}"#, status: 401)
        }
        return .json(#"{"id": "00uid4BxXw6I6TV4m0g3", "profile": {"login": "alice@acme.test"}}"#)
    }
}
