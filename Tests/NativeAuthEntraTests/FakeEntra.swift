import Foundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport

/// A Microsoft Entra ID stand-in (the v2.0 endpoints), written from Microsoft's documentation:
///
/// - "OpenID Connect on the Microsoft identity platform" (learn.microsoft.com/entra/identity-platform/v2-protocols-oidc):
///   discovery at `/{tenant}/v2.0/.well-known/openid-configuration`; for `common`, `organizations`
///   and `consumers` its `issuer` is the template `…/{tenantid}/v2.0`, for a domain the tenant's id;
///   the `jwks_uri`, `end_session_endpoint` and a userinfo endpoint on Graph; no revocation and no
///   device authorization endpoint in it.
/// - "Microsoft identity platform and OAuth 2.0 authorization code flow" (…/v2-oauth2-auth-code-flow):
///   `/{tenant}/oauth2/v2.0/authorize` and `/token`; a refresh token only with `offline_access`;
///   refresh tokens rotate; the refresh request's `scope` is required (without it: `invalid_request`,
///   AADSTS90014). ID tokens (RS256) carry `tid`, `oid`, `preferred_username`, `ver` "2.0".
/// - "Microsoft identity platform and the OAuth 2.0 device authorization grant flow"
///   (…/v2-oauth2-device-code): `/{tenant}/oauth2/v2.0/devicecode` answers `verification_uri`
///   and `message`; polling gets `authorization_pending` once, then tokens.
/// - "Microsoft Entra authentication and authorization error codes" (…/reference-error-codes):
///   errors carry `error_codes`, `timestamp`, `trace_id`, `correlation_id`, and `error_description`
///   starting `AADSTSnnnnn:`; Conditional Access adds `claims` (a JSON string) to
///   `interaction_required` ("Handle claims challenges", …/claims-challenge).
/// - Front-channel logout at `/{tenant}/oauth2/v2.0/logout`, back to `post_logout_redirect_uri`
///   with `state`.
final class FakeEntra: Sendable {
    /// The tenant accounts belong to, as a GUID; its domain is ``homeDomain``.
    static let homeTenant = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
    static let homeDomain = "contoso.onmicrosoft.com"
    /// The tenant of personal Microsoft accounts, as Microsoft documents it.
    static let consumersTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static let clientID = "11112222-bbbb-3333-cccc-4444dddd5555"

    /// One Entra error answer, as the token endpoint sends it.
    struct Refusal: Sendable {
        var error: String
        var code: Int
        var text: String
        var claims: String?
    }

    let server: TestHTTPServer
    let signer: StandInSigner
    private let state = NIOLockedValueBox(State())

    struct State {
        var codes: [String: (nonce: String?, scopes: [String], tenant: String)] = [:]
        var refreshTokens: [String: (scopes: [String], tenant: String)] = [:]
        var accessTokens: Set<String> = []
        var deviceCodes: [String: Int] = [:]
        var refusals: [Refusal] = []
        /// The `tid` the next ID tokens claim while `iss` names the home tenant: a forged token.
        var mismatchedTID: String?
        /// The tenant the next sign-ins happen in (the home tenant unless a test says otherwise).
        var signInTenant = FakeEntra.homeTenant
        var log: [String] = []
        var refreshForms: [[FormField]] = []
    }

    private init(server: TestHTTPServer, signer: StandInSigner) {
        self.server = server
        self.signer = signer
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> FakeEntra {
        let holder = Shared<FakeEntra?>(nil)
        let server = try await TestHTTPServer.start(mode) { request in
            guard let entra = holder.value else { return .text("starting", status: 503) }
            return await entra.answer(request)
        }
        let entra = FakeEntra(server: server, signer: try StandInSigner(kid: "entra-key"))
        holder.update { $0 = entra }
        return entra
    }

    var host: String { server.url("").absoluteString }
    var requests: [String] { state.withLockedValue { $0.log } }
    var refreshForms: [[FormField]] { state.withLockedValue { $0.refreshForms } }
    func refuseNext(_ refusal: Refusal) { state.withLockedValue { $0.refusals.append(refusal) } }
    func forgeTenant(_ tid: String?) { state.withLockedValue { $0.mismatchedTID = tid } }
    func signInTo(_ tenant: String) { state.withLockedValue { $0.signInTenant = tenant } }

    private func issuer(of tenant: String) -> String { host + "/\(tenant)/v2.0" }

    private func idToken(nonce: String?, tenant: String) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let forged = state.withLockedValue { $0.mismatchedTID }
        var claims: JSONObject = [
            "iss": .string(issuer(of: tenant)), "aud": .string(Self.clientID),
            "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", "oid": "00000000-0000-0000-66f3-3332eca7ea81",
            "tid": .string(forged ?? tenant), "ver": "2.0", "preferred_username": "alice@contoso.onmicrosoft.com",
            "name": "Alice Example", "iat": .integer(now), "nbf": .integer(now), "exp": .integer(now + 3600),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        return try signer.sign(claims)
    }

    private func error(_ refusal: Refusal, status: Int = 400) -> TestResponse {
        var body: JSONObject = [
            "error": .string(refusal.error),
            "error_description": .string(
                "AADSTS\(refusal.code): \(refusal.text) Trace ID: 0000aaaa-11bb-cccc-dd22-eeeeee333333"
                    + " Correlation ID: aaaa0000-bb11-2222-33cc-444444dddddd Timestamp: 2026-11-26 10:00:00Z"),
            "error_codes": .array([.integer(Int64(refusal.code))]), "timestamp": "2026-11-26 10:00:00Z",
            "trace_id": "0000aaaa-11bb-cccc-dd22-eeeeee333333",
            "correlation_id": "aaaa0000-bb11-2222-33cc-444444dddddd",
        ]
        if let claims = refusal.claims { body["claims"] = .string(claims) }
        return .json(body, status: status)
    }

    private func tokens(scopes: [String], nonce: String?, tenant: String) async -> TestResponse {
        let access = "eyJ0eXAi.entra-access-" + UUID().uuidString
        state.withLockedValue { _ = $0.accessTokens.insert(access) }
        var body: JSONObject = [
            "token_type": "Bearer", "scope": .string(scopes.filter { $0 != "offline_access" }.joined(separator: " ")),
            "expires_in": 3599, "ext_expires_in": 3599, "access_token": .string(access),
        ]
        IssuedSecrets.record(access)
        if scopes.contains("offline_access") {
            let refresh = "1.AXEA-entra-refresh-" + UUID().uuidString
            state.withLockedValue { $0.refreshTokens[refresh] = (scopes, tenant) }
            body["refresh_token"] = .string(refresh)
            IssuedSecrets.record(refresh)
        }
        if scopes.contains("openid"), let id = try? idToken(nonce: nonce, tenant: tenant) {
            body["id_token"] = .string(id)
            IssuedSecrets.record(id)
        }
        return .json(body)
    }

    private func answer(_ request: TestRequest) async -> TestResponse {
        let (path, query, form) = (request.path, request.query, request.form)
        state.withLockedValue { $0.log.append(path) }
        let segments = path.split(separator: "/").map(String.init)
        if path == "/oidc/userinfo" || path == "/v1.0/me" { return me(request, userinfo: path == "/oidc/userinfo") }
        if path == "/signed-out" { return .text("<html>Signed out</html>", contentType: "text/html") }
        guard let tenant = segments.first else { return .text("not found", status: 404) }
        let rest = "/" + segments.dropFirst().joined(separator: "/")
        switch rest {
        case "/v2.0/.well-known/openid-configuration":
            let named: String
            switch tenant {
            case "common", "organizations", "consumers": named = host + "/{tenantid}/v2.0"
            case Self.homeDomain: named = issuer(of: Self.homeTenant)
            default: named = issuer(of: tenant)
            }
            let base = host + "/" + tenant
            return .json(
                #"{"token_endpoint": "\#(base)/oauth2/v2.0/token", "#
                    + #""token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"], "#
                    + #""jwks_uri": "\#(base)/discovery/v2.0/keys", "response_modes_supported": ["query", "fragment", "form_post"], "#
                    + #""subject_types_supported": ["pairwise"], "id_token_signing_alg_values_supported": ["RS256"], "#
                    + #""response_types_supported": ["code", "id_token", "code id_token", "id_token token"], "#
                    + #""scopes_supported": ["openid", "profile", "email", "offline_access"], "issuer": "\#(named)", "#
                    + #""request_uri_parameter_supported": false, "userinfo_endpoint": "\#(host)/oidc/userinfo", "#
                    + #""authorization_endpoint": "\#(base)/oauth2/v2.0/authorize", "#
                    + #""device_authorization_endpoint": null, "http_logout_supported": true, "frontchannel_logout_supported": true, "#
                    + #""end_session_endpoint": "\#(base)/oauth2/v2.0/logout", "#
                    + #""claims_supported": ["sub", "iss", "cloud_instance_name", "aud", "exp", "iat", "nonce", "tid", "ver"], "#
                    + #""kerberos_endpoint": "\#(base)/kerberos", "tenant_region_scope": null, "#
                    + #""cloud_instance_name": "microsoftonline.com", "cloud_graph_host_name": "graph.windows.net", "#
                    + #""msgraph_host": "graph.microsoft.com", "rbac_url": "https://pas.windows.net"}"#)
        case "/discovery/v2.0/keys":
            // Entra's keys name the issuer template they sign for.
            guard let jwks = try? signer.jwks(adding: ["issuer": .string(host + "/{tenantid}/v2.0")]) else {
                return .text("no key", status: 500)
            }
            return .json(jwks)
        case "/oauth2/v2.0/authorize":
            guard query.first(named: "client_id") == Self.clientID else {
                return .text("<html>AADSTS700016: Application not found</html>", status: 400, contentType: "text/html")
            }
            let code = "0.AXEA-code-" + UUID().uuidString
            let scopes = (query.first(named: "scope") ?? "").split(separator: " ").map(String.init)
            let signedIn = state.withLockedValue { $0.signInTenant }
            state.withLockedValue { $0.codes[code] = (query.first(named: "nonce"), scopes, signedIn) }
            IssuedSecrets.record(code)
            let back = FormURLEncoding.encode([
                FormField("code", code), FormField("state", query.first(named: "state") ?? ""),
                FormField("session_state", "fe1540c3-a69a-469a-9fa3-8a2470936421"),
            ])
            return TestResponse(
                status: 302, headers: [("Location", (query.first(named: "redirect_uri") ?? "") + "?" + back)])
        case "/oauth2/v2.0/devicecode":
            let device = "GAAABAAEAiL9Kn2Z-device-" + UUID().uuidString
            state.withLockedValue { $0.deviceCodes[device] = 0 }
            IssuedSecrets.record(device)
            return .json(
                #"{"user_code": "FTQ7DX2GL", "device_code": "\#(device)", "#
                    + #""verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 1, "#
                    + #""message": "To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code FTQ7DX2GL to authenticate."}"#
            )
        case "/oauth2/v2.0/token":
            return await token(form)
        case "/oauth2/v2.0/logout":
            guard let target = query.first(named: "post_logout_redirect_uri") else {
                return .text("<html>You signed out of your account.</html>", contentType: "text/html")
            }
            let back = FormURLEncoding.url(
                target, adding: query.filter { $0.name == "state" }.map { FormField("state", $0.value) })
            return TestResponse(status: 302, headers: [("Location", back?.absoluteString ?? target)])
        default:
            return .text("not found", status: 404)
        }
    }

    private func token(_ form: [FormField]) async -> TestResponse {
        if let refusal = state.withLockedValue({ $0.refusals.isEmpty ? nil : $0.refusals.removeFirst() }) {
            return error(refusal)
        }
        guard form.first(named: "client_id") == Self.clientID else {
            return error(
                Refusal(error: "unauthorized_client", code: 700016, text: "Application not found in the directory."))
        }
        switch form.first(named: "grant_type") {
        case "authorization_code":
            guard let issued = state.withLockedValue({ $0.codes.removeValue(forKey: form.first(named: "code") ?? "") })
            else {
                return error(
                    Refusal(
                        error: "invalid_grant", code: 54005, text: "OAuth2 Authorization code was already redeemed."))
            }
            return await tokens(scopes: issued.scopes, nonce: issued.nonce, tenant: issued.tenant)
        case "refresh_token":
            state.withLockedValue { $0.refreshForms.append(form) }
            guard let scope = form.first(named: "scope"), !scope.isEmpty else {
                return error(
                    Refusal(
                        error: "invalid_request", code: 90014,
                        text: "The required field 'scope' is missing from the credential."))
            }
            guard
                let held = state.withLockedValue({
                    $0.refreshTokens.removeValue(forKey: form.first(named: "refresh_token") ?? "")
                })
            else {
                return error(
                    Refusal(
                        error: "invalid_grant", code: 700082, text: "The refresh token has expired due to inactivity."))
            }
            return await tokens(scopes: scope.split(separator: " ").map(String.init), nonce: nil, tenant: held.tenant)
        case "urn:ietf:params:oauth:grant-type:device_code":
            let device = form.first(named: "device_code") ?? ""
            let polls = state.withLockedValue { state -> Int? in
                guard let count = state.deviceCodes[device] else { return nil }
                state.deviceCodes[device] = count + 1
                return count
            }
            guard let polls else {
                return error(Refusal(error: "expired_token", code: 70019, text: "Verification code expired."))
            }
            if polls == 0 {
                return error(
                    Refusal(
                        error: "authorization_pending", code: 70016,
                        text: "OAuth 2.0 device flow error. Authorization is pending."))
            }
            state.withLockedValue { $0.deviceCodes[device] = nil }
            let scopes = (form.first(named: "scope") ?? "openid profile offline_access").split(separator: " ").map(
                String.init)
            return await tokens(scopes: scopes, nonce: nil, tenant: state.withLockedValue { $0.signInTenant })
        default:
            return error(
                Refusal(
                    error: "unsupported_grant_type", code: 70003, text: "The app requested an unsupported grant type."))
        }
    }

    /// Graph's `/me` and the userinfo endpoint.
    private func me(_ request: TestRequest, userinfo: Bool) -> TestResponse {
        let token = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
        guard state.withLockedValue({ $0.accessTokens.contains(token) }) else {
            return .json(
                #"{"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}"#, status: 401)
        }
        if userinfo {
            return .json(#"{"sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", "name": "Alice Example"}"#)
        }
        return .json(
            #"{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity", "displayName": "Alice Example", "#
                + #""userPrincipalName": "alice@contoso.onmicrosoft.com", "id": "00000000-0000-0000-66f3-3332eca7ea81"}"#
        )
    }
}
