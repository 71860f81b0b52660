public import Foundation
public import HTTPTypes
internal import LenientJSON
public import Logging

/// The public face of NativeAuth: one provider, one client, one token store, one transport.
///
/// ```swift
/// var registry = ProviderRegistry()
/// try registry.register(GenericOIDCProvider.self)
/// let provider = try registry.makeProvider(configuration)
/// let auth = Authenticator(provider: provider, store: FileTokenStore(), logger: logger)
/// try await auth.login(presenter: LoopbackPresenter())
/// let token = try await auth.accessToken()
/// ```
///
/// It wires three parts together, each of which does one job:
/// - the flows sign in and out (the authorization code flow, the device flow, logout) and return
///   tokens or a result;
/// - the token lifecycle keeps the tokens: in memory, in the ``store``, refreshed once however many
///   callers and processes need them, and sent with requests;
/// - one exchange path sends every request to the provider, reads every answer with the provider's
///   hooks and maps every error with its ``AuthProvider/errorMapper``.
///
/// The provider's metadata is loaded once and shared: concurrent callers wait for the same
/// request, and the result is kept for the authenticator's life (a failure is not kept).
///
/// Logging goes to the caller's `Logger`; tokens, codes, secrets and verifiers are never logged.
public final class Authenticator: Sendable {
    /// The provider this authenticator signs in to.
    public let provider: any AuthProvider
    /// Where tokens are kept.
    public let store: any TokenStore
    /// How requests are sent.
    public let transport: any HTTPTransport
    /// The key of this client's tokens in the store.
    public let key: TokenKey
    /// How long a refresh waits for another holder of the store's lock (another process refreshing).
    public let lockTimeout: Duration

    let client: ExchangeClient
    /// One step-up sign-in for every caller that meets the challenge at once.
    let stepUps = SingleFlight<TokenSet>()
    /// The tokens over time; NativeAuthTesting's expiry hooks reach the stored set through it.
    package let lifecycle: TokenLifecycle

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - provider: The provider, typically from ``ProviderRegistry/makeProvider(_:)``.
    ///   - store: Where tokens are kept; its ``TokenStore/lock`` keeps refreshes apart.
    ///   - transport: How requests are sent: NativeAuthURLSession's `URLSessionTransport` (which
    ///     also adds an initializer without this parameter), NativeAuthAsyncHTTPClient's
    ///     `AsyncHTTPClientTransport` (proxies, a private CA and client certificates on Linux), or
    ///     any other.
    ///   - account: The account name in the store, for programs with several sign-ins.
    ///   - logger: Where NativeAuth logs; it never bootstraps logging itself.
    ///   - lockTimeout: How long a refresh waits for the store's lock (another process refreshing).
    ///   - clock: The time for token expiry and the waits of the device flow (inject one in tests).
    ///   - observability: Where spans and metrics go; default: the tracer and metrics factory the
    ///     program bootstrapped, if any (with none, nothing is recorded and nothing is spent).
    public init(
        provider: any AuthProvider,
        store: any TokenStore,
        transport: any HTTPTransport,
        account: String = "default",
        logger: Logger = Logger(label: "NativeAuth"),
        lockTimeout: Duration = .seconds(30),
        clock: AuthClock = .system,
        observability: Observability = Observability()
    ) {
        self.provider = provider
        self.store = store
        self.transport = transport
        self.lockTimeout = lockTimeout
        let key = TokenKey(issuer: provider.tokenIssuer, clientID: provider.configuration.clientID, account: account)
        self.key = key
        client = ExchangeClient(
            provider: provider, transport: transport, clock: clock, logger: logger,
            instruments: Instruments(observability))
        lifecycle = TokenLifecycle(client: client, store: store, key: key, lockTimeout: lockTimeout)
    }

    /// An authenticator that borrows its tokens from `source` (a token agent: NativeAuthAgent's
    /// `AgentTokenSource`) instead of keeping them: it never holds a refresh token or a DPoP key.
    ///
    /// It asks `source` for access tokens, ID tokens and resources' tokens valid as long as it needs
    /// (keeping them in memory while they are), and for each DPoP proof; ``send(_:body:streamingTo:)``
    /// and the rest work as with a store, and a token an API refuses is handed back for another.
    /// Signing in and out, and ``refresh()``, are the source's: they throw
    /// ``AuthError/Code/configurationInvalid`` here. When the source cannot answer, every call fails
    /// with its error; nothing falls back to a copy of the tokens.
    ///
    /// - Parameters:
    ///   - provider: The provider the tokens come from (its issuer, for the resources an API's
    ///     metadata names; its error mapper, for the APIs' answers).
    ///   - source: Where the tokens are borrowed.
    ///   - transport: How requests are sent.
    ///   - account: The account asked for.
    ///   - logger: Where NativeAuth logs.
    ///   - clock: The time for token expiry.
    ///   - observability: Where spans and metrics go.
    public init(
        provider: any AuthProvider,
        borrowingFrom source: any TokenSource,
        transport: any HTTPTransport,
        account: String = "default",
        logger: Logger = Logger(label: "NativeAuth"),
        clock: AuthClock = .system,
        observability: Observability = Observability()
    ) {
        self.provider = provider
        store = MemoryTokenStore()
        self.transport = transport
        lockTimeout = .seconds(30)
        let key = TokenKey(issuer: provider.tokenIssuer, clientID: provider.configuration.clientID, account: account)
        self.key = key
        client = ExchangeClient(
            provider: provider, transport: transport, clock: clock, logger: logger,
            instruments: Instruments(observability))
        lifecycle = TokenLifecycle(client: client, store: store, key: key, lockTimeout: lockTimeout, source: source)
    }

    /// Whether the tokens are borrowed from a ``TokenSource`` (see
    /// ``init(provider:borrowingFrom:transport:account:logger:clock:observability:)``).
    public var borrowsTokens: Bool { lifecycle.source != nil }

    /// An authenticator for another account of the same provider and client, sharing this one's
    /// store, transport and loaded metadata. ``Accounts`` hands these out.
    ///
    /// - Parameter account: The account name in the store.
    public func forAccount(_ account: String) -> Authenticator {
        Authenticator(sharing: self, account: account)
    }

    private init(sharing other: Authenticator, account: String) {
        provider = other.provider
        store = other.store
        transport = other.transport
        lockTimeout = other.lockTimeout
        key = TokenKey(issuer: other.key.issuer, clientID: other.key.clientID, account: account)
        client = other.client
        lifecycle = TokenLifecycle(
            client: client, store: store, key: key, lockTimeout: lockTimeout, source: other.lifecycle.source)
    }

    /// The provider's metadata, loaded once (see the type's discussion).
    public func metadata() async throws -> ProviderMetadata {
        try await client.metadata()
    }

    // MARK: - Signing in and out

    /// Signs the person in through `presenter` and stores the tokens.
    ///
    /// Runs discovery, builds the authorization request (PKCE S256, `state`, `nonce` when `openid`
    /// is asked for, the provider's extra parameters), presents it, checks the callback (`state` in
    /// constant time, `error`, RFC 9207 `iss`), exchanges the code, validates the ID token (whose
    /// claims name the account: ``TokenSet/subject``, ``TokenSet/displayName``), and saves the tokens.
    ///
    /// - Parameters:
    ///   - presenter: How the person gets to the authorization page (NativeAuthPresenters' `LoopbackPresenter`, …).
    ///   - scopes: The scopes to ask for; default: the configuration's.
    ///   - options: How the person should authenticate (``LoginOptions``: `prompt`, `max_age`,
    ///     `acr_values`, …); the ID token is checked against them.
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``; nothing is stored unless every step succeeded.
    @discardableResult
    public func login(
        presenter: any UserAgentPresenter, scopes: [String]? = nil, options: LoginOptions = LoginOptions()
    ) async throws -> TokenSet {
        try lifecycle.keepsItsOwnTokens()
        return try await keep(
            try await signIn(presenter: presenter, scopes: scopes, options: options), "signed in")
    }

    /// The tokens of a sign-in through `presenter`, not stored yet.
    func signIn(presenter: any UserAgentPresenter, scopes: [String]?, options: LoginOptions = LoginOptions())
        async throws -> NewSignIn
    {
        try await CodeFlow(client: client).signIn(
            presenter: presenter, scopes: scopes ?? provider.configuration.scopes, options: options)
    }

    /// The tokens of a device sign-in, not stored yet.
    func signInWithDevice(display: any DeviceCodeDisplay, scopes: [String]?) async throws -> NewSignIn {
        try await DeviceFlow(client: client).signIn(display: display, scopes: scopes ?? provider.configuration.scopes)
    }

    /// Signs in with the device authorization grant (RFC 8628): for machines where the person
    /// cannot use a browser, or would rather approve on their phone.
    ///
    /// Asks the device authorization endpoint (from the metadata, or the configuration's
    /// `device_authorization_endpoint` override) for a code, shows it through `display`, then polls
    /// the token endpoint as RFC 8628 says: every `interval` seconds, slower after `slow_down` or
    /// HTTP 429, with a back-off on network trouble and 5xx; `access_denied` is
    /// ``AuthError/Code/authorizationFailed``; `expired_token`, or `expires_in` running out, is
    /// ``AuthError/Code/timeout``; cancelling the task is ``AuthError/Code/loginCancelled`` at once.
    /// The waits use the authenticator's clock. The tokens are stored like those of any sign-in.
    ///
    /// - Parameters:
    ///   - display: Shows the code and the page; default: ``TerminalDeviceCodeDisplay`` on standard error.
    ///   - scopes: The scopes to ask for; default: the configuration's.
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``; nothing is stored unless the sign-in succeeded.
    @discardableResult
    public func loginWithDevice(
        display: any DeviceCodeDisplay = TerminalDeviceCodeDisplay(),
        scopes: [String]? = nil
    ) async throws -> TokenSet {
        try lifecycle.keepsItsOwnTokens()
        return try await keep(
            try await signInWithDevice(display: display, scopes: scopes), "signed in with a device code")
    }

    /// Gets tokens for the client itself with the client credentials grant (RFC 6749 §4.4): for
    /// CI jobs, services and agents that act as themselves, with no person and no browser.
    ///
    /// The client authenticates as its configuration says: a secret (`client_secret_basic` or
    /// `client_secret_post`), a signed assertion (`private_key_jwt` with
    /// ``ProviderConfiguration/clientAssertionKey``, or `client_secret_jwt`), or a TLS client
    /// certificate. The tokens are stored like a sign-in's, with the client id as their subject,
    /// and marked renewable (``TokenSet/renewableGrant``): when the access token expires,
    /// ``accessToken(minimumValidity:)`` and ``send(_:body:streamingTo:)`` ask for a new one, once however
    /// many callers and processes wait, exactly as they refresh.
    ///
    /// - Parameter scopes: The scopes to ask for; default: the configuration's, without `openid`
    ///   (there is no person to identify). None sends no `scope`: the server's default.
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``: ``AuthError/Code/tokenExchangeFailed`` when the server refuses
    ///   (`invalid_client`, `unauthorized_client`); nothing is stored then.
    @discardableResult
    public func loginWithClientCredentials(scopes: [String]? = nil) async throws -> TokenSet {
        try lifecycle.keepsItsOwnTokens()
        return try await keep(try await signInWithClientCredentials(scopes: scopes), "signed in as the client")
    }

    /// Gets tokens for a workload from a token of its own: the configuration's ``WorkloadGrant``
    /// (RFC 8693 token exchange, or an RFC 7523 JWT bearer grant), the subject token read from its
    /// source now. Without one, the client credentials grant, as
    /// ``loginWithClientCredentials(scopes:)``.
    ///
    /// The tokens are stored like a sign-in's and marked renewable: when they expire, the subject
    /// token is read again (a rotated Kubernetes token, a new CI token) and traded again, once
    /// however many callers wait. Their subject is the client id.
    ///
    /// - Parameter scopes: The scopes to ask for; default: the configuration's without `openid`.
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``: the source's failure (a missing file, a failing command), or the
    ///   server's refusal (`invalid_grant` for a subject token it does not accept); nothing is
    ///   stored then.
    @discardableResult
    public func loginAsWorkload(scopes: [String]? = nil) async throws -> TokenSet {
        try lifecycle.keepsItsOwnTokens()
        return try await keep(try await signInAsWorkload(scopes: scopes), "signed in as a workload")
    }

    /// The tokens of the configuration's workload grant (client credentials without one), not stored yet.
    func signInAsWorkload(scopes: [String]?) async throws -> NewSignIn {
        guard let workload = provider.configuration.workload else {
            return try await signInWithClientCredentials(scopes: scopes)
        }
        return try await signInAsClient(scopes: scopes, kind: workload.kind) { scopes in
            try await workload.grant(scopes: scopes, transport: client.transport)
        }
    }

    /// The tokens of a client credentials grant, not stored yet.
    func signInWithClientCredentials(scopes: [String]?) async throws -> NewSignIn {
        try await signInAsClient(scopes: scopes, kind: .clientCredentials) { .clientCredentials(scopes: $0) }
    }

    /// The tokens of a grant with no person behind it, not stored yet: no ID token, the client id
    /// as subject and name, marked renewable by `kind`.
    private func signInAsClient(
        scopes: [String]?, kind: Grant.Kind, grant: ([String]) async throws -> Grant
    ) async throws -> NewSignIn {
        let scopes = scopes ?? provider.configuration.scopes.filter { $0 != "openid" }
        let metadata = try await client.metadata()
        var tokens = try await client.tokens(
            for: try await grant(scopes), metadata: metadata, requestedScopes: scopes,
            dpop: try client.newDPoPKey(metadata))
        tokens.idToken = nil
        tokens.renewableGrant = kind
        tokens.subject = provider.configuration.clientID
        tokens.displayName = provider.configuration.clientID
        return NewSignIn(tokens)
    }

    /// Stores the tokens of a new sign-in (``identified(_:)`` first), and notes who signed in.
    func keep(_ signIn: NewSignIn, _ message: Logger.Message) async throws -> TokenSet {
        try await adopt(try await identified(signIn).tokens, message)
    }

    /// Stores the tokens of a new sign-in, identified already, and notes who signed in.
    func adopt(_ tokens: TokenSet, _ message: Logger.Message) async throws -> TokenSet {
        try await lifecycle.adopt(tokens)
        client.logger.info(message, metadata: ["subject": "\(TerminalText.sanitized(tokens.subject ?? "unknown"))"])
        return tokens
    }

    /// The tokens of a new sign-in with the endpoints they were issued for, and who signed in: the
    /// verified ID token's `preferred_username`, `email` or `sub`; without an ID token (GitHub),
    /// the same claims of the userinfo answer, whose `sub` and name then become the tokens'
    /// subject and display name. `nil` as the name when nothing says who it is (no ID token, and
    /// no userinfo, or a userinfo request that failed: the sign-in still counts).
    func identified(_ signIn: NewSignIn) async throws -> (tokens: TokenSet, name: String?) {
        var tokens = signIn.tokens
        let metadata = try await client.metadata()
        tokens.endpoints = TokenSet.endpoints(of: metadata)
        if let claims = signIn.claims { return (tokens, claims.accountName ?? tokens.subject) }
        guard tokens.subject == nil, let endpoint = metadata.userInfoEndpoint else { return (tokens, tokens.subject) }
        var request = HTTPRequest(method: .get, url: endpoint)
        request.headerFields[.accept] = "application/json"
        do {
            var (response, body, answer) = try await client.sendAuthorized(
                request, body: nil, credential: AccessCredential(tokens), operation: .userInfo)
            if ResourceRetry.next(after: answer, .init(followsResourceMetadata: false)) == .newProof {
                (response, body, answer) = try await client.sendAuthorized(
                    request, body: nil, credential: AccessCredential(tokens), operation: .userInfo)
            }
            let info = try client.userInfo(from: response, body: body)
            tokens.subject = info.subject
            tokens.displayName = info.preferredUsername ?? info.email ?? info.name ?? info.subject
            return (tokens, info.preferredUsername ?? info.email ?? info.subject)
        } catch {
            client.logger.debug(
                "who signed in is unknown: the userinfo request failed",
                metadata: ["error": "\(TerminalText.sanitized("\(error)"))"])
            return (tokens, nil)
        }
    }

    /// Signs out: removes the tokens, revokes them, and ends the provider's session.
    ///
    /// 1. Always removes the tokens from the store, under its lock (a refresh in another process
    ///    finishes first). Afterwards no authenticator sharing the store refreshes or writes back
    ///    the tokens it holds in memory: its next refresh finds the store empty and throws
    ///    ``AuthError/Code/loginRequired``. (An access token it already holds is a bearer token
    ///    until it expires or the server revokes it.)
    /// 2. With a revocation endpoint (metadata or override), revokes the removed refresh token,
    ///    then the access token (RFC 7009). A failure is reported in the result, not thrown.
    /// 3. Asks the provider for its end-session page (``AuthProvider/endSession(_:)``). A page that
    ///    returns to the app is opened with the presenter, which waits for the post-logout redirect
    ///    and checks its `state`; without a presenter, or for a page that does not come back, the
    ///    URL is returned for the caller to open.
    ///
    /// With nothing stored, nothing is sent and no page is opened (``LogoutResult/removedTokens`` is
    /// `false`), unless `endingSessionWhenSignedOut`. Revocation is skipped, and the reason given in
    /// ``LogoutResult/revocationSkipped``, when the metadata's
    /// `revocation_endpoint_auth_methods_supported` leaves out this client's authentication.
    ///
    /// - Parameters:
    ///   - presenter: Opens the end-session URL; its session's redirect URI becomes
    ///     `post_logout_redirect_uri`. `nil` returns the URL instead.
    ///   - endingSessionWhenSignedOut: Whether to end the provider's session in the browser even
    ///     when no tokens are stored here (a session another app began). Default `false`.
    /// - Throws: ``AuthError`` when the store cannot remove the tokens, or the presenter fails;
    ///   revocation failures are in the result, and so is a provider page that did not send the
    ///   browser back before the presenter's timeout (``LogoutResult/endSessionTimedOut``): the
    ///   tokens are removed then, which is the sign-out.
    @discardableResult
    public func logout(
        presenter: (any UserAgentPresenter)? = nil,
        endingSessionWhenSignedOut: Bool = false
    ) async throws -> LogoutResult {
        try lifecycle.keepsItsOwnTokens()
        let lifecycle = lifecycle
        return try await LogoutFlow(client: client).signOut(
            presenter: presenter, endingSessionWhenSignedOut: endingSessionWhenSignedOut
        ) {
            try await lifecycle.remove()
        }
    }

    // MARK: - Tokens

    /// The stored tokens (from memory, else from the store), or `nil` when signed out.
    public func currentTokens() async throws -> TokenSet? {
        try await lifecycle.current()
    }

    /// The set with an ID token valid for at least `minimumValidity` seconds, refreshed when needed,
    /// even when the access token is still good: for a consumer that takes the ID token, such as
    /// a Kubernetes API server's OIDC authenticator. As with ``accessToken(minimumValidity:)``, one
    /// refresh serves every caller, in this process and others.
    ///
    /// - Parameter minimumValidity: How long the ID token (and the access token) must still be valid.
    /// - Returns: The set; its ``TokenSet/idToken`` is valid until ``TokenSet/idTokenExpiresAt``.
    /// - Throws: ``AuthError/Code/loginRequired`` when there is no ID token, or the refresh brought
    ///   no new one while the one held expires (an expired ID token is never returned).
    public func tokensWithValidIDToken(minimumValidity: TimeInterval = 60) async throws -> TokenSet {
        try await lifecycle.validTokens(minimumValidity: minimumValidity, idToken: true)
    }

    /// An access token valid for at least `minimumValidity` seconds, refreshed when needed.
    ///
    /// The token is refreshed when it expires within `minimumValidity` (or there is no access token
    /// but a refresh token). Refreshing is single-flight: concurrent callers share one token
    /// request and all get its result, success or error. See ``refresh()`` for what a refresh does.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/loginRequired`` when there are no tokens, or they
    ///   expired and cannot be refreshed; a retryable error when the refresh failed for a passing
    ///   reason (every stored token is kept then).
    public func accessToken(minimumValidity: TimeInterval = 60) async throws -> String {
        try await lifecycle.accessToken(minimumValidity: minimumValidity)
    }

    /// An access token for one protected resource (RFC 8707 resource indicators), under this
    /// sign-in's one refresh token: for an API that accepts only tokens whose audience is its own
    /// (Auth0's `audience`, msal's tokens per scope set, MCP servers).
    ///
    /// The set keeps one access token per resource and scope set (``TokenSet/resourceTokens``).
    /// When the one asked for is missing or expires within `minimumValidity`, a refresh with
    /// `resource` (and `scope`, narrowing, when `scopes` is given) gets a new one; for tokens of a
    /// renewable grant (client credentials, a workload's), that grant is asked again with
    /// `resource`. Like ``accessToken(minimumValidity:)``, this happens once however many callers
    /// and processes ask for the same resource and scopes at once; a rotated refresh token is kept
    /// for the whole set.
    ///
    /// - Parameters:
    ///   - resource: The resource's identifier, usually its base URL (see
    ///     ``ProviderConfiguration/resourceIndicator(_:)``).
    ///   - scopes: The scopes to narrow the token to; `nil` asks for the sign-in's.
    ///   - minimumValidity: How long the token must still be valid, in seconds.
    /// - Throws: ``AuthError``: ``AuthError/Code/loginRequired`` when not signed in, or the sign-in
    ///   has no refresh token (sign in with the resource in ``ProviderConfiguration/resources``
    ///   then), or the refresh token was refused; the server's refusal (`invalid_target` for a
    ///   resource it does not serve, `invalid_scope`) otherwise. Nothing is stored then.
    public func accessToken(for resource: URL, scopes: [String]? = nil, minimumValidity: TimeInterval = 60)
        async throws -> String
    {
        try await resourceToken(for: resource, scopes: scopes, minimumValidity: minimumValidity).accessToken
    }

    /// The token ``accessToken(for:scopes:minimumValidity:)`` returns, with its type, scopes and
    /// expiry.
    public func resourceToken(for resource: URL, scopes: [String]? = nil, minimumValidity: TimeInterval = 60)
        async throws -> ResourceToken
    {
        try await lifecycle.accessToken(for: resource, scopes: scopes, minimumValidity: minimumValidity)
    }

    /// A credential another service issues for this sign-in's tokens, kept with them and reused
    /// by every caller and process until it expires within `minimumValidity`: temporary cloud
    /// credentials from AWS STS for the ID token (NativeAuthAWS), say.
    ///
    /// When the set keeps no valid credential named `name`, the tokens are made valid first (the
    /// ID token with `idToken`, else the access token, for at least a minute; refreshed once
    /// however many callers wait), then, under the store's lock, `obtain` is called with them, once
    /// however many callers and processes ask for the same name at once. Its credential is stored
    /// in the set (``TokenSet/derivedCredentials``) under `name`, sealed as the tokens are. A
    /// failure of `obtain` stores nothing.
    ///
    /// - Parameters:
    ///   - name: What the credential is and for what it was asked; one credential per name.
    ///   - minimumValidity: How long the credential must still be valid, in seconds.
    ///   - idToken: Whether `obtain` sends the ID token (else the access token).
    ///   - obtain: Asks the other service; it gets the tokens and must not keep them.
    /// - Throws: ``AuthError``: ``AuthError/Code/loginRequired`` when not signed in, or the tokens
    ///   cannot be made valid; whatever `obtain` throws.
    public func derivedCredential(
        named name: String, minimumValidity: TimeInterval = 300, idToken: Bool,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        try await lifecycle.derivedCredential(
            named: name, minimumValidity: minimumValidity, idToken: idToken, obtain: obtain)
    }

    /// Sends `request` with the access token for `resource` (see
    /// ``accessToken(for:scopes:minimumValidity:)``). On a 401 that token is dropped, another one
    /// got once, and the request retried once.
    ///
    /// - Parameters:
    ///   - request: The request; its `Authorization` header is set here.
    ///   - body: The request's body, sent again as it is on a retry.
    ///   - resource: The resource (RFC 8707) whose token the request carries.
    ///   - scopes: The scopes of that token; `nil` for the sign-in's.
    ///   - sink: Where the body of a successful answer goes as it arrives (see
    ///     ``send(_:body:streamingTo:)``).
    /// - Throws: ``AuthError`` as ``send(_:body:streamingTo:)`` does.
    public func send(
        _ request: HTTPRequest, body: Data? = nil, for resource: URL, scopes: [String]? = nil,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        try await lifecycle.send(request, body: body, for: .resource(resource, scopes: scopes), streamingTo: sink)
    }

    /// Drops the access token `token` when it is still the stored one, because a server refused
    /// it: the set is stored with the access token expired, so the next
    /// ``accessToken(minimumValidity:)`` refreshes (single-flight, as always), or throws
    /// ``AuthError/Code/loginRequired`` when there is no refresh token. The refresh token and the
    /// rest of the set stay.
    ///
    /// The credential helpers of NativeAuthCommands call it when git or Docker says the token was
    /// refused (`erase`). A token that is not the stored one (another process refreshed meanwhile,
    /// or it came from elsewhere) changes nothing.
    ///
    /// - Returns: Whether the token was dropped.
    /// - Throws: ``AuthError/Code/tokenStoreFailed`` when the store cannot be read or written.
    @discardableResult
    public func discardAccessToken(_ token: String) async throws -> Bool {
        try await lifecycle.discard(accessToken: token)
    }

    /// Refreshes the tokens now, whether or not they expire soon.
    ///
    /// Under the store's lock it reloads the stored set; when another process refreshed in the
    /// meantime it uses that set and sends nothing. Otherwise it sends the refresh token and saves
    /// the answer (keeping the old refresh token when the answer has none). When the server refuses
    /// the refresh token (`invalid_grant`) it reloads once more, in case another process won a
    /// rotation race, and else removes the refresh token and throws
    /// ``AuthError/Code/loginRequired``. Any other failure (5xx, network, timeout, a malformed
    /// answer) leaves the store exactly as it was.
    @discardableResult
    public func refresh() async throws -> TokenSet {
        try await lifecycle.refresh()
    }

    /// Why the ID token of the last refresh was refused, if it was; the tokens were stored with
    /// the previous ID token (see ``refresh()``). `nil` after a refresh whose ID token was valid.
    public var lastRefreshIDTokenError: AuthError? {
        get async { await lifecycle.lastRefreshIDTokenError }
    }

    // MARK: - Requests

    /// Sends `request` with `Authorization: Bearer <access token>`.
    ///
    /// On a 401 it refreshes once (single-flight, and not at all when the token already changed
    /// since this request was sent) and retries once. Other statuses are returned as they are.
    ///
    /// With `sink`, the body of a successful answer (2xx) is not collected: each piece goes to
    /// `sink` as it arrives (a server-sent event stream line after line, a download of any size),
    /// and the body returned is empty. Other answers come back whole, so that a 401 is still
    /// refreshed and retried; a success is never sent again, so nothing reaches `sink` twice.
    ///
    /// ```swift
    /// var request = HTTPRequest(method: .post, url: mcpEndpoint)
    /// request.headerFields[.accept] = "application/json, text/event-stream"
    /// let (response, _) = try await authenticator.send(request, body: call) { piece in
    ///     FileHandle.standardOutput.write(piece)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request; its `Authorization` header is set here.
    ///   - body: The request's body, sent again as it is on a retry.
    ///   - sink: Where a successful answer's body goes as it arrives; `nil` (the default) to get
    ///     it whole.
    /// - Throws: ``AuthError``: ``AuthError/Code/invalidToken`` when the retry gets a 401 too,
    ///   ``AuthError/Code/insufficientScope`` for a 403 whose `WWW-Authenticate` says so,
    ///   ``AuthError/Code/loginRequired`` when no token can be had, transport errors as they are.
    public func send(_ request: HTTPRequest, body: Data? = nil, streamingTo sink: ResponseBodySink? = nil)
        async throws -> (HTTPResponse, Data)
    {
        try await lifecycle.send(request, body: body, streamingTo: sink)
    }

    /// Sends `request` as ``send(_:body:streamingTo:)`` does; when the API asks for a stronger or more recent
    /// sign-in (RFC 9470 `insufficient_user_authentication` with `acr_values` or `max_age`, or a
    /// claims challenge such as Microsoft Entra's Conditional Access sends), signs the person in
    /// again through `presenter` with what it asks (``AuthError/stepUp``) and the scopes the sign-in
    /// holds, stores the new tokens, and retries the request once.
    ///
    /// When the API answers 403 `insufficient_scope` naming the scopes it needs
    /// (``AuthError/missingScopes``, as the MCP authorization spec's step-up asks), the person signs
    /// in again asking for the union of the scopes held and those, and the request is retried once.
    ///
    /// Concurrent callers that meet the challenge at once share one sign-in. The new ID token must
    /// meet what was asked (its `acr`, its `auth_time`), or nothing is stored. There is one step-up
    /// per call, never a loop.
    ///
    /// - Throws: ``AuthError``: as ``send(_:body:streamingTo:)``; ``AuthError/Code/stepUpRequired`` when the
    ///   API asks again after the stronger sign-in; ``AuthError/Code/insufficientScope`` when it
    ///   still lacks a scope after the sign-in asked for it; the sign-in's errors.
    public func send(
        _ request: HTTPRequest, body: Data? = nil, stepUpWith presenter: any UserAgentPresenter,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        try await steppingUp(with: presenter) {
            try await self.send(request, body: body, streamingTo: sink)
        }
    }

    /// Sends `request` with the access token of `target` through `exchange` (a stack's own
    /// transport, with its own body type), as ``send(_:body:streamingTo:)`` acts on the answers;
    /// see `TokenLifecycle.send(_:for:through:reading:)`.
    package func send<Body: Sendable>(
        _ request: HTTPRequest, for target: TokenLifecycle.TokenTarget,
        through exchange: @Sendable (HTTPRequest) async throws -> (HTTPResponse, Body),
        reading read: @Sendable (Body) async throws -> Data
    ) async throws -> (HTTPResponse, Body) {
        try await lifecycle.send(request, for: target, through: exchange, reading: read)
    }

    /// Runs `attempt` (a send), and when the API asks for a stronger or more recent sign-in, or
    /// names the scopes it lacks, signs in again through `presenter` and runs it once more: the
    /// step-up of ``send(_:body:stepUpWith:streamingTo:)``, for any stack's send.
    package func steppingUp<Answer: Sendable>(
        with presenter: any UserAgentPresenter, _ attempt: @Sendable () async throws -> Answer
    ) async throws -> Answer {
        // Borrowed tokens are signed in for where the agent runs: nothing to step up here.
        guard !borrowsTokens else { return try await attempt() }
        let sentWith = try await currentTokens()?.accessToken
        do {
            return try await attempt()
        } catch let error as AuthError where error.code == .stepUpRequired {
            guard let options = error.stepUp else { throw error }
            try await signInAgain(since: sentWith, reason: error.code) {
                self.client.logger.info("the API asks for a stronger sign-in; signing in again")
                let scopes = try await self.currentTokens()?.scopes ?? []
                return try await self.login(
                    presenter: presenter, scopes: scopes.isEmpty ? nil : scopes, options: options)
            }
            return try await attempt()
        } catch let error as AuthError where error.code == .insufficientScope {
            guard let missing = error.missingScopes else { throw error }
            var wanted = try await currentTokens()?.scopes ?? []
            wanted += missing.filter { !wanted.contains($0) }
            let asked = wanted
            try await signInAgain(since: sentWith, reason: error.code) {
                self.client.logger.info(
                    "the API needs another scope; signing in again for it",
                    metadata: ["scopes": "\(TerminalText.sanitized(asked.joined(separator: " ")))"])
                return try await self.login(presenter: presenter, scopes: asked, options: LoginOptions())
            }
            do {
                return try await attempt()
            } catch var again as AuthError where again.code == .insufficientScope {
                let held = try await currentTokens()?.scopes ?? []
                again.message =
                    "the API still lacks a scope after a sign-in that asked for "
                    + TerminalText.sanitized(asked.joined(separator: " ")) + " (granted: "
                    + TerminalText.sanitized(held.joined(separator: " ")) + ")"
                again.hint =
                    "the server did not grant what the API asks for; the account or the client may not be allowed it"
                throw again
            }
        }
    }

    /// Runs `signIn` once for every caller that met an API's challenge at the same time, unless
    /// the tokens changed since the request was sent with `sentWith` (another caller's step-up
    /// came first): the caller then retries with those.
    private func signInAgain(
        since sentWith: String?, reason: AuthError.Code, _ signIn: @escaping @Sendable () async throws -> TokenSet
    ) async throws {
        let instruments = client.instruments
        try await instruments.span("nativeauth.step_up") { span in
            span.set(TraceSpan.Attribute.reason, reason.rawValue)
            let (_, started) = try await stepUps.valueReportingStart {
                if let current = try await self.currentTokens(), current.accessToken != sentWith { return current }
                instruments.count(Instruments.Metric.stepUps, [("reason", reason.rawValue)])
                return try await signIn()
            }
            // A caller that met the challenge while another's sign-in ran retries with its tokens.
            span.set(TraceSpan.Attribute.waited, !started)
        }
    }

    /// The userinfo claims of the signed-in account (OIDC Core §5.3), through ``send(_:body:streamingTo:)``.
    ///
    /// When the sign-in had a validated ID token, the answer's `sub` must be its subject (OIDC Core
    /// §5.3.4): claims about someone else are not returned. A signed answer (`application/jwt`,
    /// OIDC Core §5.3.2) is verified as an ID token is (the provider's keys and algorithms, `iss`
    /// and `aud` when present) before it is read; an encrypted one is refused.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` when the provider has no
    ///   userinfo endpoint, ``AuthError/Code/responseMalformed`` when the answer is not a JSON object
    ///   or a signed JWT that verifies,
    ///   ``AuthError/Code/requestFailed`` when its `sub` is not the signed-in subject.
    public func userInfo() async throws -> UserInfo {
        guard let endpoint = try await metadata().userInfoEndpoint else {
            throw AuthError(.configurationInvalid, "the provider has no userinfo endpoint", operation: .userInfo)
        }
        let signedIn = try await lifecycle.current()
        try signedIn?.checkIssued(for: "userinfo_endpoint", at: endpoint, operation: .userInfo)
        var request = HTTPRequest(method: .get, url: endpoint)
        request.headerFields[.accept] = "application/json, application/jwt;q=0.9"
        let (response, body) = try await lifecycle.send(request, body: nil)
        let info: UserInfo
        let contentType = response.headerFields[.contentType]?.lowercased() ?? ""
        if response.status.kind == .successful, contentType.hasPrefix("application/jwt") {
            // OIDC Core §5.3.2: signed (perhaps encrypted) userinfo; verified like an ID token.
            let jwt = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let claims = try await IDTokenValidator.verifiedUserInfo(
                jwt, metadata: try await metadata(), client: client)
            do {
                info = try UserInfo(claims: claims)
            } catch {
                throw AuthError(
                    .responseMalformed, "the signed userinfo answer lacks what the protocol requires: \(error)",
                    operation: .userInfo, underlying: error)
            }
        } else {
            info = try client.userInfo(from: response, body: body)
        }
        if let subject = signedIn?.subject, info.subject != subject {
            throw AuthError(
                .requestFailed,
                "the userinfo answer is about subject \"\(info.subject)\", not the signed-in \"\(subject)\";"
                    + " its claims were not used (OIDC Core 5.3.4)",
                hint: "sign in again; if this persists, the provider's userinfo endpoint is misconfigured",
                operation: .userInfo
            )
        }
        return info
    }
}
