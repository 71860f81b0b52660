import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport

/// Microsoft Entra ID (the v2.0 endpoints) as dialects of the sandbox, one per tenant path on one
/// authority host, written from Microsoft's documentation:
///
/// - "OpenID Connect on the Microsoft identity platform" (learn.microsoft.com/entra/identity-platform/v2-protocols-oidc):
///   discovery at `/{tenant}/v2.0/.well-known/openid-configuration`; for `common`, `organizations`
///   and `consumers` its `issuer` is the template `…/{tenantid}/v2.0`, for a domain the tenant's id;
///   the `jwks_uri`, `end_session_endpoint` and a userinfo endpoint on Graph; no revocation and no
///   device authorization endpoint in it.
/// - "Microsoft identity platform and OAuth 2.0 authorization code flow" (…/v2-oauth2-auth-code-flow):
///   `/{tenant}/oauth2/v2.0/authorize` and `/token`; refresh tokens rotate; the refresh request's
///   `scope` is required. ID tokens (RS256) carry `tid`, `oid`, `preferred_username`, `ver` "2.0",
///   and the `iss` of the tenant the person signed in to, whichever endpoint was used.
/// - "Microsoft identity platform and the OAuth 2.0 device authorization grant flow"
///   (…/v2-oauth2-device-code): `/{tenant}/oauth2/v2.0/devicecode`.
/// - "Microsoft Entra authentication and authorization error codes" (…/reference-error-codes):
///   errors carry `error_codes`, `timestamp`, `trace_id`, `correlation_id`, and `error_description`
///   starting `AADSTSnnnnn:`; Conditional Access adds `claims` (a JSON string) to
///   `interaction_required` ("Handle claims challenges", …/claims-challenge).
/// - Front-channel logout at `/{tenant}/oauth2/v2.0/logout`, back to `post_logout_redirect_uri`.
/// - Graph's `/v1.0/me` takes any tenant's token; others get
///   `{"error": {"code": "InvalidAuthenticationToken", …}}`.
struct EntraSandbox {
    /// The tenant accounts belong to, as a GUID; its domain is ``homeDomain``.
    static let homeTenant = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
    static let homeDomain = "contoso.onmicrosoft.com"
    /// The tenant of personal Microsoft accounts, as Microsoft documents it.
    static let consumersTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static let clientID = "11112222-bbbb-3333-cccc-4444dddd5555"
    static let tenants = ["organizations", "common", "consumers", homeTenant, homeDomain]

    /// One Entra error answer, as the token endpoint sends it.
    struct Refusal: Sendable {
        var error: String
        var code: Int
        var text: String
        var claims: String?
    }

    /// Who signs in, whatever endpoint is used.
    struct SignIn: Sendable {
        /// The tenant the next sign-ins happen in.
        var tenant = EntraSandbox.homeTenant
        /// The `tid` the next ID tokens claim instead: a forged token.
        var forgedTID: String?
    }

    let tenantSandboxes: [String: SandboxAuthorizationServer]
    let signIn: Shared<SignIn>

    var host: String { tenant("organizations").host.absoluteString }
    var transport: any HTTPTransport { tenant("organizations").transport }
    /// The `organizations` endpoints' sandbox.
    let organizations: SandboxAuthorizationServer
    /// The sandbox of the tenant path `name` (`organizations` for one there is none of).
    func tenant(_ name: String) -> SandboxAuthorizationServer { tenantSandboxes[name] ?? organizations }
    func stop() async { await tenant("organizations").stop() }
    func forgeTenant(_ tid: String?) { signIn.update { $0.forgedTID = tid } }
    func signInTo(_ tenant: String) { signIn.update { $0.tenant = tenant } }

    /// The forms of every refresh, at every tenant, in order.
    var refreshForms: [[FormField]] {
        tenantSandboxes.values.flatMap(\.requestLog)
            .filter {
                $0.path.hasSuffix("/oauth2/v2.0/token") && $0.fields.first(named: "grant_type") == "refresh_token"
            }
            .map(\.fields)
    }

    /// Makes the next token request at `tenant` answer `refusal`.
    func refuseNext(_ refusal: Refusal, at tenant: String = "organizations") {
        self.tenant(tenant).failNext(
            1, .token,
            with: .response(
                status: 400, contentType: "application/json",
                body: (try? JSONValue.object(Self.body(refusal)).encodedString()) ?? "{}"))
    }

    static func body(_ refusal: Refusal) -> JSONObject {
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
        return body
    }

    /// The AADSTS code Entra gives each refusal the sandbox makes.
    static let codes = [
        "invalid_grant": 70008, "authorization_pending": 70016, "expired_token": 70019, "slow_down": 70016,
        "unsupported_grant_type": 70003, "invalid_client": 7_000_215, "invalid_request": 900_144,
        "invalid_scope": 70011, "access_denied": 65004,
    ]

    static func dialect(_ tenant: String, signIn: Shared<SignIn>) -> SandboxAuthorizationServer.Dialect {
        var entra = SandboxAuthorizationServer.Dialect(name: "Microsoft Entra ID", issuerPath: "/\(tenant)/v2.0")
        let base = "/\(tenant)/oauth2/v2.0"
        entra.paths = [
            .authorization: base + "/authorize", .token: base + "/token", .endSession: base + "/logout",
            .deviceAuthorization: base + "/devicecode", .jwks: "/\(tenant)/discovery/v2.0/keys",
            .userInfo: "/oidc/userinfo", .deviceVerification: "/devicelogin",
            .revocation: base + "/revoke", .registration: base + "/register",
        ]
        entra.unannounced = [.revocation, .registration, .deviceAuthorization]
        entra.discovery = { context in
            let issuer: String
            switch tenant {
            case "common", "organizations", "consumers": issuer = context.host + "/{tenantid}/v2.0"
            case homeDomain: issuer = context.host + "/\(homeTenant)/v2.0"
            default: issuer = context.issuer
            }
            return [
                "issuer": .string(issuer), "subject_types_supported": ["pairwise"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_post", "private_key_jwt", "client_secret_basic",
                ],
                "response_modes_supported": ["query", "fragment", "form_post"],
                "request_uri_parameter_supported": false, "http_logout_supported": true,
                "frontchannel_logout_supported": true, "cloud_instance_name": "microsoftonline.com",
                "msgraph_host": "graph.microsoft.com", "code_challenge_methods_supported": nil,
            ]
        }
        entra.idTokenClaims = { context in
            let who = signIn.value
            return [
                "iss": .string(context.host + "/\(who.tenant)/v2.0"), "tid": .string(who.forgedTID ?? who.tenant),
                "oid": "00000000-0000-0000-66f3-3332eca7ea81", "ver": "2.0",
                "preferred_username": "alice@contoso.onmicrosoft.com", "name": "Alice Example",
            ]
        }
        entra.tokenResponse = { _ in ["ext_expires_in": 3599] }
        entra.issuerInRedirect = false
        entra.accessTokenPrefix = "eyJ0eXAi.entra-access-"
        entra.refreshTokenPrefix = "1.AXEA-entra-refresh-"
        entra.refusal = { refusal in
            .json(
                (try? JSONValue.object(
                    body(.init(error: refusal.error, code: codes[refusal.error] ?? 90000, text: refusal.description))
                )
                .encodedString()) ?? "{}", status: refusal.status)
        }
        entra.apis["/v1.0/me"] = { _, grant in
            guard grant != nil else {
                return .json(
                    #"{"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}"#,
                    status: 401)
            }
            return .json(
                #"{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity", "#
                    + #""displayName": "Alice Example", "userPrincipalName": "alice@contoso.onmicrosoft.com", "#
                    + #""id": "00000000-0000-0000-66f3-3332eca7ea81"}"#)
        }
        return entra
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> EntraSandbox {
        let signIn = Shared(SignIn())
        let configurations = tenants.map { tenant in
            SandboxAuthorizationServer.Configuration(
                clients: [.init(id: clientID)],
                users: [
                    .init(
                        subject: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
                        username: "alice@contoso.onmicrosoft.com")
                ],
                autoApprove: true, accessTokenLifetime: .seconds(3599), signingAlgorithm: .rs256,
                scopesSupported: [
                    "openid", "profile", "email", "offline_access", "User.Read", "api://contoso-api/.default",
                ]
            ).with(.dialect(dialect(tenant, signIn: signIn)))
        }
        let sandboxes = try await SandboxAuthorizationServer.start(sharingHost: configurations, mode: mode)
        return EntraSandbox(
            tenantSandboxes: Dictionary(uniqueKeysWithValues: zip(tenants, sandboxes)), signIn: signIn,
            organizations: sandboxes[0])
    }
}
