import Foundation
import LenientJSON
import NativeAuthTesting

/// An Auth0 tenant as a dialect of the sandbox, written from Auth0's documentation:
///
/// - "Locate the OpenID Connect discovery endpoint" and the Authentication API reference
///   (auth0.com/docs/api/authentication): `iss` is `https://DOMAIN/` with its trailing slash;
///   `/authorize`, `/oauth/token`, `/oauth/device/code`, `/oauth/revoke`, `/userinfo`,
///   `/.well-known/jwks.json`, `/oidc/logout` (and the legacy `/v2/logout?client_id&returnTo`,
///   which the provider builds and nothing here serves).
/// - "Get access tokens" / "Opaque access tokens": with `audience` the access token is for that
///   API; without it, an opaque token only `/userinfo` takes. An unknown audience is refused with
///   `access_denied`: "Service not found: AUDIENCE" on the authorization redirect, "Service not
///   enabled within domain: AUDIENCE" from the token endpoint; token errors come with status 403.
/// - "Refresh token rotation" and "Automatic reuse detection": a refresh returns a new refresh token
///   and spends the old one; a spent one presented again revokes the whole family, and the
///   answer is `invalid_grant` "Unknown or invalid refresh token.".
/// - Refresh tokens only with `offline_access` (the sandbox issues them always).
enum Auth0Sandbox {
    static let clientID = "kbyuFDidLLm280LIwVFiazOqjO3ty8KH"
    static let apiAudience = "https://api.acme.test"

    static let dialect: SandboxAuthorizationServer.Dialect = {
        var auth0 = SandboxAuthorizationServer.Dialect(name: "Auth0")
        auth0.issuerEndsWithSlash = true
        auth0.paths = [
            .token: "/oauth/token", .deviceAuthorization: "/oauth/device/code", .revocation: "/oauth/revoke",
            .jwks: "/.well-known/jwks.json", .endSession: "/oidc/logout", .registration: "/oidc/register",
            .deviceVerification: "/activate",
        ]
        auth0.discovery = { _ in
            [
                "code_challenge_methods_supported": ["S256", "plain"],
                "response_modes_supported": ["query", "fragment", "form_post"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_basic", "client_secret_post", "private_key_jwt",
                ],
                "request_uri_parameter_supported": false, "request_parameter_supported": false,
                "backchannel_logout_supported": true, "backchannel_logout_session_supported": true,
            ]
        }
        auth0.idTokenClaims = { _ in ["sid": "Z6aQKk6V2Pqfk2Tm0iRdMkVhyaWrH0cd", "nickname": "alice"] }
        auth0.accessTokenPrefix = "eyJhbGciOiJSUzI1NiJ9.auth0-"
        auth0.resourceParameter = "audience"
        auth0.resourceIdentifiers = [apiAudience]
        auth0.words = { refusal in
            switch refusal.error {
            case "invalid_target":
                // The authorization redirect and the token endpoint say it differently.
                let audience = refusal.description.components(separatedBy: " ").last ?? ""
                let words =
                    refusal.endpoint == .authorization
                    ? "Service not found: \(audience)" : "Service not enabled within domain: \(audience)"
                return .init(error: "access_denied", description: words, status: 403, endpoint: refusal.endpoint)
            case "invalid_grant" where refusal.description.contains("refresh token"):
                return .init(
                    error: "invalid_grant", description: "Unknown or invalid refresh token.", status: 403,
                    endpoint: refusal.endpoint)
            default:
                return .init(
                    error: refusal.error, description: refusal.description,
                    status: refusal.status == 400 ? 403 : refusal.status, endpoint: refusal.endpoint)
            }
        }
        // The API takes only tokens issued for its audience.
        auth0.apis["/api/resource"] = { _, grant in
            guard let grant, grant.resources.contains(apiAudience) else {
                return TestResponse(
                    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#)],
                    body: Data(#"{"message": "Invalid token"}"#.utf8))
            }
            return .json(##"{"orders": ["#1042"]}"##)
        }
        auth0.notFound = .json(#"{"statusCode": 404, "error": "Not Found"}"#, status: 404)
        return auth0
    }()

    static func start(mode: TestServerMode = .inMemory) async throws -> SandboxAuthorizationServer {
        try await SandboxAuthorizationServer.start(
            .init(
                clients: [.init(id: clientID)],
                users: [
                    .init(
                        subject: "auth0|5f7c8ec7c33c6c004bbafe82", username: "alice@acme.test",
                        claims: ["name": "alice@acme.test", "email": "alice@acme.test", "email_verified": true])
                ],
                autoApprove: true, accessTokenLifetime: .seconds(86400), idTokenLifetime: .seconds(36000),
                signingAlgorithm: .rs256,
                scopesSupported: [
                    "openid", "profile", "offline_access", "name", "given_name", "family_name", "nickname", "email",
                    "email_verified", "picture", "created_at", "identities", "phone", "address",
                ]),
            .dialect(dialect), .refreshTokenReuseDetection, mode: mode)
    }
}
