internal import Foundation
internal import Logging

extension Authenticator {
    /// An authenticator for this app registered as a client of the provider: by dynamic client
    /// registration (RFC 7591), or by its Client ID Metadata Document where the server takes one.
    /// For apps that meet authorization servers they were never registered with: an MCP client
    /// sent to an API by its protected resource metadata, a tool pointed at any issuer.
    ///
    /// This authenticator needs the issuer (for the metadata) and may have any client id: the
    /// returned one has the registered client's id, secret and authentication method, and the same
    /// store, transport, account and clock.
    ///
    /// - A `client.metadataDocument`, at a server whose metadata announces
    ///   `client_id_metadata_document_supported`, is the client id as it is: nothing is registered
    ///   or stored.
    /// - Else the client is registered at the metadata's `registration_endpoint` once, and the
    ///   registration is kept in ``store`` beside the tokens (the keyring, when the tokens are
    ///   there), under ``ClientRegistration/storeKey(issuer:clientName:scope:)``: one per scope
    ///   set (one kept under the client name alone, by an earlier version, is taken over when it
    ///   asked for the same). Later calls, in this process or another, use it; they register again only when its `client_secret_expires_at`
    ///   is within a minute, or `client` asks for other metadata. Registering happens under the
    ///   store's lock of that key, after the stored registration is read again: however many
    ///   callers and processes start at once, the client is registered once.
    ///
    /// Tokens are kept per client id: a client registered anew (after its secret expired) signs in
    /// anew.
    ///
    /// - Parameters:
    ///   - client: What to register (its name keys the stored registration).
    ///   - initialAccessToken: The bearer token a server that does not register anyone who asks
    ///     wants (RFC 7591 §3, "initial access token"); never stored.
    /// - Returns: An authenticator for the registered client.
    /// - Throws: ``AuthError``: ``AuthError/Code/registrationFailed`` when the server has no
    ///   registration endpoint, or refuses (`invalid_redirect_uri`, `invalid_client_metadata`);
    ///   ``AuthError/Code/responseMalformed`` for an answer without a `client_id`;
    ///   ``AuthError/Code/tokenStoreFailed`` when the registration cannot be kept. Nothing is
    ///   stored then.
    public func registeringClient(_ client: ClientMetadata, initialAccessToken: String? = nil) async throws
        -> Authenticator
    {
        let metadata = try await metadata()
        var configuration = provider.configuration
        if let document = client.metadataDocument, metadata.clientIDMetadataDocumentSupported {
            try EndpointPolicy.validate(document)
            configuration.clientID = document.absoluteString
            configuration.clientSecret = nil
            configuration.clientAuthentication = ClientAuthentication.none
            self.client.logger.debug("using the client id metadata document as the client id")
            return try registered(as: configuration)
        }
        guard let endpoint = metadata.registrationEndpoint else {
            let issuer = Redaction.scrubURL(provider.tokenIssuer)
            throw AuthError(
                .registrationFailed,
                "the authorization server \(issuer) does not register clients: its metadata has no"
                    + " registration_endpoint (RFC 7591)"
                    + (client.metadataDocument == nil ? "" : " and does not take client id metadata documents"),
                hint: "register the client with the server's administrator, and give its id (`client_id`)",
                operation: .registration)
        }
        let registration = try await registration(client, at: endpoint, initialAccessToken: initialAccessToken)
        configuration.clientID = registration.clientID
        configuration.clientSecret = registration.clientSecret
        configuration.loopbackRedirectPort = registration.loopbackRedirectPort
        if let algorithm = registration.idTokenSignedResponseAlg {
            configuration.idTokenSigningAlgorithm = algorithm
        }
        if let method = registration.tokenEndpointAuthMethod.flatMap(ClientAuthentication.init(name:)) {
            configuration.clientAuthentication = method
        } else if registration.clientSecret == nil {
            configuration.clientAuthentication = ClientAuthentication.none
        }
        return try registered(as: configuration)
    }

    /// The stored registration of `client` at this provider, if there is one (expired or not):
    /// what ``registeringClient(_:initialAccessToken:)`` would reuse.
    public func storedRegistration(of client: ClientMetadata) async throws -> ClientRegistration? {
        let key = ClientRegistration.storeKey(
            issuer: provider.tokenIssuer, clientName: client.clientName, scope: client.scope)
        return try await storeOperation { try await store.load(key)?.clientRegistration }
    }

    /// The kept registration of `client` at `endpoint`, or a new one, under the store's lock.
    private func registration(
        _ client: ClientMetadata, at endpoint: URL, initialAccessToken: String?
    ) async throws -> ClientRegistration {
        let key = ClientRegistration.storeKey(
            issuer: provider.tokenIssuer, clientName: client.clientName, scope: client.scope)
        let store = store
        let exchange = self.client
        return try await storeOperation {
            try await store.lock.withLock(key, timeout: lockTimeout) {
                let now = exchange.clock.now()
                if let kept = try await store.load(key)?.clientRegistration, kept.endpoint == endpoint,
                    kept.requested == client.fingerprint
                {
                    guard kept.isExpired(at: now) else { return kept }
                    exchange.logger.info("the client registration expired; registering the client again")
                }
                // A registration kept before registrations were kept per scope set (under the
                // client name alone) is this one's when it asked for the same: kept under this
                // key, so that the sign-ins made under its client id go on.
                let unscoped = ClientRegistration.storeKey(issuer: key.issuer, clientName: client.clientName)
                if unscoped != key, let kept = try await store.load(unscoped)?.clientRegistration,
                    kept.endpoint == endpoint, kept.requested == client.fingerprint, !kept.isExpired(at: now)
                {
                    try await store.save(kept.record(at: now), for: key)
                    return kept
                }
                let registration = try await exchange.register(
                    client, at: endpoint, initialAccessToken: initialAccessToken)
                try await store.save(registration.record(at: now), for: key)
                exchange.logger.info(
                    "registered the client",
                    metadata: ["client_id": "\(TerminalText.sanitized(registration.clientID))"])
                return registration
            }
        }
    }

    /// An authenticator like this one for `configuration`'s client.
    private func registered(as configuration: ProviderConfiguration) throws -> Authenticator {
        Authenticator(
            provider: try type(of: provider).init(configuration: configuration), store: store, transport: transport,
            account: key.account, logger: client.logger, lockTimeout: lockTimeout, clock: client.clock)
    }
}
