public import LenientJSON

extension SandboxAuthorizationServer {
    /// How a provider says what the sandbox does: where its endpoints are, what its discovery
    /// document, tokens and errors look like, and the APIs beside it. The flows stay the sandbox's
    /// own (PKCE, rotation, the device flow, DPoP, revocation), so a provider module's tests write
    /// down only what the provider's documentation says differently.
    ///
    /// ```swift
    /// var gitlab = SandboxAuthorizationServer.Dialect(name: "GitLab")
    /// gitlab.paths = [.authorization: "/oauth/authorize", .token: "/oauth/token"]
    /// gitlab.tokenResponse = { _ in ["created_at": .integer(Int64(Date().timeIntervalSince1970))] }
    /// let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), .dialect(gitlab))
    /// ```
    ///
    /// Several sandboxes with dialects of one provider can share a host
    /// (``start(sharingHost:mode:)``): an Okta org and its custom authorization servers, a Keycloak
    /// server's realms.
    public struct Dialect: Sendable {
        /// A protected API beside the authorization server: its answer, given the request and the
        /// grant behind the access token presented (`nil` when the token is not one this sandbox
        /// issued, or has expired or been revoked).
        public typealias API = @Sendable (TestRequest, TokenGrant?) -> TestResponse

        /// What an access token presented to an ``API`` was issued for.
        public struct TokenGrant: Sendable {
            /// The `sub` of the sign-in (a client-credentials token: the client id).
            public let subject: String
            /// The client the token was issued to.
            public let clientID: String
            /// The scopes of the access token.
            public let scopes: [String]
            /// The issuer that issued it.
            public let issuer: String
            /// The resources (RFC 8707) or audiences it was issued for; empty: the sandbox's own.
            public let resources: [String]
            /// The claims of the user the token belongs to, as userinfo would release them.
            public let claims: JSONObject
        }

        /// Where a dialect's member is asked for.
        public struct Context: Sendable {
            /// `http://127.0.0.1:PORT`, as the request named it.
            public let host: String
            /// The sandbox's issuer.
            public let issuer: String
            /// The scopes the tokens are granted (none for discovery).
            public let scopes: [String]
        }

        /// An OAuth error answer to shape: the `error`, its description and the HTTP status.
        public struct Refusal: Sendable {
            /// A refusal.
            public init(error: String, description: String, status: Int, endpoint: Endpoint, scopes: [String] = []) {
                self.error = error
                self.description = description
                self.status = status
                self.endpoint = endpoint
                self.scopes = scopes
            }

            /// The `error` code (RFC 6749 §5.2).
            public let error: String
            /// The human-readable description.
            public let description: String
            /// The HTTP status (400 on the authorization redirect, which has none).
            public let status: Int
            /// The endpoint that refuses: ``Endpoint/authorization`` for the redirect's `error`.
            public let endpoint: Endpoint
            /// The scopes of the sign-in whose refresh token is refused, when the sandbox knows
            /// them (one ended by ``SandboxAuthorizationServer/endSignIns(where:)``): Keycloak
            /// words an ended offline session apart from an online one.
            public let scopes: [String]
        }

        /// The provider's name, for messages.
        public var name: String
        /// The issuer's path on the sandbox's host: `""` (the default) for the host itself,
        /// `/realms/acme` for a Keycloak realm, `/oauth2/default` for an Okta server.
        public var issuerPath: String
        /// Whether the issuer ends with a slash, as Auth0's does (`https://TENANT.auth0.com/`).
        public var issuerEndsWithSlash: Bool
        /// Where each endpoint is served, as a path on the host. An endpoint not named here is served
        /// at its ``Endpoint`` path under ``issuerPath``; discovery is always served under the issuer
        /// (`ISSUER/.well-known/openid-configuration`).
        public var paths: [Endpoint: String]
        /// Endpoints served but left out of the discovery document (GitLab's device endpoint).
        public var unannounced: Set<Endpoint>
        /// Members set in the discovery document (a `null` removes one).
        public var discovery: @Sendable (Context) -> JSONObject
        /// Claims set in every ID token, after the sandbox's own (Okta's `ver` and `idp`; Entra's
        /// `tid`, and the `iss` of the tenant signed in to at a multi-tenant endpoint).
        public var idTokenClaims: @Sendable (Context) -> JSONObject
        /// Members added to a token response (GitLab's `created_at`, Keycloak's
        /// `refresh_expires_in`, 0 for an offline token).
        public var tokenResponse: @Sendable (Context) -> JSONObject
        /// What every access token starts with (some providers' are JWTs, a client may only look).
        public var accessTokenPrefix: String
        /// What every refresh token starts with.
        public var refreshTokenPrefix: String
        /// Token responses form-encoded (`application/x-www-form-urlencoded`), as GitHub's are
        /// without `Accept: application/json`.
        public var formEncodedTokenResponses: Bool
        /// Whether the authorization redirect carries `iss` (RFC 9207) and discovery announces it
        /// (`authorization_response_iss_parameter_supported`); GitLab and Entra send none.
        public var issuerInRedirect: Bool
        /// Whether end-session refuses a request without `id_token_hint` with an HTML page (Okta).
        public var endSessionRequiresIDTokenHint: Bool
        /// The provider's words for a refusal the sandbox makes (its code, description and status),
        /// at every endpoint and on the authorization redirect: Auth0 answers an unknown audience
        /// `access_denied` "Service not enabled within domain". Default the sandbox's own.
        public var words: @Sendable (Refusal) -> Refusal
        /// How OAuth error answers look; default RFC 6749's JSON.
        public var refusal: @Sendable (Refusal) -> TestResponse
        /// The parameter that names the resource a token is for: `resource` (RFC 8707, the
        /// default), or Auth0's `audience`.
        public var resourceParameter: String
        /// Identifiers taken as resources besides the protected resources the sandbox serves (an
        /// Auth0 API's audience, say); tokens for them are for the ``apis`` to accept.
        public var resourceIdentifiers: [String]
        /// The APIs beside the authorization server, by path on the host (`/api/v4/user`).
        public var apis: [String: API]
        /// The answer to a path nothing serves.
        public var notFound: TestResponse

        /// The sandbox's own: endpoints at the paths of ``Endpoint``, RFC 6749's errors.
        public static let sandbox = Dialect(name: "sandbox")

        /// Creates a dialect that says everything as the sandbox does; set what differs.
        public init(name: String, issuerPath: String = "") {
            self.name = name
            self.issuerPath = issuerPath
            issuerEndsWithSlash = false
            paths = [:]
            unannounced = []
            discovery = { _ in [:] }
            idTokenClaims = { _ in [:] }
            tokenResponse = { _ in [:] }
            accessTokenPrefix = ""
            refreshTokenPrefix = ""
            formEncodedTokenResponses = false
            issuerInRedirect = true
            endSessionRequiresIDTokenHint = false
            words = { $0 }
            resourceParameter = "resource"
            resourceIdentifiers = []
            refusal = { refusal in
                .json(
                    (try? JSONValue.object([
                        "error": .string(refusal.error), "error_description": .string(refusal.description),
                    ]).encodedString()) ?? "{}", status: refusal.status)
            }
            apis = [:]
            notFound = .text("not found", status: 404)
        }

        /// The path `endpoint` is served at on the host.
        public func path(_ endpoint: Endpoint) -> String {
            if endpoint == .discovery { return issuerPath + Endpoint.discovery.rawValue }
            return paths[endpoint] ?? issuerPath + endpoint.rawValue
        }
    }

    /// A feature of the sandbox, composed at ``start(_:_:mode:)``:
    /// `.start(.init(autoApprove: true), .dpop(.required(nonce: true)), .pushedRequests(.required))`.
    public struct Feature: Sendable {
        let apply: @Sendable (inout Configuration) -> Void

        /// A feature that changes the configuration as `apply` does.
        public init(_ apply: @escaping @Sendable (inout Configuration) -> Void) { self.apply = apply }

        /// How DPoP (RFC 9449) is served.
        public enum DPoP: Sendable {
            /// Proofs are taken and bind tokens; requests without one get `Bearer` tokens.
            case optional
            /// Token requests without a proof are refused; with `nonce`, proofs must carry the
            /// sandbox's nonce.
            case required(nonce: Bool)
            /// Proofs are checked but the tokens answered are `Bearer`, as a server that ignores
            /// DPoP answers.
            case ignored
        }

        /// How pushed authorization requests (RFC 9126) are served.
        public enum PushedRequests: Sendable {
            /// Served and announced; plain authorization requests are taken too.
            case optional
            /// Authorization requests by `request_uri` only.
            case required
        }

        /// DPoP with the sandbox's three algorithms (`ES256`, `EdDSA`, `RS256`).
        public static func dpop(_ mode: DPoP) -> Feature {
            Feature { configuration in
                configuration.dpopSigningAlgorithms = ["ES256", "EdDSA", "RS256"]
                switch mode {
                case .optional: break
                case .required(let nonce):
                    configuration.requiresDPoP = true
                    configuration.requiresDPoPNonce = nonce
                case .ignored: configuration.answersBearerToDPoP = true
                }
            }
        }

        /// Pushed authorization requests.
        public static func pushedRequests(_ mode: PushedRequests) -> Feature {
            Feature { configuration in
                configuration.pushedAuthorizationRequests = true
                configuration.requiresPushedAuthorizationRequests = mode == .required
            }
        }

        /// Userinfo answered as a signed JWT (OIDC Core §5.3.2).
        public static let signedUserInfo = Feature { $0.signsUserInfo = true }

        /// End-session by GET only; a POST is answered 404.
        public static let endSessionByGETOnly = Feature { $0.endSessionTakesGETOnly = true }

        /// Reuse detection (as Auth0's and Okta's): a rotated-away refresh token sent again revokes
        /// every token of its sign-in.
        public static let refreshTokenReuseDetection = Feature { $0.detectsRefreshTokenReuse = true }

        /// Redirect URIs matched exactly, port included (not RFC 8252 §7.3).
        public static let exactRedirectURIs = Feature { $0.matchesRedirectURIsExactly = true }

        /// Protected resources at `/resources/NAME`, each taking only its own tokens (RFC 8707).
        public static func protectedResources(_ names: [String]) -> Feature {
            Feature { $0.protectedResources += names }
        }

        /// A provider's dialect.
        public static func dialect(_ dialect: Dialect) -> Feature {
            Feature { $0.dialect = dialect }
        }
    }
}

extension SandboxAuthorizationServer.Feature.PushedRequests: Equatable {}

extension SandboxAuthorizationServer.Configuration {
    /// This configuration with `features` applied, in order.
    public func with(_ features: SandboxAuthorizationServer.Feature...) -> Self {
        var configuration = self
        for feature in features { feature.apply(&configuration) }
        return configuration
    }
}
