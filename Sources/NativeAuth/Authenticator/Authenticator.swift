public import Foundation
internal import HTTPTypes
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
/// The provider's metadata is loaded once and shared: concurrent callers wait for the same
/// request, and the result is kept for the authenticator's life (a failure is not kept).
///
/// Logging goes to the caller's `Logger`; tokens, codes, secrets and verifiers are never logged.
public actor Authenticator {
    /// The provider this authenticator signs in to.
    public nonisolated let provider: any AuthProvider
    /// Where tokens are kept.
    public nonisolated let store: any TokenStore
    /// How requests are sent.
    public nonisolated let transport: any HTTPTransport
    /// The key of this client's tokens in the store.
    public nonisolated let key: TokenKey

    let logger: Logger
    let now: @Sendable () -> Date
    var metadataTask: Task<ProviderMetadata, any Error>?
    var refreshTask: Task<TokenSet, any Error>?
    var cached: TokenSet?
    var jwksCache: JWKSCache?

    /// Why the ID token of the last refresh was refused, if it was; the tokens were stored with
    /// the previous ID token (see ``refresh()``). `nil` after a refresh whose ID token was valid.
    public internal(set) var lastRefreshIDTokenError: AuthError?

    /// How long a refresh waits for another process's refresh of the same tokens.
    public nonisolated let lockTimeout: Duration

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - provider: The provider, typically from ``ProviderRegistry/makeProvider(_:)``.
    ///   - store: Where tokens are kept.
    ///   - transport: How requests are sent. Default: a ``URLSessionTransport``.
    ///   - account: The account name in the store, for programs with several sign-ins.
    ///   - logger: Where NativeAuth logs; it never bootstraps logging itself.
    ///   - lockTimeout: How long a refresh waits for the store's lock (another process refreshing).
    ///   - clock: The current time, for token expiry (inject one in tests).
    public init(
        provider: any AuthProvider,
        store: any TokenStore,
        transport: any HTTPTransport = URLSessionTransport(),
        account: String = "default",
        logger: Logger = Logger(label: "NativeAuth"),
        lockTimeout: Duration = .seconds(30),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.lockTimeout = lockTimeout
        self.provider = provider
        self.store = store
        self.transport = transport
        self.key = TokenKey(issuer: provider.tokenIssuer, clientID: provider.configuration.clientID, account: account)
        self.logger = logger
        self.now = clock
    }

    /// The provider's metadata, loaded once (see the type's discussion).
    public func metadata() async throws -> ProviderMetadata {
        if let metadataTask { return try await metadataTask.value }
        let provider = provider
        let transport = transport
        let task = Task { try await provider.loadMetadata(using: transport) }
        metadataTask = task
        do {
            let metadata = try await task.value
            logger.debug("metadata loaded", metadata: ["issuer": "\(metadata.issuer ?? type(of: provider).id)"])
            return metadata
        } catch {
            metadataTask = nil  // a failure is not kept: the next call tries again
            throw error
        }
    }

    /// Signs the person in through `presenter` and stores the tokens.
    ///
    /// Runs discovery, builds the authorization request (PKCE S256, `state`, `nonce` when `openid`
    /// is asked for, the provider's extra parameters), presents it, checks the callback (`state` in
    /// constant time, `error`, RFC 9207 `iss`), exchanges the code, and saves the tokens.
    ///
    /// - Parameters:
    ///   - presenter: How the person gets to the authorization page (``LoopbackPresenter``, …).
    ///   - scopes: The scopes to ask for; default: the configuration's.
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``; nothing is stored unless every step succeeded.
    @discardableResult
    public func login(presenter: any UserAgentPresenter, scopes: [String]? = nil) async throws -> TokenSet {
        let metadata = try await metadata()
        let scopes = scopes ?? provider.configuration.scopes
        let session = try await presenter.beginSession()
        let extraParameters = provider.authorizationParameters(
            for: AuthorizationRequest.Parameters(scopes: scopes, redirectURI: session.redirectURI)
        )
        let request = AuthorizationRequest(
            metadata: metadata,
            clientID: provider.configuration.clientID,
            redirectURI: session.redirectURI,
            scopes: scopes,
            extraParameters: extraParameters
        )
        logger.debug("authorization request ready", metadata: ["redirect_uri": "\(session.redirectURI.absoluteString)"])
        let response: AuthorizationResponse
        do {
            response = try await session.authorize(request.url) { callback in request.disposition(of: callback) }
        } catch {
            await session.close()
            logger.info(
                "sign-in did not complete", metadata: ["code": "\((error as? AuthError)?.code.rawValue ?? "error")"])
            throw error
        }

        var tokenRequest = TokenRequest(
            url: metadata.tokenEndpoint,
            operation: .tokenExchange,
            form: [
                FormField("grant_type", "authorization_code"),
                FormField("code", response.code),
                FormField("redirect_uri", request.redirectURI.absoluteString),
                FormField("code_verifier", request.pkce.verifier),
            ]
        )
        provider.prepareTokenRequest(&tokenRequest, metadata: metadata)
        let tokens = try await sendTokenRequest(tokenRequest, requestedScopes: scopes, previous: nil)
        try await validateIDToken(
            of: tokens,
            metadata: metadata,
            nonce: request.nonce,
            maxAge: extraParameters.first(named: "max_age").flatMap { Int($0) }
        )
        try await mapStoreErrors { try await store.save(tokens, for: key) }
        cached = tokens
        logger.info("signed in", metadata: ["subject": "\(tokens.subject ?? "unknown")"])
        return tokens
    }

    /// The stored tokens (from memory, else from the store), or `nil` when signed out.
    public func currentTokens() async throws -> TokenSet? {
        if let cached { return cached }
        cached = try await mapStoreErrors { try await store.load(key) }
        return cached
    }

    /// Validates the ID token of `tokens`, when there is one (see ``IDTokenValidationOptions``).
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/idTokenInvalid``) naming the check that failed.
    func validateIDToken(
        of tokens: TokenSet,
        metadata: ProviderMetadata,
        nonce: String?,
        maxAge: Int?,
        previousSubject: String? = nil
    ) async throws {
        guard let idToken = tokens.idToken else { return }
        var cache: JWKSCache?
        if let jwksURI = metadata.jwksURI {
            if jwksCache?.url != jwksURI {
                jwksCache = JWKSCache(url: jwksURI, transport: transport, errorMapper: provider.errorMapper)
            }
            cache = jwksCache
        }
        let configuration = provider.configuration
        let expectations = IDTokenExpectations(
            issuer: metadata.issuer ?? configuration.issuer?.absoluteString ?? provider.tokenIssuer,
            clientID: configuration.clientID,
            nonce: nonce,
            accessToken: tokens.accessToken,
            maxAge: maxAge,
            previousSubject: previousSubject,
            isPublicClient: (configuration.clientSecret ?? "").isEmpty,
            advertisedAlgorithms: metadata.idTokenSigningAlgValuesSupported
        )
        let validator = IDTokenValidator(
            options: provider.idTokenValidation, jwks: cache, now: now(), logger: logger)
        do {
            _ = try await validator.validate(idToken, expecting: expectations)
        } catch {
            logger.warning("ID token refused", metadata: ["reason": "\(error.message)"])
            throw error
        }
    }

    /// Sends a token request and decodes the answer with the provider's decoder.
    func sendTokenRequest(_ request: TokenRequest, requestedScopes: [String], previous: TokenSet?) async throws
        -> TokenSet
    {
        let (httpRequest, body) = request.httpRequest()
        let (response, data) = try await sendMapped(httpRequest, body: body, operation: request.operation)
        let context = TokenResponseDecoder.Context(
            operation: request.operation,
            requestedScopes: requestedScopes,
            receivedAt: now(),
            previous: previous
        )
        return try provider.decodeTokenResponse(response, body: data, context: context)
    }

    /// Sends a request through the transport; an error without a response goes through the
    /// provider's error mapper.
    func sendMapped(_ request: HTTPRequest, body: Data?, operation: AuthOperation) async throws -> (HTTPResponse, Data)
    {
        do {
            return try await transport.send(request, body: body)
        } catch {
            throw provider.errorMapper.mapWithFallback(AuthFailure(operation: operation, underlying: error))
        }
    }
}
