import Foundation
import LenientJSON
import NativeAuthTesting

/// A Keycloak realm as a dialect of the sandbox, written from Keycloak's documentation:
///
/// - "Securing applications and services guide", OpenID Connect endpoints
///   (keycloak.org/docs/latest/securing_apps/#_oidc): everything under
///   `/realms/{realm}/protocol/openid-connect/` (`auth`, `token`, `userinfo`, `logout`, `certs`,
///   `revoke`, `auth/device`, `ext/par/request`), discovery at `/realms/{realm}/.well-known/openid-configuration`;
///   the revocation endpoint's methods do not list `none`, yet a public client's revocation is taken.
/// - Token answers carry `refresh_expires_in` (the SSO Session Idle, 1800 s by default),
///   `not-before-policy` and `session_state`; with `offline_access` the refresh token is an offline
///   token and `refresh_expires_in` is 0. (Keycloak keeps a used refresh token valid unless "Revoke
///   Refresh Token" is on; the sandbox rotates, which is stricter.)
/// - "Server administration guide", sessions: an ended SSO session answers a refresh with
///   `invalid_grant` "Session not active"; a revoked offline session "Offline user session not found".
/// - RP-initiated logout (Keycloak 18 and later): with `post_logout_redirect_uri`, one of
///   `id_token_hint` or `client_id` is required.
/// - Pushed authorization requests: the realm's "Pushed authorization request required" client
///   setting announces `require_pushed_authorization_requests` and takes authorization requests
///   by `request_uri` only (201 answers from `ext/par/request`).
/// - `kc_idp_hint` on the authorization request names the identity provider to go to.
enum KeycloakSandbox {
    static let realm = "acme"
    static let clientID = "acme-cli"
    static let subject = "f3b1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"

    static let dialect: SandboxAuthorizationServer.Dialect = {
        var keycloak = SandboxAuthorizationServer.Dialect(name: "Keycloak", issuerPath: "/realms/\(realm)")
        let oidc = "/realms/\(realm)/protocol/openid-connect"
        keycloak.paths = [
            .authorization: oidc + "/auth", .token: oidc + "/token", .userInfo: oidc + "/userinfo",
            .endSession: oidc + "/logout", .jwks: oidc + "/certs", .revocation: oidc + "/revoke",
            .deviceAuthorization: oidc + "/auth/device", .pushedAuthorization: oidc + "/ext/par/request",
            .deviceVerification: "/realms/\(realm)/device",
            .registration: "/realms/\(realm)/clients-registrations/openid-connect",
        ]
        let methods: JSONValue = [
            "private_key_jwt", "client_secret_basic", "client_secret_post", "tls_client_auth", "client_secret_jwt",
        ]
        keycloak.discovery = { _ in
            [
                "frontchannel_logout_session_supported": true, "frontchannel_logout_supported": true,
                "subject_types_supported": ["public", "pairwise"],
                "code_challenge_methods_supported": ["plain", "S256"],
                "token_endpoint_auth_methods_supported": methods, "revocation_endpoint_auth_methods_supported": methods,
                "backchannel_logout_supported": true, "backchannel_logout_session_supported": true,
            ]
        }
        keycloak.idTokenClaims = { _ in
            [
                "typ": "ID", "azp": .string(clientID), "sid": "5d5f3a3c-8f2b-4f4e-9a55-6f0f8c1d2e3f",
            ]
        }
        keycloak.tokenResponse = { context in
            [
                "refresh_expires_in": context.scopes.contains("offline_access") ? 0 : 1800, "not-before-policy": 0,
                "session_state": "5d5f3a3c-8f2b-4f4e-9a55-6f0f8c1d2e3f",
            ]
        }
        keycloak.accessTokenPrefix = "eyJhbGciOiJSUzI1NiJ9.keycloak-access-"
        keycloak.words = { refusal in
            guard refusal.error == "invalid_grant", !refusal.scopes.isEmpty else { return refusal }
            return .init(
                error: "invalid_grant",
                description: refusal.scopes.contains("offline_access")
                    ? "Offline user session not found" : "Session not active",
                status: 400, endpoint: refusal.endpoint)
        }
        return keycloak
    }()

    static func start(
        mode: TestServerMode = .inMemory, requiresPushedRequests: Bool = false
    ) async throws -> SandboxAuthorizationServer {
        try await SandboxAuthorizationServer.start(
            .init(
                clients: [.init(id: clientID)],
                users: [
                    .init(
                        subject: subject, username: "alice",
                        claims: ["email": "alice@acme.test", "email_verified": true])
                ],
                autoApprove: true, accessTokenLifetime: .seconds(300), idTokenLifetime: .seconds(300),
                signingAlgorithm: .rs256,
                scopesSupported: ["openid", "offline_access", "profile", "email", "roles", "web-origins"]
            ), .dialect(dialect), .pushedRequests(requiresPushedRequests ? .required : .optional), mode: mode)
    }
}
