public import Foundation
internal import HTTPTypes
internal import LenientJSON
public import Logging

/// The public face of NativeAuth: one provider, one client, one token store, one transport.
///
/// ```swift
/// var registry = ProviderRegistry()
/// try registry.register(GenericOIDCProvider.self)
/// let provider = try registry.makeProvider(configuration)
/// let auth = Authenticator(provider: provider, store: FileTokenStore(), logger: logger)
/// try await auth.login(.browser(LoopbackPresenter()))
/// let (response, body) = try await auth.send(HTTPRequest(method: .get, url: api))
/// ```
///
/// It wires three parts together, each of which does one job:
/// - the flows sign in and out (the authorization code flow, the device flow, the grants of a
///   client or a workload, logout) and return tokens or a result (``login(_:scopes:)``,
///   ``logout(presenter:endingSessionWhenSignedOut:)``);
/// - a token holder keeps the tokens: in memory and in the ``store``, refreshed once however many
///   callers and processes need them; or, for an authenticator that borrows them from a token
///   agent, asked of the agent;
/// - the ``TokenSender`` sends requests with them and acts on the answers (a refresh, a new DPoP
///   proof, a step-up), and one exchange path sends every request to the provider, reads every
///   answer with the provider's hooks and maps every error with its ``AuthProvider/errorMapper``.
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
    /// Who holds the tokens; NativeAuthTesting's expiry hooks reach the stored set through it.
    package let holder: any TokenHolder
    /// Resources whose metadata named this issuer (``ProviderConfiguration/followsResourceMetadata``):
    /// requests under them get their own token.
    let discoveredResources = Locked<[URL]>([])

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
        holder = StoredTokens(client: client, store: store, key: key, lockTimeout: lockTimeout)
    }

    /// An authenticator that borrows its tokens from `source` (a token agent: NativeAuthAgent's
    /// `AgentClient`) instead of keeping them: it never holds a refresh token or a DPoP key.
    ///
    /// It asks `source` for access tokens, ID tokens and resources' tokens valid as long as it needs
    /// (keeping them in memory while they are), and for each DPoP proof;
    /// ``send(_:body:for:stepUpWith:streamingTo:)`` and the rest work as with a store, and a token
    /// an API refuses is handed back for another. Signing in and out, ``refresh()`` and step-ups are
    /// the source's: the first three throw ``AuthError/Code/configurationInvalid`` here, and an
    /// API's request for a stronger sign-in is an error. When the source cannot answer, every call
    /// fails with its error; nothing falls back to a copy of the tokens.
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
        holder = BorrowedTokens(source: source, client: client, key: key)
    }

    /// Whether the tokens are borrowed from a ``TokenSource`` (see
    /// ``init(provider:borrowingFrom:transport:account:logger:clock:observability:)``).
    public var borrowsTokens: Bool { holder.stored == nil }

    /// An authenticator for another account of the same provider and client, sharing this one's
    /// store (or token source), transport and loaded metadata. ``Accounts`` hands these out.
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
        holder = other.holder.holding(account: account)
    }

    /// The provider's metadata, loaded once (see the type's discussion).
    public func metadata() async throws -> ProviderMetadata {
        try await client.metadata()
    }

    // MARK: - Tokens

    /// The stored tokens (from memory, else from the store), or `nil` when signed out.
    public func currentTokens() async throws -> TokenSet? {
        try await holder.current()
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
        try await holder.validTokens(minimumValidity: minimumValidity, idToken: true)
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
        try await holder.validTokens(minimumValidity: minimumValidity, idToken: false).accessToken
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
        try await holder.resourceToken(for: resource, scopes: scopes, minimumValidity: minimumValidity)
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
        try await holder.derivedCredential(
            named: name, minimumValidity: minimumValidity, idToken: idToken, obtain: obtain)
    }

    /// Drops the access token `token` when it is still the stored one, because a server refused
    /// it: the set is stored with the access token expired, so the next
    /// ``accessToken(minimumValidity:)`` refreshes (single-flight, as always), or throws
    /// ``AuthError/Code/loginRequired`` when there is no refresh token. The refresh token and the
    /// rest of the set stay. A borrowed token is handed back to its source.
    ///
    /// The credential helpers of NativeAuthCommands call it when git or Docker says the token was
    /// refused (`erase`). A token that is not the stored one (another process refreshed meanwhile,
    /// or it came from elsewhere) changes nothing.
    ///
    /// - Returns: Whether the token was dropped.
    /// - Throws: ``AuthError/Code/tokenStoreFailed`` when the store cannot be read or written.
    @discardableResult
    public func discardAccessToken(_ token: String) async throws -> Bool {
        try await holder.discard(accessToken: token)
    }

    /// Forgets the tokens kept for `resource` (every scope set); the sign-in and the other
    /// resources' tokens stay, and the next token for `resource` is asked for anew.
    ///
    /// - Returns: Whether any was kept.
    @discardableResult
    public func discardResourceTokens(for resource: URL) async throws -> Bool {
        try await holder.removeResourceTokens(for: resource)
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
        try await holder.owner().refresh()
    }

    /// Why the ID token of the last refresh was refused, if it was; the tokens were stored with
    /// the previous ID token (see ``refresh()``). `nil` after a refresh whose ID token was valid.
    public var lastRefreshIDTokenError: AuthError? {
        get async { await holder.stored?.lastRefreshIDTokenError }
    }
}
