import Foundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport

/// An Auth0 tenant stand-in, written from Auth0's documentation:
///
/// - "Locate the OpenID Connect discovery endpoint" and the Authentication API reference
///   (auth0.com/docs/api/authentication): `iss` is `https://DOMAIN/` with its trailing slash;
///   `/authorize`, `/oauth/token`, `/oauth/device/code`, `/oauth/revoke`, `/userinfo`,
///   `/.well-known/jwks.json`, `/oidc/logout` and the legacy `/v2/logout?client_id&returnTo`.
/// - "Get access tokens" / "Opaque access tokens": with `audience` the access token is a JWT for that
///   API; without it, an opaque token only `/userinfo` takes. An unknown audience is refused with
///   `access_denied` "Service not enabled within domain".
/// - "Refresh token rotation" and "Automatic reuse detection": a refresh returns a new refresh token
///   and spends the old one; a spent one presented again revokes the whole family, and the
///   answer is `invalid_grant` "Unknown or invalid refresh token.".
/// - Refresh tokens only with `offline_access`.
final class FakeAuth0: Sendable {
    static let clientID = "kbyuFDidLLm280LIwVFiazOqjO3ty8KH"
    static let apiAudience = "https://api.acme.test"

    let server: TestHTTPServer
    let signer: StandInSigner
    private let state = NIOLockedValueBox(State())

    struct Family {
        var current: String
        var revoked = false
        var audience: String?
        var scopes: String
    }

    struct State {
        var codes: [String: (nonce: String?, scopes: String, audience: String?)] = [:]
        var families: [String: Family] = [:]
        /// Every refresh token ever issued, by family.
        var issued: [String: String] = [:]
        var accessTokens: [String: String?] = [:]
        var deviceCodes: [String: (polls: Int, audience: String?)] = [:]
        var refreshes = 0
        var reuseDetections = 0
        var authorizeQueries: [[FormField]] = []
    }

    private init(server: TestHTTPServer, signer: StandInSigner) {
        self.server = server
        self.signer = signer
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> FakeAuth0 {
        let holder = Shared<FakeAuth0?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let auth0 = holder.value else { return .text("starting", status: 503) }
            return await auth0.answer(request)
        }
        let auth0 = FakeAuth0(server: server, signer: try StandInSigner(kid: "auth0-key"))
        holder.update { $0 = auth0 }
        return auth0
    }

    /// The issuer, with Auth0's trailing slash.
    var issuer: String { server.url("").absoluteString + "/" }
    var refreshes: Int { state.withLockedValue { $0.refreshes } }
    var reuseDetections: Int { state.withLockedValue { $0.reuseDetections } }
    var authorizeQueries: [[FormField]] { state.withLockedValue { $0.authorizeQueries } }

    private func error(_ error: String, _ description: String, status: Int = 400) -> TestResponse {
        .oauthError(error, description, status: status)
    }

    private func tokens(scopes: String, nonce: String?, audience: String?, family: String?) -> TestResponse {
        if let audience, audience != Self.apiAudience {
            return error("access_denied", "Service not enabled within domain: \(audience)", status: 403)
        }
        let access =
            audience == nil
            ? "opaque-" + UUID().uuidString : "eyJhbGciOiJSUzI1NiJ9.auth0-api-" + UUID().uuidString
        state.withLockedValue { $0.accessTokens[access] = audience }
        IssuedSecrets.record(access)
        var body: JSONObject = [
            "access_token": .string(access), "token_type": "Bearer", "expires_in": 86400, "scope": .string(scopes),
        ]
        if scopes.split(separator: " ").contains("offline_access") {
            let refresh = "v1.M-auth0-refresh-" + UUID().uuidString
            let name = family ?? UUID().uuidString
            state.withLockedValue { state in
                if state.families[name] == nil {
                    state.families[name] = Family(current: refresh, audience: audience, scopes: scopes)
                } else {
                    state.families[name]?.current = refresh
                }
                state.issued[refresh] = name
            }
            IssuedSecrets.record(refresh)
            body["refresh_token"] = .string(refresh)
        }
        if scopes.split(separator: " ").contains("openid") {
            let now = Int64(Date().timeIntervalSince1970)
            var claims: JSONObject = [
                "iss": .string(issuer), "sub": "auth0|5f7c8ec7c33c6c004bbafe82", "aud": .string(Self.clientID),
                "iat": .integer(now), "exp": .integer(now + 36000), "sid": "Z6aQKk6V2Pqfk2Tm0iRdMkVhyaWrH0cd",
                "nickname": "alice", "name": "alice@acme.test", "email": "alice@acme.test", "email_verified": true,
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
        let base = issuer
        switch path {
        case "/.well-known/openid-configuration":
            return .json(
                #"{"issuer": "\#(base)", "authorization_endpoint": "\#(base)authorize", "#
                    + #""token_endpoint": "\#(base)oauth/token", "device_authorization_endpoint": "\#(base)oauth/device/code", "#
                    + #""userinfo_endpoint": "\#(base)userinfo", "mfa_challenge_endpoint": "\#(base)mfa/challenge", "#
                    + #""jwks_uri": "\#(base).well-known/jwks.json", "registration_endpoint": "\#(base)oidc/register", "#
                    + #""revocation_endpoint": "\#(base)oauth/revoke", "scopes_supported": ["openid", "profile", "#
                    + #""offline_access", "name", "given_name", "family_name", "nickname", "email", "email_verified", "#
                    + #""picture", "created_at", "identities", "phone", "address"], "response_types_supported": ["code", "#
                    + #""token", "id_token", "code token", "code id_token", "token id_token", "code token id_token"], "#
                    + #""code_challenge_methods_supported": ["S256", "plain"], "response_modes_supported": ["query", "#
                    + #""fragment", "form_post"], "subject_types_supported": ["public"], "#
                    + #""token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "#
                    + #""private_key_jwt"], "claims_supported": ["aud", "auth_time", "created_at", "email", "#
                    + #""email_verified", "exp", "family_name", "given_name", "iat", "identities", "iss", "name", "#
                    + #""nickname", "phone_number", "picture", "sub"], "request_uri_parameter_supported": false, "#
                    + #""request_parameter_supported": false, "id_token_signing_alg_values_supported": ["HS256", "#
                    + #""RS256", "PS256"], "end_session_endpoint": "\#(base)oidc/logout", "#
                    + #""backchannel_logout_supported": true, "backchannel_logout_session_supported": true}"#)
        case "/.well-known/jwks.json":
            return .json((try? signer.jwks()) ?? "{}")
        case "/authorize":
            state.withLockedValue { $0.authorizeQueries.append(query) }
            let code = "auth0-code-" + UUID().uuidString
            state.withLockedValue {
                $0.codes[code] = (
                    query.first(named: "nonce"), query.first(named: "scope") ?? "", query.first(named: "audience")
                )
            }
            IssuedSecrets.record(code)
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (query.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/oauth/device/code":
            let device = "Ag_EE-auth0-device-" + UUID().uuidString
            state.withLockedValue { $0.deviceCodes[device] = (0, form.first(named: "audience")) }
            IssuedSecrets.record(device)
            return .json(
                #"{"device_code": "\#(device)", "user_code": "FNDP-QHPR", "verification_uri": "\#(base)activate", "#
                    + #""expires_in": 900, "interval": 1, "verification_uri_complete": "\#(base)activate?user_code=FNDP-QHPR"}"#
            )
        case "/oauth/token":
            return token(form)
        case "/oauth/revoke":
            let token = form.first(named: "token") ?? ""
            state.withLockedValue { state in
                if let family = state.issued[token] { state.families[family]?.revoked = true }
            }
            return TestResponse(status: 200)
        case "/userinfo", "/api/resource":
            let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            let audience = state.withLockedValue { $0.accessTokens[token] }
            // /userinfo takes every token it issued; the API only JWTs for its audience.
            guard let audience, path == "/userinfo" || audience == Self.apiAudience else {
                return TestResponse(
                    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#)],
                    body: Data(#"{"message": "Invalid token"}"#.utf8))
            }
            return .json(
                path == "/userinfo"
                    ? #"{"sub": "auth0|5f7c8ec7c33c6c004bbafe82", "email": "alice@acme.test"}"#
                    : ##"{"orders": ["#1042"]}"##)
        case "/oidc/logout":
            guard let target = query.first(named: "post_logout_redirect_uri") else {
                return .text("<html>Logged out</html>", contentType: "text/html")
            }
            let back = FormURLEncoding.url(
                target, adding: query.filter { $0.name == "state" }.map { FormField("state", $0.value) })
            return TestResponse(status: 302, headers: [("Location", back?.absoluteString ?? target)])
        case "/v2/logout":
            guard query.first(named: "client_id") == Self.clientID else {
                return .text("<html>Invalid client</html>", status: 400, contentType: "text/html")
            }
            return .text("<html>Logged out; returning to the first Allowed Logout URL</html>", contentType: "text/html")
        default:
            return .json(#"{"statusCode": 404, "error": "Not Found"}"#, status: 404)
        }
    }

    private func token(_ form: [FormField]) -> TestResponse {
        guard form.first(named: "client_id") == Self.clientID else {
            return error("access_denied", "Unauthorized", status: 401)
        }
        switch form.first(named: "grant_type") {
        case "authorization_code":
            guard let issued = state.withLockedValue({ $0.codes.removeValue(forKey: form.first(named: "code") ?? "") })
            else {
                return error("invalid_grant", "Invalid authorization code", status: 403)
            }
            return tokens(scopes: issued.scopes, nonce: issued.nonce, audience: issued.audience, family: nil)
        case "refresh_token":
            let presented = form.first(named: "refresh_token") ?? ""
            let outcome = state.withLockedValue { state -> Family?? in
                state.refreshes += 1
                guard let name = state.issued[presented], let family = state.families[name], !family.revoked else {
                    return .some(nil)
                }
                guard family.current == presented else {
                    // Reuse detection: a spent token came back; the whole family is revoked.
                    state.families[name]?.revoked = true
                    state.reuseDetections += 1
                    return .some(nil)
                }
                return family
            }
            guard let found = outcome, let family = found, let name = state.withLockedValue({ $0.issued[presented] })
            else {
                return error("invalid_grant", "Unknown or invalid refresh token.", status: 403)
            }
            return tokens(scopes: family.scopes, nonce: nil, audience: family.audience, family: name)
        case "urn:ietf:params:oauth:grant-type:device_code":
            let device = form.first(named: "device_code") ?? ""
            let polled = state.withLockedValue { state -> (Int, String?)? in
                guard let entry = state.deviceCodes[device] else { return nil }
                state.deviceCodes[device]?.polls += 1
                return (entry.polls, entry.audience)
            }
            guard let (polls, audience) = polled else {
                return error("expired_token", "Device code expired", status: 403)
            }
            if polls == 0 {
                return error("authorization_pending", "User has yet to authorize device code.", status: 403)
            }
            state.withLockedValue { $0.deviceCodes[device] = nil }
            return tokens(scopes: form.first(named: "scope") ?? "openid", nonce: nil, audience: audience, family: nil)
        default:
            return error(
                "unsupported_grant_type", "Unsupported grant type: \(form.first(named: "grant_type") ?? "")",
                status: 403)
        }
    }
}
