import Foundation
import LenientJSON
import NativeAuthTesting

/// GitLab as a dialect of the sandbox, written from GitLab's documentation:
///
/// - "OAuth 2.0 identity provider API" (docs.gitlab.com/api/oauth2): `/oauth/authorize` and
///   `/oauth/token` with PKCE; token answers with `token_type` "Bearer", `expires_in` 7200,
///   `refresh_token`, `scope` and `created_at`; a refresh returns a new refresh token and revokes
///   the one it used (`invalid_grant` for it afterwards); `/oauth/revoke`; the device authorization
///   grant (GitLab 17.2+) at `/oauth/authorize_device`, polled with `authorization_pending`.
/// - "GitLab as an OpenID Connect identity provider" (docs.gitlab.com/integration/openid_connect_provider):
///   discovery at `/.well-known/openid-configuration` (no device endpoint in it, no end-session
///   endpoint), ID tokens RS256 with `sub` the user id, `nickname`, `preferred_username`,
///   `groups_direct`; `/oauth/userinfo`.
/// - The REST API under `/api/v4` (`GET /user`), which takes the OAuth token as `Bearer` and
///   answers anything else `{"message": "401 Unauthorized"}`.
enum GitLabSandbox {
    static let clientID = "4f5a0c7e9b1d2a3c4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d"
    static let alice = SandboxAuthorizationServer.User(
        subject: "1234567", username: "alice",
        claims: ["name": "Alice Example", "email": "alice@example.test", "email_verified": true])

    static let dialect: SandboxAuthorizationServer.Dialect = {
        var gitlab = SandboxAuthorizationServer.Dialect(name: "GitLab")
        gitlab.paths = [
            .authorization: "/oauth/authorize", .token: "/oauth/token", .revocation: "/oauth/revoke",
            .userInfo: "/oauth/userinfo", .jwks: "/oauth/discovery/keys",
            .deviceAuthorization: "/oauth/authorize_device", .deviceVerification: "/oauth/device",
        ]
        gitlab.unannounced = [.deviceAuthorization, .endSession, .registration]
        gitlab.discovery = { _ in
            [
                "response_modes_supported": ["query", "fragment", "form_post"],
                "grant_types_supported": [
                    "authorization_code", "password", "client_credentials", "device_code", "refresh_token",
                ],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "claims_supported": [
                    "iss", "sub", "aud", "exp", "iat", "sub_legacy", "name", "nickname", "preferred_username", "email",
                    "email_verified", "groups_direct",
                ],
                "code_challenge_methods_supported": nil,
            ]
        }
        gitlab.idTokenClaims = { _ in
            [
                "sub_legacy": "2ab6b2f0c1", "nickname": "alice", "preferred_username": "alice",
                "groups_direct": ["acme"],
            ]
        }
        gitlab.tokenResponse = { _ in ["created_at": .integer(Int64(Date().timeIntervalSince1970))] }
        gitlab.issuerInRedirect = false
        gitlab.accessTokenPrefix = "glpat-oauth-"
        gitlab.apis["/api/v4/user"] = { _, grant in
            guard grant != nil else { return .json(#"{"message": "401 Unauthorized"}"#, status: 401) }
            return .json(
                #"{"id": 1234567, "username": "alice", "name": "Alice Example", "sub": "1234567", "state": "active"}"#)
        }
        gitlab.notFound = .json(#"{"error": "404 Not Found"}"#, status: 404)
        return gitlab
    }()

    static func start(mode: TestServerMode = .inMemory) async throws -> SandboxAuthorizationServer {
        try await SandboxAuthorizationServer.start(
            .init(
                clients: [.init(id: clientID)], users: [alice], autoApprove: true, accessTokenLifetime: .seconds(7200),
                signingAlgorithm: .rs256,
                scopesSupported: [
                    "api", "read_api", "read_user", "read_repository", "write_repository", "openid", "profile", "email",
                ]),
            .dialect(dialect), mode: mode)
    }
}
