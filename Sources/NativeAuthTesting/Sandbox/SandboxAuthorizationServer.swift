public import Foundation
public import LenientJSON
public import NativeAuth

/// An OpenID provider that runs in your process on 127.0.0.1: sign-in, refresh, the device flow,
/// userinfo, revocation and logout against a real server over real HTTP, with no account, no
/// network and no other language.
///
/// ```swift
/// let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true))
/// let provider = try GenericOIDCProvider(configuration: ProviderConfiguration(
///     issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
///     scopes: ["openid", "profile", "email"]))
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore())
/// try await auth.login(.browser(LoopbackPresenter(configuration: .init(opener: RedirectFollowingBrowser()))))
/// #expect(sandbox.requestCount(.token) == 1)
/// await sandbox.stop()
/// ```
///
/// What it serves (the paths are in ``Endpoint``):
/// - discovery (`/.well-known/openid-configuration`, and the same document as RFC 8414 metadata),
///   naming every endpoint below and `authorization_response_iss_parameter_supported`;
/// - authorization: an approval page with Approve and Deny buttons (and a choice of user when
///   there are several), or an immediate approval with ``Configuration/autoApprove``; `state` and
///   `iss` come back on the redirect; PKCE S256 is required;
/// - token: `authorization_code` (single use, `redirect_uri` and the PKCE verifier checked),
///   `refresh_token` (rotating unless ``rotatesRefreshTokens`` is off; a rotated-away token is
///   refused) and the device code grant (`authorization_pending`, `slow_down`, `access_denied`,
///   `expired_token`);
/// - ID tokens signed with ES256 or RS256 (``SigningAlgorithm``), with `nonce`, `at_hash` and
///   `auth_time`; the JWKS, with key rotation on demand (``rotateSigningKey(retainPrevious:)``);
/// - userinfo, a protected resource (`/resource`) for API calls, revocation (RFC 7009),
///   end-session (RP-Initiated Logout back to a loopback `post_logout_redirect_uri`), and device
///   authorization with its verification page.
///
/// For tests: users and their claims, token lifetimes and an injectable clock in
/// ``Configuration``; failure injection (``failNext(_:_:with:)``); and counters per endpoint and per
/// grant (``requestCount(_:)``, ``grantCount(_:)``).
///
/// The sandbox is for tests and demonstrations: plain HTTP on loopback, no persistence, no rate
/// limits, and every client secret and key lives in memory until ``stop()``.
public final class SandboxAuthorizationServer: Sendable {
    /// The endpoints, by the path they are served at.
    public enum Endpoint: String, Sendable, CaseIterable, Hashable {
        /// `/.well-known/openid-configuration` and `/.well-known/oauth-authorization-server`.
        case discovery = "/.well-known/openid-configuration"
        /// The authorization endpoint and its approval page.
        case authorization = "/authorize"
        /// The token endpoint.
        case token = "/token"
        /// The userinfo endpoint.
        case userInfo = "/userinfo"
        /// The JWK Set.
        case jwks = "/jwks"
        /// RP-Initiated Logout.
        case endSession = "/end_session"
        /// Token revocation (RFC 7009).
        case revocation = "/revoke"
        /// Device authorization (RFC 8628 §3.1).
        case deviceAuthorization = "/device_authorization"
        /// The device verification page, where a person enters the user code.
        case deviceVerification = "/device"
        /// A protected resource: answers a valid access token with who it belongs to.
        case resource = "/resource"
        /// The protected resources of ``Configuration/protectedResources``, under this path: each
        /// takes only access tokens issued for it (RFC 8707 `resource`).
        case protectedResource = "/resources/"
        /// The protected resource metadata (RFC 9728) of each of them, at
        /// `/.well-known/oauth-protected-resource/resources/NAME`.
        case protectedResourceMetadata = "/.well-known/oauth-protected-resource/"
        /// Dynamic client registration (RFC 7591), announced as `registration_endpoint`.
        case registration = "/register"
        /// The prefix of the Client ID Metadata Documents the sandbox serves
        /// (``Configuration/clientMetadataDocuments``).
        case clientMetadataDocument = "/client-metadata/"
        /// Pushed authorization requests (RFC 9126), served and announced with
        /// ``Configuration/pushedAuthorizationRequests``.
        case pushedAuthorization = "/par"
    }

    /// The grant types of the token endpoint, for ``grantCount(_:)``.
    public enum Grant: String, Sendable, CaseIterable, Hashable {
        /// `authorization_code`.
        case authorizationCode = "authorization_code"
        /// `refresh_token`.
        case refreshToken = "refresh_token"
        /// `urn:ietf:params:oauth:grant-type:device_code`.
        case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
        /// `client_credentials`: for confidential clients (a secret, a key or a certificate).
        case clientCredentials = "client_credentials"
        /// `urn:ietf:params:oauth:grant-type:token-exchange`: a ``FederatedIssuer``'s token traded.
        case tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
        /// `urn:ietf:params:oauth:grant-type:jwt-bearer`: a ``FederatedIssuer``'s token as the grant.
        case jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    }

    /// How ID tokens (and signed userinfo answers) are signed: every JWS algorithm OpenID Connect
    /// names.
    public enum SigningAlgorithm: String, Sendable, CaseIterable {
        /// ECDSA with P-256 and SHA-256: keys are made in microseconds.
        case es256 = "ES256"
        /// ECDSA with P-384 and SHA-384.
        case es384 = "ES384"
        /// ECDSA with P-521 and SHA-512.
        case es512 = "ES512"
        /// RSASSA-PKCS1-v1_5 with SHA-256 and a 2048-bit key, as most providers use.
        case rs256 = "RS256"
        /// RSASSA-PKCS1-v1_5 with SHA-384.
        case rs384 = "RS384"
        /// RSASSA-PKCS1-v1_5 with SHA-512.
        case rs512 = "RS512"
        /// RSASSA-PSS with SHA-256.
        case ps256 = "PS256"
        /// RSASSA-PSS with SHA-384.
        case ps384 = "PS384"
        /// RSASSA-PSS with SHA-512.
        case ps512 = "PS512"
        /// Ed25519.
        case edDSA = "EdDSA"
        /// HMAC with SHA-256, keyed by the client secret of the token's audience (OIDC Core §10.1;
        /// a public client's id stands in for the secret it does not have). Nothing is published.
        case hs256 = "HS256"
        /// HMAC with SHA-384, likewise.
        case hs384 = "HS384"
        /// HMAC with SHA-512, likewise.
        case hs512 = "HS512"
    }

    /// What ``alterNextIDTokens(_:count:)`` and ``alterNextUserInfo(_:count:)`` do to a JWT the sandbox
    /// signs, to play the OP of a conformance test.
    public enum JWTAlteration: Sendable {
        /// No `kid` in the header.
        case withoutKeyID
        /// `alg` `none` and no signature.
        case unsigned
        /// A signature with one bit flipped.
        case badSignature
        /// These claims set (a `null` removes one): a wrong `aud`, `sub` or `nonce`, a missing `iat`.
        case claims(JSONObject)
    }

    /// A person who can sign in.
    public struct User: Sendable {
        /// The `sub` claim.
        public var subject: String
        /// The name shown on the approval page, and the `preferred_username` claim.
        public var username: String
        /// More claims. Those whose name starts with `email` are released with the `email` scope,
        /// the others with `profile`; `sub` always.
        public var claims: JSONObject

        /// Creates a user.
        ///
        /// - Parameters:
        ///   - subject: The `sub` claim.
        ///   - username: The user name.
        ///   - claims: More claims, such as `name` and `email`.
        public init(subject: String, username: String, claims: JSONObject = JSONObject()) {
            self.subject = subject
            self.username = username
            self.claims = claims
        }

        /// Alice, the default user.
        public static let alice = User(
            subject: "sandbox-user-alice",
            username: "alice",
            claims: [
                "name": "Alice Example", "given_name": "Alice", "email": "alice@example.test", "email_verified": true,
            ]
        )

        /// Bob, a second user.
        public static let bob = User(
            subject: "sandbox-user-bob",
            username: "bob",
            claims: ["name": "Bob Example", "email": "bob@example.test", "email_verified": false]
        )
    }

    /// A registered client.
    public struct Client: Sendable {
        /// The default client's id: public (no secret), loopback redirect URIs.
        public static let defaultID = "sandbox-client"

        /// The client id.
        public var id: String
        /// The secret of a confidential client (`client_secret_basic` or `client_secret_post`);
        /// `nil` for a public client.
        public var secret: String?
        /// The allowed redirect URIs. A loopback URI (`127.0.0.1`, `[::1]`, `localhost`) matches
        /// on any port (RFC 8252 §7.3); others match exactly.
        public var redirectURIs: [String]
        /// The allowed `post_logout_redirect_uri`s, matched the same way.
        public var postLogoutRedirectURIs: [String]
        /// For a client that authenticates with a TLS client certificate (RFC 8705
        /// `tls_client_auth`, on a sandbox served with a client CA): the certificate's SHA-256
        /// thumbprint (`x5t#S256`). Its token requests must come with that certificate, and its
        /// access tokens are bound to it: the userinfo endpoint and the resource refuse them
        /// without it. `nil`, the default, for other clients.
        public var certificateThumbprint: String?
        /// For a client that authenticates with `private_key_jwt` (RFC 7523 §2.2): the public key
        /// its assertions must verify with, as a PEM (`BEGIN PUBLIC KEY`: P-256, RSA or Ed25519).
        /// Such a client needs no secret; one with a secret may also use `client_secret_jwt`.
        /// Every assertion must name the client as `iss` and `sub`, the token endpoint (or the
        /// issuer) as `aud`, expire within five minutes, and carry a `jti` never seen before.
        public var assertionKeyPEM: String?

        /// Creates a client.
        ///
        /// - Parameters:
        ///   - id: The client id.
        ///   - secret: The secret, for a confidential client.
        ///   - redirectURIs: The allowed redirect URIs; default `/callback` on the loopback addresses.
        ///   - postLogoutRedirectURIs: The allowed post-logout redirect URIs; default the redirect URIs.
        public init(
            id: String,
            secret: String? = nil,
            redirectURIs: [String] = [
                "http://127.0.0.1/callback", "http://[::1]/callback", "http://localhost/callback",
            ],
            postLogoutRedirectURIs: [String]? = nil
        ) {
            self.id = id
            self.secret = secret
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs ?? redirectURIs
        }
    }

    /// What the next requests to an endpoint answer instead of the real thing (see
    /// ``SandboxAuthorizationServer/failNext(_:_:with:)``).
    public enum Failure: Sendable {
        /// An OAuth error answer (RFC 6749 §5.2): `{"error": CODE, "error_description": …}` with
        /// the status, shaped as the ``Dialect`` says.
        case oauthError(String, status: Int = 400, description: String = "injected by the sandbox")
        /// Any status with any body: a proxy's HTML page, a 503, malformed JSON.
        case response(status: Int, contentType: String, body: String)
        /// The real answer, after a delay.
        case delay(Duration)
        /// The real answer, with these header fields added (a malformed `DPoP-Nonce`, say).
        case addingHeaders([(String, String)])
    }

    /// How the sandbox behaves; fixed at ``start(_:_:mode:)``, except where a property of the server says otherwise.
    public struct Configuration: Sendable {
        /// The clients; default one public client, ``Client/defaultID``.
        public var clients: [Client]
        /// The users; the first one signs in when nobody chooses. Default ``User/alice`` and ``User/bob``.
        public var users: [User]
        /// Approve every authorization request and device code at once, without a page.
        public var autoApprove: Bool
        /// How long access tokens live.
        public var accessTokenLifetime: Duration
        /// How long refresh tokens live; `nil` for ever. Token responses say it as GitHub does,
        /// `refresh_token_expires_in`.
        public var refreshTokenLifetime: Duration?
        /// How long ID tokens live.
        public var idTokenLifetime: Duration
        /// How long an authorization code can be redeemed.
        public var authorizationCodeLifetime: Duration
        /// How long a device code can be approved and redeemed.
        public var deviceCodeLifetime: Duration
        /// The device flow's polling interval; polling faster gets `slow_down`. Zero turns that off.
        public var devicePollingInterval: Duration
        /// Whether a refresh returns a new refresh token and retires the old one.
        public var rotateRefreshTokens: Bool
        /// Whether the userinfo endpoint answers with a signed JWT (`application/jwt`, OIDC Core
        /// §5.3.2) signed as ID tokens are, with `iss` and `aud`. Off by default (JSON).
        public var signsUserInfo = false
        /// Whether the end-session endpoint takes only GET and answers a POST 404, as some servers
        /// do (RP-Initiated Logout §2 says both). Off by default.
        public var endSessionTakesGETOnly = false
        /// How ID tokens are signed.
        public var signingAlgorithm: SigningAlgorithm
        /// The scopes a client may ask for.
        public var scopesSupported: [String]
        /// The port on 127.0.0.1; 0 picks a free one.
        public var port: Int
        /// The current time, for every expiry and every `iat`; inject one (a ``TestClock``'s) to test
        /// expiry without waiting.
        public var clock: AuthClock
        /// The issuers whose tokens the sandbox takes for a token exchange or a JWT bearer grant
        /// (none by default).
        public var federatedIssuers: [FederatedIssuer] = []
        /// The names of protected resources the sandbox serves at `/resources/NAME`
        /// (``SandboxAuthorizationServer/resourceURL(_:)``), for RFC 8707 resource indicators:
        /// tokens are issued for them on request, and each takes only tokens issued for it. None
        /// by default.
        public var protectedResources: [String] = []
        /// Bodies served instead of a protected resource's metadata, by resource name: for tests of
        /// malformed or misleading documents. `$RESOURCE`, `$ISSUER` and `$HOST` in them become the
        /// resource's URL, the sandbox's issuer and its origin. None by default.
        public var protectedResourceMetadataBodies: [String: String] = [:]
        /// Serve HTTPS with this certificate (and require client certificates when it names a
        /// client CA); `nil`, the default, serves plain HTTP. Set it after creating the configuration.
        public var tls: TestTLSIdentity?
        /// The bearer token `/register` wants (RFC 7591's initial access token); `nil`, the
        /// default, registers anyone who asks.
        public var registrationAccessToken: String?
        /// The authentication context classes (`acr`) the sandbox can meet, announced as
        /// `acr_values_supported`: a sign-in asking for one of them (`acr_values`) gets an ID token
        /// whose `acr` is the first it asked for. None by default.
        public var acrValuesSupported: [String] = []
        /// The `acr` the protected resource (``Endpoint/resource``) wants: a token from a sign-in
        /// without it is answered 401 with RFC 9470's `insufficient_user_authentication` and
        /// `acr_values`. `nil` by default.
        public var resourceACR: String?
        /// How recent a sign-in the protected resource wants: a token from an older one is answered
        /// 401 with `insufficient_user_authentication` and `max_age`. `nil` by default.
        public var resourceMaxAge: Duration?
        /// A claims request the protected resource wants the sign-in to have made: a token from a
        /// sign-in without a `claims` parameter is answered 401 with `insufficient_claims` and the
        /// request, base64-encoded, as Microsoft Entra's Conditional Access does. `nil` by default.
        public var resourceClaimsChallenge: JSONObject?
        /// The scopes the protected resource (``Endpoint/resource``) wants: a token without all of
        /// them is answered 403 `insufficient_scope` naming them (RFC 6750 §3.1), as the MCP
        /// authorization spec's step-up expects. None by default.
        public var resourceScopes: [String] = []
        /// The scopes the protected resource's 403 names, when it names others than
        /// ``resourceScopes`` (a server that asks for the wrong ones); `nil`, the default: those.
        public var resourceNamedScopes: [String]?
        /// How long the secret of a confidential client registered at `/register` is good for
        /// (`client_secret_expires_at`); `nil`, the default, for ever. A client whose secret
        /// expired is unknown from then on.
        public var registeredSecretLifetime: Duration?
        /// Whether the sandbox takes the URL of a Client ID Metadata Document it serves as a client
        /// id, and announces `client_id_metadata_document_supported`. Off by default.
        public var acceptsClientMetadataDocuments = false
        /// The Client ID Metadata Documents served at `/client-metadata/NAME`: the redirect URIs of
        /// each, by name. Each names its own URL as `client_id` and is a public client.
        public var clientMetadataDocuments: [String: [String]] = [:]
        /// The algorithms the sandbox takes DPoP proofs in (RFC 9449), announced as
        /// `dpop_signing_alg_values_supported`: any of `ES256`, `EdDSA`, `RS256`. Empty, the
        /// default: no DPoP, and a request with a proof is refused.
        ///
        /// With some, every proof is checked as RFC 9449 §4.3 says: one `DPoP` header, `typ`
        /// `dpop+jwt`, an announced `alg`, a public `jwk` the signature verifies with, `htm` and `htu`
        /// the request's, `iat` within ``dpopProofLifetime``, a `jti` never seen before, `ath` the
        /// presented access token's hash, the nonce when ``requiresDPoPNonce``. A token request with
        /// a valid proof gets `DPoP` tokens bound to its key: the resources take the access token
        /// only with a proof of that key, the token endpoint the refresh token likewise, and a code
        /// asked for with `dpop_jkt` is redeemed only with that key.
        public var dpopSigningAlgorithms: [String] = []
        /// Whether the token endpoint refuses token requests without a DPoP proof. Off by default.
        public var requiresDPoP = false
        /// Whether proofs must carry the sandbox's nonce (RFC 9449 §8, §9): one without it, or with
        /// an old one, is answered `use_dpop_nonce` with the current one in `DPoP-Nonce`. Off by default.
        public var requiresDPoPNonce = false
        /// How far a proof's `iat` may be from the sandbox's clock. Default one minute.
        public var dpopProofLifetime: Duration = .seconds(60)
        /// Answer token requests that carry a valid proof with `Bearer` tokens all the same, as a
        /// server that ignores DPoP does. Off by default.
        public var answersBearerToDPoP = false
        /// Serve pushed authorization requests (RFC 9126) at ``Endpoint/pushedAuthorization``, and
        /// announce it as `pushed_authorization_request_endpoint`: an authenticated client's
        /// parameters are kept, and the authorization endpoint takes their `request_uri` (with the
        /// same `client_id`) once, until it expires. Off by default.
        public var pushedAuthorizationRequests = false
        /// Whether the pushed authorization endpoint refuses a push without a DPoP proof
        /// (`invalid_dpop_proof`), as a server that requires DPoP for the client may (RFC 9449
        /// §10.1). A proof there, checked as at the token endpoint, binds the code to its key
        /// either way. Off by default.
        public var requiresDPoPAtPushedRequests = false
        /// Take authorization requests by `request_uri` only, and announce
        /// `require_pushed_authorization_requests`. Off by default.
        public var requiresPushedAuthorizationRequests = false
        /// How long a pushed request's `request_uri` is good for. Default one minute.
        public var pushedRequestLifetime: Duration = .seconds(60)
        /// The client authentication methods the revocation endpoint takes, announced as
        /// `revocation_endpoint_auth_methods_supported`: a revocation authenticated another way
        /// (a public client's `none`, say) is answered 401 `invalid_client`, as a strict server
        /// does. `nil`, the default: those of the token endpoint.
        public var revocationAuthMethods: [String]?
        /// Match redirect URIs (and post-logout redirect URIs) exactly, port included, as servers
        /// that do not follow RFC 8252 §7.3 do: a loopback URI must then be registered with its
        /// port. Off by default (a loopback URI matches on any port).
        public var matchesRedirectURIsExactly = false
        /// Whether a refresh answer carries a new ID token (OIDC Core §12.2 makes it optional, and
        /// some servers send none). On by default.
        public var issuesIDTokensOnRefresh = true
        /// Whether a rotated-away refresh token sent again revokes every token of its sign-in
        /// (reuse detection), as Auth0 and Okta do. Off by default: it is only refused.
        public var detectsRefreshTokenReuse = false
        /// How the sandbox says what it says: paths, discovery members, claims, token and error
        /// shapes of a provider. Default the sandbox's own (``Dialect/sandbox``).
        public var dialect: Dialect = .sandbox

        /// Creates a configuration; every parameter has a default.
        ///
        /// - Parameters:
        ///   - clients: The clients.
        ///   - users: The users.
        ///   - autoApprove: Whether to approve without a page.
        ///   - accessTokenLifetime: Access token lifetime (default 1 hour).
        ///   - refreshTokenLifetime: Refresh token lifetime (default none).
        ///   - idTokenLifetime: ID token lifetime (default 1 hour).
        ///   - authorizationCodeLifetime: Authorization code lifetime (default 60 s).
        ///   - deviceCodeLifetime: Device code lifetime (default 10 min).
        ///   - devicePollingInterval: Device polling interval (default 1 s).
        ///   - rotateRefreshTokens: Whether refresh tokens rotate (default yes).
        ///   - signingAlgorithm: ES256 (default), or any other of ``SigningAlgorithm``.
        ///   - scopesSupported: The scopes clients may ask for.
        ///   - port: The port, 0 for any free one.
        ///   - clock: The current time.
        public init(
            clients: [Client] = [Client(id: Client.defaultID)],
            users: [User] = [.alice, .bob],
            autoApprove: Bool = false,
            accessTokenLifetime: Duration = .seconds(3600),
            refreshTokenLifetime: Duration? = nil,
            idTokenLifetime: Duration = .seconds(3600),
            authorizationCodeLifetime: Duration = .seconds(60),
            deviceCodeLifetime: Duration = .seconds(600),
            devicePollingInterval: Duration = .seconds(1),
            rotateRefreshTokens: Bool = true,
            signingAlgorithm: SigningAlgorithm = .es256,
            scopesSupported: [String] = ["openid", "profile", "email", "offline_access", "api"],
            port: Int = 0,
            clock: AuthClock = .system
        ) {
            self.clients = clients
            self.users = users
            self.autoApprove = autoApprove
            self.accessTokenLifetime = accessTokenLifetime
            self.refreshTokenLifetime = refreshTokenLifetime
            self.idTokenLifetime = idTokenLifetime
            self.authorizationCodeLifetime = authorizationCodeLifetime
            self.deviceCodeLifetime = deviceCodeLifetime
            self.devicePollingInterval = devicePollingInterval
            self.rotateRefreshTokens = rotateRefreshTokens
            self.signingAlgorithm = signingAlgorithm
            self.scopesSupported = scopesSupported
            self.port = port
            self.clock = clock
        }
    }

    private let http: TestHTTPServer
    let core: SandboxCore

    /// The issuer: `http://127.0.0.1:PORT` (`https://` when served with TLS), followed by the
    /// dialect's ``Dialect/issuerPath``.
    public let issuer: URL

    private init(http: TestHTTPServer, core: SandboxCore) {
        self.http = http
        self.core = core
        let dialect = core.configuration.dialect
        self.issuer =
            URL(string: http.url("").absoluteString + dialect.issuerPath + (dialect.issuerEndsWithSlash ? "/" : ""))
            ?? http.url("")
    }

    /// The host the sandbox is served on (`http://127.0.0.1:PORT`), which ``issuer`` is a path of
    /// with a ``Dialect``.
    public var host: URL { http.url("") }

    /// Starts a sandbox.
    ///
    /// - Parameters:
    ///   - configuration: Clients, users, lifetimes, clock.
    ///   - features: Features composed onto `configuration`, in order (``Feature``).
    ///   - mode: In memory (``TestServerMode/inMemory``, the default), where only ``transport``
    ///     reaches it; or on 127.0.0.1 (``TestServerMode/live``), listening before this returns, for
    ///     tests with a browser, a loopback receiver or another process.
    /// - Returns: The running sandbox.
    /// - Throws: When the port cannot be bound, or the configuration has no user or no client.
    public static func start(
        _ configuration: Configuration = Configuration(),
        _ features: Feature...,
        mode: TestServerMode = .inMemory
    ) async throws -> SandboxAuthorizationServer {
        var configuration = configuration
        for feature in features { feature.apply(&configuration) }
        return try await start(sharingHost: [configuration], mode: mode)[0]
    }

    /// Starts several sandboxes on one host, each with its own issuer (``Dialect/issuerPath``),
    /// keys, clients and tokens: an Okta org and its custom authorization servers, a Keycloak
    /// server's realms, an Entra authority's tenants. A request goes to the sandbox that serves its
    /// path; a path several serve (an API beside them all, a host-wide userinfo endpoint), to the
    /// one that issued the access token it carries.
    ///
    /// - Parameters:
    ///   - configurations: One per sandbox; the first one's port and TLS identity serve them all.
    ///   - mode: In memory (the default) or on 127.0.0.1.
    /// - Returns: The running sandboxes, in the order of `configurations`; stopping one stops the host.
    /// - Throws: When the port cannot be bound, or a configuration has no user or no client.
    public static func start(
        sharingHost configurations: [Configuration],
        mode: TestServerMode = .inMemory
    ) async throws -> [SandboxAuthorizationServer] {
        guard let first = configurations.first else {
            throw SandboxError(description: "the sandbox needs a configuration")
        }
        let cores = try configurations.map { try SandboxCore(configuration: $0) }
        let http = try await TestHTTPServer.start(mode, port: first.port, tls: first.tls) { request in
            // A path several sandboxes serve (an API, a host-wide userinfo) goes to the one that
            // issued the access token presented.
            let serving = cores.filter { $0.serves(request.path) }
            guard
                let core = serving.count > 1
                    ? serving.first(where: { $0.issued(request) }) ?? serving[0] : serving.first
            else { return first.dialect.notFound }
            return await core.handle(request) ?? first.dialect.notFound
        }
        let host = http.url("").absoluteString
        return cores.map { core in
            core.state.withLock { $0.host = host }
            return SandboxAuthorizationServer(http: http, core: core)
        }
    }

    /// Stops the sandbox: closes the listener and every connection.
    public func stop() async {
        await http.stop()
    }

    /// The port the sandbox listens on.
    public var port: Int { http.port }

    /// The transport that reaches the sandbox: pass it to an `Authenticator` (the platform's
    /// default for a live sandbox, the in-memory one otherwise).
    public var transport: any HTTPTransport { http.transport }

    /// How the sandbox was started.
    public var mode: TestServerMode { http.mode }

    /// The URL of an endpoint.
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: Its URL on this sandbox.
    public func url(_ endpoint: Endpoint) -> URL { http.url(core.configuration.dialect.path(endpoint)) }

    /// Whether authorization requests and device codes are approved at once (no page).
    public var autoApprove: Bool {
        get { core.state.withLock { $0.autoApprove } }
        set { core.state.withLock { $0.autoApprove = newValue } }
    }

    /// A refusal ``refuseNextDPoPProofs(_:as:)`` makes of an otherwise valid proof.
    public enum DPoPInjection: Sendable {
        /// `invalid_dpop_proof`, as if its `jti` had been seen before.
        case replayed
        /// `invalid_dpop_proof`, as if its `iat` were too old.
        case stale
        /// `use_dpop_nonce`, with the current nonce.
        case nonce
    }

    /// Refuses the next `count` DPoP proofs that pass every check, as `injection` says.
    public func refuseNextDPoPProofs(_ count: Int, as injection: DPoPInjection) {
        core.state.withLock { $0.dpopInjections += Array(repeating: injection, count: max(0, count)) }
    }

    /// Makes a new DPoP nonce: proofs with the old one are answered `use_dpop_nonce` (with
    /// ``Configuration/requiresDPoPNonce``).
    public func rotateDPoPNonce() {
        core.state.withLock { $0.dpopNonce = SecureRandom.token(bytes: 16) }
    }

    /// The DPoP nonce proofs must carry now.
    public var dpopNonce: String { core.state.withLock { $0.dpopNonce } }

    /// Every DPoP proof the sandbox accepted, in order (compact JWS).
    public var dpopProofs: [String] { core.state.withLock { $0.dpopProofs } }

    /// Why each DPoP proof the sandbox refused was refused, in order.
    public var dpopRefusals: [String] { core.state.withLock { $0.dpopRefusals } }

    /// The username of the user that automatic approvals (``autoApprove``) sign in as; `nil`, the
    /// default, or a name no user has: the first user. Tests that sign in several accounts set it
    /// between sign-ins.
    public var autoApprovedUser: String? {
        get { core.state.withLock { $0.autoApprovedUser } }
        set { core.state.withLock { $0.autoApprovedUser = newValue } }
    }

    /// Whether refresh tokens rotate.
    public var rotatesRefreshTokens: Bool {
        get { core.state.withLock { $0.rotateRefreshTokens } }
        set { core.state.withLock { $0.rotateRefreshTokens = newValue } }
    }

    /// How many requests an endpoint received at its mutual-TLS alias (`/mtls/…`, RFC 8705 §5).
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The count.
    public func aliasRequestCount(_ endpoint: Endpoint) -> Int {
        core.state.withLock { $0.aliasRequestCounts[endpoint, default: 0] }
    }

    /// How many requests an endpoint received (failed ones included).
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The count since the start or the last ``resetCounts()``.
    public func requestCount(_ endpoint: Endpoint) -> Int {
        core.state.withLock { $0.requestCounts[endpoint, default: 0] }
    }

    /// How many token requests asked for a grant type (failed ones included).
    ///
    /// - Parameter grant: The grant type.
    /// - Returns: The count since the start or the last ``resetCounts()``.
    public func grantCount(_ grant: Grant) -> Int {
        core.state.withLock { $0.grantCounts[grant, default: 0] }
    }

    /// How many refreshes succeeded for a user: one per token response to a `refresh_token` grant
    /// that signed `subject` in.
    ///
    /// - Parameter subject: The user's ``User/subject``.
    /// - Returns: The count since the start or the last ``resetCounts()``.
    public func refreshCount(subject: String) -> Int {
        core.state.withLock { $0.refreshesBySubject[subject, default: 0] }
    }

    /// How many error answers carried an OAuth error code (`invalid_grant`, `slow_down`, …), counted
    /// over every endpoint. Injected failures (``failNext(_:_:with:)``) are not counted.
    ///
    /// - Parameter code: The `error` member of the answer.
    /// - Returns: The count since the start or the last ``resetCounts()``.
    /// The subjects of the federated tokens the sandbox accepted (token exchange, JWT bearer), in order.
    public var federatedSubjects: [String] { core.state.withLock { $0.federatedSubjects } }

    /// The parameters of the last authorization request (`prompt`, `login_hint`, …): its query, or
    /// the pushed request its `request_uri` named.
    public var lastAuthorizationQuery: [FormField] { core.state.withLock { $0.lastAuthorizationQuery } }

    /// The query the authorization endpoint itself received last: with a pushed request, `client_id`
    /// and `request_uri` only.
    public var lastBrowserQuery: [FormField] { core.state.withLock { $0.lastBrowserQuery } }

    /// The `aud` of every client assertion (`private_key_jwt`, `client_secret_jwt`) accepted, in order.
    public var clientAssertionAudiences: [String] {
        core.state.withLock { $0.clientAssertionAudiences }
    }

    /// The URL (and resource indicator) of the protected resource `name` of
    /// ``Configuration/protectedResources``.
    public func resourceURL(_ name: String) -> URL {
        host.appendingPathComponent("resources").appendingPathComponent(name)
    }

    /// The `resource` values each token response was issued for, in order; an empty list for a
    /// response without any.
    public var issuedAudiences: [[String]] { core.state.withLock { $0.issuedAudiences } }

    public func errorCount(_ code: String) -> Int {
        core.state.withLock { $0.errorCounts[code, default: 0] }
    }

    /// A request the sandbox received.
    public struct LoggedRequest: Sendable {
        /// `GET`, `POST`.
        public let method: String
        /// The path on the host.
        public let path: String
        /// The query's fields, then the form body's.
        public let fields: [FormField]
    }

    /// Every request this sandbox served, in order (``resetCounts()`` empties it).
    public var requestLog: [LoggedRequest] { core.state.withLock { $0.requestLog } }

    /// How many times a rotated-away refresh token came back and revoked its sign-in
    /// (``Configuration/detectsRefreshTokenReuse``).
    public var reuseDetections: Int { core.state.withLock { $0.reuseDetections } }

    /// Every endpoint's request count, for reports.
    public var requestCounts: [Endpoint: Int] { core.state.withLock { $0.requestCounts } }

    /// Sets every counter back to zero.
    public func resetCounts() {
        core.state.withLock { state in
            state.requestCounts = [:]
            state.grantCounts = [:]
            state.refreshesBySubject = [:]
            state.errorCounts = [:]
            state.requestLog = []
        }
    }

    /// Makes the next `count` requests to `endpoint` answer `failure` (they are still counted).
    ///
    /// - Parameters:
    ///   - count: How many requests.
    ///   - endpoint: Which endpoint.
    ///   - failure: What they answer.
    public func failNext(_ count: Int, _ endpoint: Endpoint, with failure: Failure) {
        guard count > 0 else { return }
        core.state.withLock {
            $0.failures[endpoint, default: []].append(contentsOf: repeatElement(failure, count: count))
        }
    }

    /// Alters the next `count` ID tokens the sandbox issues as `alteration` says.
    public func alterNextIDTokens(_ alteration: JWTAlteration, count: Int = 1) {
        core.state.withLock { $0.idTokenAlterations += Array(repeating: alteration, count: max(0, count)) }
    }

    /// Alters the next `count` userinfo answers: their claims (``JWTAlteration/claims(_:)``), and,
    /// with ``Configuration/signsUserInfo``, their signature or header.
    public func alterNextUserInfo(_ alteration: JWTAlteration, count: Int = 1) {
        core.state.withLock { $0.userInfoAlterations += Array(repeating: alteration, count: max(0, count)) }
    }

    /// Signs with a new key from now on. The JWKS keeps the previous keys unless `retainPrevious`
    /// is false (then tokens signed before no longer verify).
    ///
    /// - Parameter retainPrevious: Whether the old keys stay published.
    /// - Throws: When a key cannot be made.
    public func rotateSigningKey(retainPrevious: Bool = true) throws {
        let algorithm = core.state.withLock { $0.signer.algorithm }
        let entry = try SandboxSigner.makeKey(algorithm)
        core.state.withLock { $0.signer.add(entry, retainPrevious: retainPrevious) }
    }

    /// The key id that signs now.
    public var currentKeyID: String { core.state.withLock { $0.signer.currentKeyID } }

    /// Approves a device code, as a person on the verification page would.
    ///
    /// - Parameters:
    ///   - userCode: The user code shown to the person (case and dashes do not matter).
    ///   - username: Who approves; default the first user.
    /// - Throws: ``SandboxError`` when the code is unknown or expired, or the user unknown.
    public func approveDevice(userCode: String, as username: String? = nil) throws {
        try core.decideDevice(userCode: userCode, approve: true, username: username)
    }

    /// Denies a device code, as a person on the verification page would.
    ///
    /// - Parameter userCode: The user code.
    /// - Throws: ``SandboxError`` when the code is unknown or expired.
    public func denyDevice(userCode: String) throws {
        try core.decideDevice(userCode: userCode, approve: false, username: nil)
    }

    /// Whether `accessToken` is one the sandbox issued that has neither expired nor been revoked.
    public func isActive(accessToken: String) -> Bool {
        let now = core.now
        return core.state.withLock { ($0.accessTokens[accessToken]?.expiresAt).map { $0 > now } ?? false }
    }

    /// Ends the sign-ins whose scopes `predicate` picks, as an administrator's "sign out all
    /// sessions" does: their access and refresh tokens are revoked, and a refresh with one is
    /// refused with the sign-in's scopes in the ``Dialect/Refusal`` (Keycloak ends online
    /// sessions and keeps offline ones).
    public func endSignIns(where predicate: @Sendable ([String]) -> Bool) {
        core.state.withLock { state in
            let ended = state.refreshTokens.filter { predicate($0.value.authorization.scopes) }
            let families = Set(ended.values.map(\.authorization.family))
            for (token, record) in ended { state.endedSignIns[token] = record.authorization.scopes }
            state.refreshTokens = state.refreshTokens.filter { !families.contains($0.value.authorization.family) }
            state.accessTokens = state.accessTokens.filter { !families.contains($0.value.authorization.family) }
        }
    }

    /// Revokes every access token and keeps the refresh tokens, as a resource server's revocation
    /// list would: the next request with one gets a 401, and a refresh gets a new one.
    public func revokeAccessTokens() {
        core.state.withLock { state in state.accessTokens.removeAll() }
    }

    /// Revokes every access and refresh token, as if the person signed out everywhere.
    public func revokeAllTokens() {
        core.state.withLock { state in
            state.accessTokens.removeAll()
            state.refreshTokens.removeAll()
        }
    }
}

/// A sandbox control call that could not be carried out.
public struct SandboxError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
