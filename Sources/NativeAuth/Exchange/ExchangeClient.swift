package import Foundation
package import HTTPTypes
package import LenientJSON
package import Logging
internal import Tracing

/// The one path of every request NativeAuth sends: the token, device authorization and
/// revocation endpoints, discovery, the JWKS, userinfo and the requests an app makes with its
/// access token.
///
/// A request to an OAuth endpoint goes through ``post(_:metadata:read:)``, the one place of the
/// sequence: the grant's form → the provider's ``AuthProvider/prepare(_:metadata:)`` → the HTTP
/// request → ``send(_:body:operation:)`` (the one call of the transport) → reading the answer with
/// the provider's decode hooks (``AuthProvider/parseBody(_:of:)``, ``AuthProvider/fields(of:for:)``)
/// → ``error(for:)``, the one place where failures become ``AuthError``s (the provider's
/// ``ErrorMapper`` first, then ``StandardErrorMapper``).
///
/// It also keeps what is loaded once per client: the provider's metadata and its signing keys.
package final class ExchangeClient: Sendable {
    package let provider: any AuthProvider
    package let transport: any HTTPTransport
    package let clock: AuthClock
    package let logger: Logger
    /// Where spans and metrics go (``Observability``).
    package let instruments: Instruments
    private let metadataFlight = SingleFlight<ProviderMetadata>(keepsValue: true)
    private let signingKeys = Locked<JWKSCache?>(nil)
    /// The DPoP nonces of the authorization and resource servers this client talks to.
    package let dpopNonces = DPoPNonces()

    package init(
        provider: any AuthProvider, transport: any HTTPTransport, clock: AuthClock, logger: Logger,
        instruments: Instruments = .off
    ) {
        self.provider = provider
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.instruments = instruments
    }

    // MARK: - What is loaded once

    /// The provider's metadata, loaded once: concurrent callers share one load; a failure is not
    /// kept, so the next call tries again.
    package func metadata() async throws -> ProviderMetadata {
        try await metadataFlight.value { [self] in
            try await instruments.span("nativeauth.discovery", kind: .client) { span in
                if let issuer = provider.configuration.issuer {
                    span.set(TraceSpan.Attribute.issuer, Redaction.scrubURL(issuer.absoluteString))
                }
                do {
                    return try await loadMetadata()
                } catch {
                    instruments.countFailure(error, operation: .discovery)
                    throw error
                }
            }
        }
    }

    private func loadMetadata() async throws -> ProviderMetadata {
        var metadata = try await provider.loadMetadata(MetadataLoader(client: self))
        if transport.clientCertificateThumbprint != nil
            || provider.configuration.clientAuthentication?.usesMutualTLS == true
        {
            metadata = metadata.applyingMutualTLSAliases(keeping: provider.configuration.endpoints)
        }
        logger.debug("metadata loaded", metadata: ["issuer": "\(metadata.issuer ?? type(of: provider).id)"])
        let endpoint = metadata.tokenEndpoint
        if endpoint.scheme?.lowercased() == "http" {
            // Debug only: a command-line tool says it once per sign-in, as a plain sentence.
            logger.debug(
                """
                the provider is reached over plain HTTP on the loopback interface; on a shared machine \
                another user can bind that port first
                """,
                metadata: ["token_endpoint": "\(Redaction.scrubURL(endpoint.absoluteString))"])
        }
        return metadata
    }

    /// The signing keys published at `url`, cached for as long as the metadata names that URL.
    package func signingKeys(at url: URL) -> JWKSCache {
        signingKeys.withLock { cache in
            if let cache, cache.url == url { return cache }
            let fresh = JWKSCache(url: url)
            cache = fresh
            return fresh
        }
    }

    // MARK: - The one send and the one mapping

    /// Sends a request through the transport; a failure without a response (network, timeout,
    /// cancellation, a body over the size limit) becomes an ``AuthError`` for `operation`.
    /// With `sink`, a successful answer's body goes there as it arrives
    /// (``HTTPTransport/send(_:body:streamingTo:)``); a throw of the sink's ends the exchange
    /// (an ``AuthError`` it throws comes out as it is).
    package func send(
        _ request: HTTPRequest,
        body: Data?,
        operation: AuthOperation,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws(AuthError) -> (HTTPResponse, Data) {
        do {
            guard let sink else { return try await transport.send(request, body: body) }
            return try await transport.send(request, body: body, streamingTo: sink)
        } catch {
            throw self.error(for: AuthFailure(operation: operation, underlying: error))
        }
    }

    /// The error for a failure: the provider's mapper first, the standard mapping for whatever it
    /// leaves. Every failure NativeAuth reports from a server or a transport passes here.
    package func error(for failure: AuthFailure) -> AuthError {
        provider.errorMapper.map(failure) ?? StandardErrorMapper().mapFailure(failure)
    }

    /// The error for an answer that is not a success: the OAuth error fields are read from the
    /// body as the provider encodes it (GitHub's form-encoded errors too).
    private func refusal(
        _ operation: AuthOperation,
        response: HTTPResponse,
        body: Data,
        object: JSONObject?,
        underlying: (any Error)? = nil
    ) -> Refusal {
        var failure = AuthFailure(operation: operation, response: response, body: body, underlying: underlying)
        if let object, let oauthError = OAuthErrorResponse(json: object) { failure.oauthError = oauthError }
        return Refusal(error: error(for: failure), object: object)
    }

    // MARK: - OAuth endpoints

    /// An answer the client could not turn into a result: the error, and the body as an object
    /// when it was one (the device flow reads a `slow_down`'s `interval` from it).
    package struct Refusal: Error {
        package let error: AuthError
        package let object: JSONObject?

        /// The device flow's "not yet" (`authorization_pending`, `slow_down`): no failure.
        var isPending: Bool {
            error.oauthError == "authorization_pending" || error.oauthError == "slow_down"
        }
    }

    /// The exchange sequence: prepares `request` with the provider's hook, sends it, and reads the
    /// answer with `read`.
    ///
    /// With a DPoP key, the request carries a proof (with the server's last nonce); when the server
    /// answers `use_dpop_nonce` (with a new nonce) or `invalid_dpop_proof`, it is made and sent
    /// once more, with a new proof (and a new client assertion).
    private func post<T>(
        _ request: OAuthRequest,
        metadata: ProviderMetadata,
        dpop: DPoPKey? = nil,
        read: (HTTPResponse, Data) -> Result<T, Refusal>
    ) async -> Result<T, Refusal> {
        do {
            try requireClientID()
        } catch {
            return .failure(Refusal(error: error, object: nil))
        }
        let sentNonce = dpop == nil ? nil : dpopNonces.nonce(for: request.url)
        let first = await attempt(request, metadata: metadata, dpop: dpop, read: read)
        guard let dpop, case .failure(let refusal) = first,
            refusal.error.oauthError.map(DPoPNonces.proofRefusals.contains) == true
        else { return first }
        if refusal.error.oauthError == "use_dpop_nonce", dpopNonces.nonce(for: request.url) == sentNonce {
            let error = DPoPNonces.missingNonce(operation: request.operation, status: refusal.error.status)
            return .failure(Refusal(error: error, object: refusal.object))
        }
        logger.debug(
            "the server refused the DPoP proof; sending a new one",
            metadata: ["error": "\(refusal.error.oauthError ?? "")"])
        instruments.count(Instruments.Metric.dpopRetries, [("server", "authorization")])
        return await instruments.span("nativeauth.dpop_nonce_retry", kind: .client) { span in
            span.set(TraceSpan.Attribute.server, "authorization")
            span.set(TraceSpan.Attribute.oauthError, refusal.error.oauthError.map(OAuthErrorName.traced) ?? "")
            let result = await attempt(request, metadata: metadata, dpop: dpop, read: read)
            if case .failure(let refusal) = result { span.failed(refusal.error) }
            return result
        }
    }

    /// One request of the exchange sequence: the client assertion, the DPoP proof, the provider's
    /// hook, the send, and the reading.
    private func attempt<T>(
        _ request: OAuthRequest,
        metadata: ProviderMetadata,
        dpop: DPoPKey?,
        read: (HTTPResponse, Data) -> Result<T, Refusal>
    ) async -> Result<T, Refusal> {
        var request = request
        // A signed assertion cannot be made in the provider's synchronous hook: it is made here,
        // fresh for each request, when the standard method needs one.
        let method = ClientAuthentication.standard(for: provider.configuration, metadata: metadata)
        if method.usesAssertion {
            do throws(AuthError) {
                let configuration = provider.configuration
                var audience = metadata.tokenEndpoint
                if configuration.clientAssertionAudience == .issuer {
                    guard let issuer = metadata.issuer.flatMap(URL.init(string:)) ?? configuration.issuer else {
                        throw AuthError(
                            .configurationInvalid, "client_assertion_audience is issuer, and the provider has none",
                            field: Setting.clientAssertionAudience.key)
                    }
                    audience = issuer
                }
                request.clientAssertion = try await ClientAssertion.make(
                    method, configuration: configuration, audience: audience, now: clock.now())
            } catch {
                return .failure(Refusal(error: error, object: nil))
            }
        }
        if let dpop {
            do {
                request.headerFields[.dpop] = try dpop.proof(
                    method: "POST", url: request.url, nonce: dpopNonces.nonce(for: request.url), now: clock.now())
            } catch {
                return .failure(Refusal(error: error, object: nil))
            }
        }
        provider.prepare(&request, metadata: metadata)
        let (httpRequest, body) = request.httpRequest()
        // A server that echoes what it was sent must not get it printed: the values this request
        // carried are removed from the error whatever their shape (a Google `1//…` token too).
        let secrets = request.sentSecrets + [provider.configuration.clientSecret].compactMap { $0 }
        do {
            let (response, data) = try await send(httpRequest, body: body, operation: request.operation)
            if dpop != nil { try dpopNonces.remember(response, for: request.url, operation: request.operation) }
            return read(response, data).mapError { Refusal(error: $0.error.scrubbing(secrets), object: $0.object) }
        } catch {
            return .failure(Refusal(error: error.scrubbing(secrets), object: nil))
        }
    }

    // MARK: - DPoP

    /// A new DPoP key for a sign-in, when its tokens are to be bound to one (RFC 9449): as
    /// ``ProviderConfiguration/dpop`` says, in the first algorithm of the server's
    /// `dpop_signing_alg_values_supported` that NativeAuth signs with (ES256 when it names none).
    ///
    /// - Returns: The key, or `nil` when DPoP is not used with this server.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when DPoP is required and
    ///   the server takes no algorithm NativeAuth signs with.
    package func newDPoPKey(_ metadata: ProviderMetadata) throws(AuthError) -> DPoPKey? {
        let policy = provider.configuration.dpop
        let advertised = metadata.dpopSigningAlgValuesSupported ?? []
        switch policy {
        case .disabled:
            return nil
        case .automatic:
            guard type(of: provider).supportsDPoP, !advertised.isEmpty else { return nil }
            guard let algorithm = DPoPKey.algorithm(among: advertised) else {
                logger.info(
                    "the server takes DPoP proofs in no algorithm NativeAuth signs with; its tokens are bearer tokens",
                    metadata: ["algorithms": "\(advertised.map(TerminalText.sanitized).joined(separator: " "))"])
                return nil
            }
            return try DPoPKey.generate(algorithm)
        case .required:
            guard !advertised.isEmpty else { return try DPoPKey.generate(.es256) }
            guard let algorithm = DPoPKey.algorithm(among: advertised) else {
                throw AuthError(
                    .configurationInvalid,
                    "the server takes DPoP proofs in \(advertised.map(TerminalText.sanitized).joined(separator: ", "))"
                        + " only; NativeAuth signs them with ES256, EdDSA or RS256",
                    hint: "set dpop to auto or off for this server", field: Setting.dpop.key)
            }
            return try DPoPKey.generate(algorithm)
        }
    }

    /// Checks that a token answer to a request with a DPoP proof is what the configuration asked
    /// for, and binds it to the key: a `DPoP` token keeps it; a `Bearer` one is refused when DPoP
    /// is required (nothing is stored) and otherwise kept as a bearer token (the key stays for the
    /// refresh token, which the server may have bound to it).
    private func bind(_ tokens: inout TokenSet, to key: DPoPKey?, operation: AuthOperation) throws(AuthError) {
        guard let key else {
            guard !tokens.isDPoPBound else {
                throw AuthError(
                    .responseMalformed,
                    "the server issued a DPoP-bound token to a request without a DPoP proof",
                    hint: "set dpop to auto or required for this server", operation: operation)
            }
            return
        }
        if tokens.isDPoPBound {
            tokens.tokenType = "DPoP"
        } else if provider.configuration.dpop == .required {
            throw AuthError(
                operation.defaultErrorCode,
                "the server answered with a \(TerminalText.sanitized(tokens.tokenType)) token, not a DPoP-bound one,"
                    + " and this configuration requires DPoP; nothing was stored",
                hint: "check that the client may use DPoP at the server, or set dpop to auto",
                operation: operation, field: Setting.dpop.key)
        }
        tokens.dpopKey = key
    }

    /// Reads an OAuth endpoint's answer: a success status, a body the provider can read as an
    /// object, no `error` member (servers send those with HTTP 200 too), and fields `build` can read.
    ///
    /// - Parameter requiredKey: The member a successful answer must have, named when the body is
    ///   no object at all.
    package func read<T>(
        _ response: HTTPResponse,
        _ body: Data,
        operation: AuthOperation,
        requiredKey: String,
        build: (JSONObject) throws -> T
    ) -> Result<T, Refusal> {
        var object: JSONObject?
        var parseError: (any Error)?
        do {
            object = try provider.parseBody(body, of: response)
        } catch {
            parseError = error
        }
        guard (200..<300).contains(response.status.code) else {
            return .failure(refusal(operation, response: response, body: body, object: object))
        }
        guard let object else {
            let underlying = parseError ?? JSONFieldError(key: requiredKey, problem: .missing)
            if let error = underlying as? AuthError { return .failure(Refusal(error: error, object: nil)) }
            return .failure(refusal(operation, response: response, body: body, object: nil, underlying: underlying))
        }
        if OAuthErrorResponse(json: object) != nil {
            return .failure(refusal(operation, response: response, body: body, object: object))
        }
        do {
            return .success(try build(try provider.fields(of: object, for: operation)))
        } catch let error as AuthError {
            return .failure(Refusal(error: error, object: object))
        } catch {
            return .failure(refusal(operation, response: response, body: body, object: object, underlying: error))
        }
    }

    /// Redeems `grant` at the token endpoint.
    ///
    /// - Parameters:
    ///   - grant: What to trade for tokens.
    ///   - metadata: The provider's metadata (the token endpoint, client authentication).
    ///   - requestedScopes: The scopes asked for, which the tokens carry when the answer names none.
    ///   - previous: The tokens being refreshed (their refresh token is kept when the answer has none).
    ///   - dpop: The DPoP key the request's proof is signed with, and the tokens bound to; `nil`
    ///     sends no proof.
    package func tokens(
        for grant: Grant,
        metadata: ProviderMetadata,
        requestedScopes: [String],
        previous: TokenSet? = nil,
        dpop: DPoPKey? = nil
    ) async throws(AuthError) -> TokenSet {
        try await redeem(grant, metadata: metadata, requestedScopes: requestedScopes, previous: previous, dpop: dpop)
            .mapError(\.error).get()
    }

    /// Redeems `grant` and hands back a refusal with the body it came with, for callers that act on
    /// what the server said (the device flow's `authorization_pending` and `slow_down`).
    package func redeem(
        _ grant: Grant,
        metadata: ProviderMetadata,
        requestedScopes: [String],
        previous: TokenSet? = nil,
        dpop: DPoPKey? = nil
    ) async -> Result<TokenSet, Refusal> {
        // The configuration's resources (RFC 8707), unless the grant names its own.
        let resources = provider.configuration.resources
        let grant = grant.resources.isEmpty && !resources.isEmpty ? grant.forResources(resources) : grant
        let request = OAuthRequest(tokenEndpoint: metadata.tokenEndpoint, grant: grant)
        let started = instruments.now
        let result = await instruments.span("nativeauth.token_request", kind: .client) { span in
            span.set(TraceSpan.Attribute.grantType, grant.kind.rawValue)
            span.set(TraceSpan.Attribute.operation, grant.operation.rawValue)
            span.set(TraceSpan.Attribute.dpop, dpop != nil)
            let result = await exchange(
                request, grant: grant, metadata: metadata, requestedScopes: requestedScopes,
                previous: previous, dpop: dpop)
            if case .failure(let refusal) = result, !refusal.isPending {
                span.failed(refusal.error)
                if let name = refusal.error.oauthError {
                    span.set(TraceSpan.Attribute.oauthError, OAuthErrorName.traced(name))
                }
            }
            return result
        }
        recordTokenRequest(grant, result: result, started: started)
        return result
    }

    /// The metrics of one token request: its outcome, how long it took, the new token's lifetime.
    private func recordTokenRequest(_ grant: Grant, result: Result<TokenSet, Refusal>, started: ContinuousClock.Instant)
    {
        let kind = ("grant_type", grant.kind.rawValue)
        switch result {
        case .success(let tokens):
            instruments.count(Instruments.Metric.tokenRequests, [kind, ("outcome", "success")])
            if let expiresAt = tokens.expiresAt {
                instruments.record(Instruments.Metric.lifetimeIssued, [kind], expiresAt.timeIntervalSince(clock.now()))
            }
        case .failure(let refusal) where refusal.isPending:
            instruments.count(Instruments.Metric.tokenRequests, [kind, ("outcome", "pending")])
        case .failure(let refusal):
            instruments.count(Instruments.Metric.tokenRequests, [kind, ("outcome", "failure")])
            instruments.countFailure(refusal.error, operation: grant.operation)
        }
        instruments.time(Instruments.Metric.tokenRequestDuration, [kind], ContinuousClock.now - started)
    }

    private func exchange(
        _ request: OAuthRequest, grant: Grant, metadata: ProviderMetadata, requestedScopes: [String],
        previous: TokenSet?, dpop: DPoPKey?
    ) async -> Result<TokenSet, Refusal> {
        await post(request, metadata: metadata, dpop: dpop) { response, body in
            let context = TokenResponseDecoder.Context(
                requestedScopes: requestedScopes, receivedAt: clock.now(), previous: previous)
            return read(response, body, operation: grant.operation, requiredKey: "access_token") { fields in
                var tokens = try TokenResponseDecoder.decode(fields, context: context)
                tokens.resources = grant.resources
                // Asked for over mutual TLS from a server that binds tokens: bound to this certificate.
                if metadata.tlsClientCertificateBoundAccessTokens {
                    tokens.certificateThumbprint = transport.clientCertificateThumbprint
                }
                try bind(&tokens, to: dpop, operation: grant.operation)
                return tokens
            }
        }
    }

    /// Fails when the configuration has no client id: one that registers (``ProviderConfiguration/registersClient``)
    /// before ``Authenticator/registeringClient(_:initialAccessToken:)`` made it a client.
    package func requireClientID() throws(AuthError) {
        guard provider.configuration.clientID.isEmpty else { return }
        throw AuthError(
            .configurationInvalid, "the client has no client id yet",
            hint: "register it first (Authenticator.registeringClient, `register_client`), or give its client id",
            field: Setting.clientID.key)
    }

    /// Registers a client at `endpoint` (RFC 7591 §3): the metadata as JSON, with the initial access
    /// token as a bearer token when the server wants one.
    package func register(
        _ client: ClientMetadata, at endpoint: URL, initialAccessToken: String?
    ) async throws(AuthError) -> ClientRegistration {
        var request = HTTPRequest(method: .post, url: endpoint)
        request.headerFields[.contentType] = "application/json"
        request.headerFields[.accept] = "application/json"
        if let initialAccessToken { request.headerFields[.authorization] = "Bearer \(initialAccessToken)" }
        let body: Data
        do {
            body = Data(try JSONValue.object(client.registrationRequest).encoded())
        } catch {
            throw AuthError(.configurationInvalid, "the client metadata cannot be encoded", underlying: error)
        }
        let secrets = [initialAccessToken].compactMap { $0 }
        let (response, data): (HTTPResponse, Data)
        do {
            (response, data) = try await send(request, body: body, operation: .registration)
        } catch {
            throw error.scrubbing(secrets)
        }
        return try read(response, data, operation: .registration, requiredKey: "client_id") { fields in
            try ClientRegistration(answer: fields, endpoint: endpoint, requested: client)
        }.mapError { $0.error.scrubbing(secrets) }.get()
    }

    /// Pushes an authorization request's parameters to the server (RFC 9126 §2.1), with the
    /// client's authentication and, with a DPoP key, a proof of it (RFC 9449 §10.1; a nonce the
    /// server asks for is sent with a second proof), and reads the `request_uri` the browser is
    /// sent with instead.
    package func push(
        _ parameters: [FormField], to endpoint: URL, metadata: ProviderMetadata, dpop: DPoPKey? = nil
    ) async throws(AuthError) -> PushedAuthorizationRequest {
        // The client authentication adds its own `client_id`.
        let form = parameters.filter { $0.name != "client_id" }
        let request = OAuthRequest(url: endpoint, operation: .pushedAuthorization, form: form)
        return try await post(request, metadata: metadata, dpop: dpop) { response, body in
            read(response, body, operation: .pushedAuthorization, requiredKey: "request_uri") { fields in
                try PushedAuthorizationRequest(answer: fields, receivedAt: clock.now())
            }
        }
        .mapError(\.error).get()
    }

    /// Asks the device authorization endpoint for a code (RFC 8628 §3.1).
    package func deviceAuthorization(
        at endpoint: URL,
        scopes: [String],
        metadata: ProviderMetadata
    ) async throws(AuthError) -> DeviceAuthorization {
        let form = scopes.isEmpty ? [] : [FormField("scope", scopes.joined(separator: " "))]
        let request = OAuthRequest(url: endpoint, operation: .deviceAuthorization, form: form)
        return try await post(request, metadata: metadata) { response, body in
            read(response, body, operation: .deviceAuthorization, requiredKey: "device_code") { fields in
                try DeviceAuthorization.decode(fields)
            }
        }
        .mapError(\.error).get()
    }

    /// Revokes a token (RFC 7009). The server answers 200 whatever the token's state (§2.2);
    /// anything else is an error.
    package func revoke(
        _ token: String,
        hint: String,
        at endpoint: URL,
        metadata: ProviderMetadata
    ) async throws(AuthError) {
        let form = [FormField("token", token), FormField("token_type_hint", hint)]
        let request = OAuthRequest(url: endpoint, operation: .revocation, form: form)
        let result: Result<Void, Refusal> = await post(request, metadata: metadata) { response, body in
            guard response.status.code != 200 else { return .success(()) }
            let object = try? provider.parseBody(body, of: response)
            return .failure(refusal(.revocation, response: response, body: body, object: object))
        }
        try result.mapError(\.error).get()
    }
}
