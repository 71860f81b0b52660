internal import HTTPTypes
internal import Logging

// Signing in and out: the flows' tokens, identified and kept.
extension Authenticator {
    /// Signs in with `method` and stores the tokens: the one sign-in of an authenticator.
    ///
    /// ```swift
    /// try await auth.login(.browser(LoopbackPresenter(), options: LoginOptions(prompt: .login)))
    /// try await auth.login(.device(), scopes: ["openid", "offline_access"])
    /// try await auth.login(.clientCredentials)
    /// ```
    ///
    /// - Parameters:
    ///   - method: How (``SignInMethod``: a browser, a device code, the client's credentials, a
    ///     workload's token).
    ///   - scopes: The scopes to ask for; default: the configuration's (without `openid` for a
    ///     client or a workload, which has no person to identify).
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``; nothing is stored unless every step succeeded. An authenticator that
    ///   borrows its tokens throws ``AuthError/Code/configurationInvalid``: the agent signs in.
    @discardableResult
    public func login(_ method: SignInMethod, scopes: [String]? = nil) async throws -> TokenSet {
        let signIn = try await newSignIn(method, scopes: scopes)
        let message: Logger.Message =
            switch method.kind {
            case .browser: "signed in"
            case .device: "signed in with a device code"
            case .clientCredentials: "signed in as the client"
            case .workload: "signed in as a workload"
            }
        return try await adopt(try await identified(signIn).tokens, message)
    }

    /// The tokens of a sign-in with `method`, not stored yet.
    func newSignIn(_ method: SignInMethod, scopes: [String]?) async throws -> NewSignIn {
        _ = try holder.owner()
        switch method.kind {
        case .browser(let presenter, let options):
            return try await CodeFlow(client: client).signIn(
                presenter: presenter, scopes: scopes ?? provider.configuration.scopes, options: options)
        case .device(let display):
            return try await DeviceFlow(client: client).signIn(
                display: display, scopes: scopes ?? provider.configuration.scopes)
        case .clientCredentials:
            return try await signInAsClient(scopes: scopes, kind: .clientCredentials) { .clientCredentials(scopes: $0) }
        case .workload:
            guard let workload = provider.configuration.workload else {
                return try await newSignIn(.clientCredentials, scopes: scopes)
            }
            return try await signInAsClient(scopes: scopes, kind: workload.kind) { scopes in
                try await workload.grant(scopes: scopes, transport: client.transport)
            }
        }
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

    /// Stores the tokens of a new sign-in, identified already, and notes who signed in.
    func adopt(_ tokens: TokenSet, _ message: Logger.Message) async throws -> TokenSet {
        try await holder.owner().adopt(tokens)
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
        let owner = try holder.owner()
        return try await LogoutFlow(client: client).signOut(
            presenter: presenter, endingSessionWhenSignedOut: endingSessionWhenSignedOut
        ) {
            try await owner.remove()
        }
    }

    // MARK: - The sign-ins of earlier versions

    /// Signs the person in through `presenter` and stores the tokens.
    @available(*, deprecated, message: "use login(.browser(presenter, options:), scopes:)")
    @discardableResult
    public func login(
        presenter: any UserAgentPresenter, scopes: [String]? = nil, options: LoginOptions = LoginOptions()
    ) async throws -> TokenSet {
        try await login(.browser(presenter, options: options), scopes: scopes)
    }

    /// Signs in with the device authorization grant (RFC 8628).
    @available(*, deprecated, message: "use login(.device(display), scopes:)")
    @discardableResult
    public func loginWithDevice(
        display: any DeviceCodeDisplay = TerminalDeviceCodeDisplay(), scopes: [String]? = nil
    ) async throws -> TokenSet {
        try await login(.device(display), scopes: scopes)
    }

    /// Gets tokens for the client itself with the client credentials grant (RFC 6749 §4.4).
    @available(*, deprecated, message: "use login(.clientCredentials, scopes:)")
    @discardableResult
    public func loginWithClientCredentials(scopes: [String]? = nil) async throws -> TokenSet {
        try await login(.clientCredentials, scopes: scopes)
    }

    /// Gets tokens for a workload from a token of its own (the configuration's ``WorkloadGrant``).
    @available(*, deprecated, message: "use login(.workload, scopes:)")
    @discardableResult
    public func loginAsWorkload(scopes: [String]? = nil) async throws -> TokenSet {
        try await login(.workload, scopes: scopes)
    }
}
