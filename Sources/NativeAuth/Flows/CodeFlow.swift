internal import Foundation
internal import Logging

/// One sign-in with the authorization code flow and PKCE (RFC 6749 §4.1, RFC 7636, RFC 8252)
/// through a presenter: the authorization request, its callback, the code exchange and the ID
/// token's validation. It returns the tokens; storing them is the caller's part.
package struct CodeFlow: Sendable {
    let client: ExchangeClient

    package init(client: ExchangeClient) {
        self.client = client
    }

    /// Runs the sign-in.
    ///
    /// Loads the metadata, builds the authorization request (PKCE S256, `state`, `nonce` when
    /// `openid` is asked for, the provider's extra parameters), presents it, checks the callback
    /// (`state` in constant time, `error`, RFC 9207 `iss`), exchanges the code, and validates the
    /// ID token, whose claims name the account.
    ///
    /// - Parameters:
    ///   - presenter: How the person gets to the authorization page.
    ///   - scopes: The scopes to ask for.
    /// - Returns: The new tokens.
    package func signIn(presenter: any UserAgentPresenter, scopes: [String], options: LoginOptions = LoginOptions())
        async throws -> NewSignIn
    {
        let provider = client.provider
        try client.requireClientID()
        let metadata = try await client.metadata()
        if provider.configuration.requiresAnnouncedPKCE,
            !(metadata.codeChallengeMethodsSupported ?? []).contains("S256")
        {
            // The MCP authorization spec's MUST, and `require_pkce`'s: not used, rather than
            // trusted to check a verifier it does not say it checks.
            throw AuthError(
                .configurationInvalid,
                metadata.codeChallengeMethodsSupported == nil
                    ? "the provider's metadata does not announce PKCE (code_challenge_methods_supported)"
                    : "the provider's metadata does not announce PKCE with S256 (code_challenge_methods_supported)",
                hint: "the server cannot be used without PKCE here: ask its administrator to announce S256",
                field: Setting.requirePKCE.key
            )
        }
        if metadata.codeChallengeMethodsSupported == nil {
            // S256 is sent anyway; a server that ignores it leaves the code unprotected (RFC 9700 §2.1.1).
            client.logger.warning(
                "the provider does not announce PKCE; S256 is sent, but whether it is enforced is unknown")
        }
        // A key of this sign-in's own, its thumbprint on the authorization request (RFC 9449 §10):
        // the code is redeemed only with a proof signed with it.
        let dpop = try client.newDPoPKey(metadata)
        let session = try await presenter.beginSession()
        // The caller's options win over the provider's parameters of the same names.
        var asked = options.parameters
        if let dpop { asked.append(FormField("dpop_jkt", dpop.thumbprint)) }
        let extraParameters = Self.askingConsentForOfflineAccess(
            provider.authorizationParameters(
                for: AuthorizationRequest.Parameters(scopes: scopes, redirectURI: session.redirectURI)
            ).filter { field in !asked.contains { $0.name == field.name } } + asked,
            scopes: scopes, provider: provider)
        var request = AuthorizationRequest(
            metadata: metadata,
            clientID: provider.configuration.clientID,
            redirectURI: session.redirectURI,
            scopes: scopes,
            resources: provider.configuration.resources,
            extraParameters: extraParameters
        )
        let response: AuthorizationResponse
        do {
            if let endpoint = try Self.pushEndpoint(
                metadata, policy: provider.configuration.pushedAuthorizationRequests)
            {
                // RFC 9126: the parameters go to the server; the browser gets a reference to them.
                // With DPoP, the push carries a proof of the sign-in's key (RFC 9449 §10.1), which
                // binds the code as `dpop_jkt` would: a server that checks proofs there takes it.
                let parameters = dpop == nil ? request.parameters : request.parameters.filter { $0.name != "dpop_jkt" }
                let pushed = try await client.push(parameters, to: endpoint, metadata: metadata, dpop: dpop)
                request = request.byReference(
                    pushed, authorizationEndpoint: metadata.authorizationEndpoint,
                    clientID: provider.configuration.clientID)
                client.logger.debug("authorization request pushed")
            }
            client.logger.debug(
                "authorization request ready", metadata: ["redirect_uri": "\(session.redirectURI.absoluteString)"])
            let ready = request
            response = try await session.authorize(request.url) { callback in ready.disposition(of: callback) }
        } catch {
            await session.close()
            client.logger.info(
                "sign-in did not complete", metadata: ["code": "\((error as? AuthError)?.code.rawValue ?? "error")"])
            throw Self.explainingExpiry(Self.mapped(error, by: provider), of: request, now: client.clock.now())
        }
        let grant = Grant.authorizationCode(
            response.code, redirectURI: request.redirectURI, codeVerifier: request.pkce.verifier)
        let tokens = try await client.tokens(for: grant, metadata: metadata, requestedScopes: scopes, dpop: dpop)
        // A nonce was sent because `openid` was asked for, to an OpenID provider (one that publishes
        // signing keys; GitHub publishes none): an answer that grants `openid` without an ID token
        // would sign in someone nothing identifies, and skip the nonce's check. One that grants
        // less (its `scope` without `openid`, RFC 6749 §3.3) owes none.
        if request.nonce != nil, metadata.jwksURI != nil, tokens.idToken == nil, tokens.scopes.contains("openid"),
            !provider.idTokenValidation.allowMissingIDToken
        {
            throw AuthError(
                .idTokenInvalid,
                "the token response has no ID token, although the scope openid was asked for",
                hint: "check that the client may use OpenID Connect at the provider",
                operation: .tokenExchange
            )
        }
        let (verified, claims) = try await IDTokenValidator.verified(
            tokens,
            metadata: metadata,
            client: client,
            nonce: request.nonce,
            maxAge: extraParameters.first(named: "max_age").flatMap { Int($0) },
            acrValues: options.acrValues
        )
        return NewSignIn(verified, claims: claims)
    }

    /// Where to push the authorization request (RFC 9126), or `nil` to send it in the URL.
    ///
    /// - Throws: ``AuthError`` when pushing is required (by the configuration or the server's
    ///   `require_pushed_authorization_requests`) and the metadata names no endpoint for it.
    /// `parameters` with `consent` in `prompt` when the sign-in asks for `offline_access` and the
    /// configuration (else the provider) wants it (OIDC Core §11); a `prompt` that has it already
    /// (Google's) is left alone, and so is `prompt=none`, which cannot show a page.
    package static func askingConsentForOfflineAccess(
        _ parameters: [FormField],
        scopes: [String],
        provider: any AuthProvider
    ) -> [FormField] {
        let wanted =
            provider.configuration.offlineAccessConsent.map { $0 == .on } ?? provider.offlineAccessNeedsConsent
        guard wanted, scopes.contains("offline_access") else { return parameters }
        var parameters = parameters
        guard let index = parameters.firstIndex(where: { $0.name == "prompt" }) else {
            return parameters + [FormField("prompt", "consent")]
        }
        let values = parameters[index].value.split(separator: " ")
        guard !values.contains("consent"), !values.contains("none") else { return parameters }
        parameters[index] = FormField("prompt", parameters[index].value + " consent")
        return parameters
    }

    static func pushEndpoint(_ metadata: ProviderMetadata, policy: FeaturePolicy) throws(AuthError) -> URL? {
        let required = policy == .required || metadata.requiresPushedAuthorizationRequests
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
            guard !required else {
                throw AuthError(
                    .configurationInvalid,
                    "pushed authorization requests are required"
                        + (metadata.requiresPushedAuthorizationRequests ? " by the server" : "")
                        + ", and its metadata names no pushed_authorization_request_endpoint",
                    hint: "set pushed_authorization_requests to auto, or check the issuer",
                    operation: .pushedAuthorization, field: Setting.pushedAuthorizationRequests.key)
            }
            return nil
        }
        return policy == .disabled && !required ? nil : endpoint
    }

    /// An authorization error the callback carried (`error=access_denied`, say), in the provider's
    /// words when its error mapper has any: Auth0 refuses an unknown audience there.
    static func mapped(_ error: any Error, by provider: any AuthProvider) -> any Error {
        guard let error = error as? AuthError, error.code == .authorizationFailed, error.operation == .authorization,
            let code = error.oauthError
        else { return error }
        var failure = AuthFailure(operation: .authorization)
        failure.oauthError = OAuthErrorResponse(
            error: code, errorDescription: error.oauthErrorDescription, errorURI: error.oauthErrorURI)
        return provider.errorMapper.map(failure) ?? error
    }

    /// A failed sign-in's error, saying so when the pushed request's reference had expired by then.
    static func explainingExpiry(_ error: any Error, of request: AuthorizationRequest, now: Date) -> any Error {
        guard var error = error as? AuthError, error.code == .authorizationFailed,
            let expiry = request.pushedRequestExpiresAt, now >= expiry
        else { return error }
        error.message += "; the pushed authorization request had expired (RFC 9126 request_uri) before the sign-in"
        error.message += " was finished"
        error.hint = "sign in again, and finish within the time the server allows"
        return error
    }
}
