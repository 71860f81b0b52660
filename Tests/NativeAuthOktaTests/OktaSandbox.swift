import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting

/// An Okta org as dialects of the sandbox on one host, written from Okta's documentation:
///
/// - "Authorization servers" (developer.okta.com/docs/concepts/auth-servers): the org authorization
///   server (issuer `https://DOMAIN`, endpoints under `/oauth2/v1/`) and custom ones (issuer
///   `https://DOMAIN/oauth2/{authorizationServerId}`, endpoints under `/oauth2/{id}/v1/`), `default`
///   among them; each with its own discovery document, keys and tokens.
/// - "OpenID Connect & OAuth 2.0 API" (developer.okta.com/docs/api/openapi/okta-oauth): `/v1/authorize`,
///   `/v1/token`, `/v1/keys`, `/v1/userinfo`, `/v1/revoke`, `/v1/logout` (which wants
///   `id_token_hint`), `/v1/device/authorize`, `/v1/par`; refusals such as `access_denied`
///   "Policy evaluation failed for this request, please check the policy configurations."
/// - The management API (`/api/v1/users/me`) takes only the org server's access tokens and answers
///   others with `{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}`.
struct OktaSandbox {
    static let clientID = "0oa1b2c3d4e5f6g7h8i9"
    static let customServer = "aus9o8wzkhckw9TLa0h7"
    static let subject = "00uid4BxXw6I6TV4m0g3"
    static let policyRefusal = "Policy evaluation failed for this request, please check the policy configurations."

    /// The sandboxes, by server: `org`, `default` and ``customServer``.
    let servers: [String: SandboxAuthorizationServer]

    /// `http://127.0.0.1:PORT`.
    var host: String { org.host.absoluteString }
    /// The org authorization server, whose host every server shares.
    let org: SandboxAuthorizationServer
    /// The sandbox of server `name` (the org's for a name there is none of).
    func server(_ name: String) -> SandboxAuthorizationServer { servers[name] ?? org }
    func issuer(_ name: String) -> String { server(name).issuer.absoluteString }
    var transport: any HTTPTransport { org.transport }
    func stop() async { await org.stop() }

    /// The token type hints of every revocation, at every server, in order.
    var revocationHints: [String] {
        servers.values.flatMap(\.requestLog).filter { $0.path.hasSuffix("/v1/revoke") }
            .map { $0.fields.first(named: "token_type_hint") ?? "" }
    }

    static func dialect(_ server: String) -> SandboxAuthorizationServer.Dialect {
        let base = server == "org" ? "/oauth2/v1" : "/oauth2/\(server)/v1"
        var okta = SandboxAuthorizationServer.Dialect(
            name: "Okta", issuerPath: server == "org" ? "" : "/oauth2/\(server)")
        okta.paths = [
            .authorization: base + "/authorize", .token: base + "/token", .userInfo: base + "/userinfo",
            .jwks: base + "/keys", .revocation: base + "/revoke", .endSession: base + "/logout",
            .deviceAuthorization: base + "/device/authorize", .pushedAuthorization: base + "/par",
            .deviceVerification: "/activate", .registration: "/oauth2/v1/clients",
        ]
        okta.discovery = { _ in
            [
                "response_modes_supported": ["query", "fragment", "form_post", "okta_post_message"],
                "request_parameter_supported": true,
            ]
        }
        okta.idTokenClaims = { _ in
            [
                "ver": 1, "amr": ["pwd"], "idp": "00ok1u7AsAkrwdZL3z0g3", "preferred_username": "alice@acme.test",
            ]
        }
        okta.accessTokenPrefix = "eyJraWQiOiJva3RhIn0.okta-access-"
        okta.endSessionRequiresIDTokenHint = true
        let invalidToken = TestResponse.json(
            #"{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}"#, status: 401)
        if server == "org" {
            okta.apis["/api/v1/users/me"] = { _, grant in
                grant == nil ? invalidToken : .json(#"{"id": "\#(subject)", "profile": {"login": "alice@acme.test"}}"#)
            }
            okta.notFound = .json(
                #"{"errorCode": "E0000007", "errorSummary": "Not found: Resource not found"}"#, status: 404)
        } else if server == "default" {
            // An app's own API, which takes the default server's tokens.
            okta.apis["/orders"] = { _, grant in
                grant == nil ? invalidToken : .json(#"{"id": "\#(subject)", "profile": {"login": "alice@acme.test"}}"#)
            }
        }
        return okta
    }

    static func start(mode: TestServerMode = .inMemory) async throws -> OktaSandbox {
        let names = ["org", "default", customServer]
        let configurations = names.map { name in
            SandboxAuthorizationServer.Configuration(
                clients: [.init(id: clientID)],
                users: [.init(subject: subject, username: "alice@acme.test")],
                autoApprove: true, signingAlgorithm: .rs256,
                scopesSupported: ["openid", "email", "profile", "address", "phone", "offline_access", "device_sso"]
            ).with(.dialect(dialect(name)), .pushedRequests(.optional), .refreshTokenReuseDetection)
        }
        let sandboxes = try await SandboxAuthorizationServer.start(sharingHost: configurations, mode: mode)
        return OktaSandbox(servers: Dictionary(uniqueKeysWithValues: zip(names, sandboxes)), org: sandboxes[0])
    }
}
