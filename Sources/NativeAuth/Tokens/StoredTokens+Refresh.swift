package import Foundation
internal import Logging
internal import Tracing

// Refreshing the stored tokens: once however many callers and processes need it, under the store's
// lock, as ``RefreshDecision`` decides.
extension StoredTokens {
    /// The set, with an access token (and, with `idToken`, an ID token) valid for at least
    /// `minimumValidity` seconds, refreshed when needed.
    ///
    /// - Throws: With `idToken`, ``AuthError/Code/loginRequired`` when a refresh brought no new ID
    ///   token (or none that could be verified) and the one held expires: an expired ID token is
    ///   never handed out.
    package func validTokens(minimumValidity: TimeInterval, idToken: Bool) async throws -> TokenSet {
        let current = try await current()
        if idToken, let current, current.idToken == nil {
            // A refresh brings no ID token to a sign-in that got none (no `openid`, or a provider
            // that issues none): say so instead of spending one.
            throw AuthError(
                .loginRequired, "the sign-in holds no ID token",
                hint: "sign in with the openid scope, from an OpenID provider")
        }
        let tokens: TokenSet
        switch RefreshDecision.decide(
            seen: nil, current: current, now: now, minimumValidity: minimumValidity, idToken: idToken)
        {
        case .use(let held):
            return held
        case .signIn(let error):
            throw error
        case .refresh(let held, _), .renew(let held):
            tokens = try await refresh(replacing: held, minimumValidity: minimumValidity, idToken: idToken)
        }
        guard !idToken || tokens.idTokenIsValid(at: now, leeway: minimumValidity) else {
            throw AuthError(
                .loginRequired,
                tokens.idToken == nil
                    ? "the sign-in holds no ID token"
                    : "the ID token expires, and the refresh brought no new one (or none that could be verified)",
                hint: "sign in again for a new ID token", operation: .refresh,
                underlying: lastRefreshIDTokenError)
        }
        return tokens
    }

    /// Refreshes now, whether or not the tokens expire soon.
    package func refresh() async throws -> TokenSet {
        guard let tokens = try await current() else { throw RefreshDecision.notSignedIn }
        return try await refresh(replacing: tokens, minimumValidity: nil)
    }

    /// Joins the refresh in flight, or starts one; uses the set in memory when it changed since
    /// `seen` and is good.
    func refresh(replacing seen: TokenSet, minimumValidity: TimeInterval?, idToken: Bool = false) async throws
        -> TokenSet
    {
        if case .use(let tokens) = RefreshDecision.decide(
            seen: seen, current: cached, now: now, minimumValidity: minimumValidity, idToken: idToken)
        {
            return tokens  // refreshed since the caller looked
        }
        let instruments = client.instruments
        return try await instruments.span("nativeauth.refresh") { span in
            do {
                let (refreshed, started) = try await refreshes.valueReportingStart {
                    try await self.underLock {
                        try await self.refreshLocked(seen: seen, minimumValidity: minimumValidity, idToken: idToken)
                    }
                }
                let outcome = started ? (refreshed.byOtherProcess ? "other_process" : "refreshed") : "joined"
                span.set(TraceSpan.Attribute.refreshOutcome, outcome)
                span.set(TraceSpan.Attribute.waited, outcome != "refreshed")
                instruments.count(Instruments.Metric.refreshes, [("outcome", outcome)])
                return refreshed.tokens
            } catch {
                instruments.count(Instruments.Metric.refreshes, [("outcome", "failed")])
                throw error
            }
        }
    }

    /// A refresh's result: the tokens, and whether another process had refreshed them already.
    struct Refreshed: Sendable {
        var tokens: TokenSet
        var byOtherProcess = false
    }

    private func refreshLocked(seen: TokenSet, minimumValidity: TimeInterval?, idToken: Bool) async throws
        -> Refreshed
    {
        // Only the store counts under the lock: an empty store means the person signed out (in
        // another process, perhaps), and the copy in memory must not sign them back in.
        let stored = try await storedUnderLock()
        switch RefreshDecision.decide(
            seen: seen, current: stored, now: now, minimumValidity: minimumValidity, idToken: idToken)
        {
        case .use(let tokens):
            client.logger.debug("using tokens another process refreshed")
            await wrote(tokens)
            return Refreshed(tokens: tokens, byOtherProcess: true)
        case .signIn(let error):
            throw error
        case .renew(let current):
            recordLifetimeLeft(current)
            return Refreshed(tokens: try await sendRenewal(current))
        case .refresh(let current, let refreshToken):
            recordLifetimeLeft(current)
            do {
                return Refreshed(tokens: try await sendRefresh(current, refreshToken: refreshToken))
            } catch let error as AuthError where error.isLoginRequired {
                let reloaded = try await storeOperation { try await store.load(key) }
                switch RefreshDecision.afterRefusal(
                    of: refreshToken, reloaded: reloaded, now: now, minimumValidity: minimumValidity, idToken: idToken)
                {
                case .use(let tokens):
                    client.logger.debug("another process refreshed with a rotated refresh token; using its tokens")
                    await wrote(tokens)
                    return Refreshed(tokens: tokens, byOtherProcess: true)
                case .retry(let tokens, let newer):
                    client.logger.debug("refresh token rotated by another process; retrying with the stored one")
                    return Refreshed(tokens: try await sendRefresh(tokens, refreshToken: newer))
                case .clear(let cleared):
                    try await clearRefused(cleared)
                    throw error
                case .signedOut:
                    throw signedOutElsewhere()
                }
            }
        }
    }

    /// Records how long the access token being replaced had left (negative: expired already).
    private func recordLifetimeLeft(_ current: TokenSet) {
        guard let expiresAt = current.expiresAt else { return }
        client.instruments.record(Instruments.Metric.lifetimeLeft, [], expiresAt.timeIntervalSince(now))
    }

    /// Sends one refresh request and stores its answer.
    ///
    /// A new ID token is validated without a nonce, and must name the same issuer, subject and
    /// audience (OIDC Core §12.2). When it names someone else, the whole answer is discarded: the
    /// stored set keeps its access token, loses its refresh token (which the server may have spent),
    /// and the person must sign in. Any other failure of the ID token (clock skew, a key that cannot
    /// be loaded) keeps the new access and refresh tokens with the previous ID token, and the
    /// failure in ``lastRefreshIDTokenError``.
    private func sendRefresh(_ current: TokenSet, refreshToken: String) async throws -> TokenSet {
        let metadata = try await client.metadata()
        // Not to a token endpoint (or keys) other than the ones the tokens were issued for.
        try current.checkIssued(for: "token_endpoint", at: metadata.tokenEndpoint, operation: .refresh)
        try current.checkIssued(for: "jwks_uri", at: metadata.jwksURI, operation: .refresh)
        var tokens = try await client.tokens(
            for: .refreshToken(refreshToken), metadata: metadata, requestedScopes: current.scopes, previous: current,
            dpop: current.dpopKey)
        tokens.endpoints = TokenSet.endpoints(of: metadata)
        tokens.resourceTokens = current.resourceTokens
        tokens.derivedCredentials = current.derivedCredentials
        lastRefreshIDTokenError = nil
        if tokens.idToken != nil, tokens.idToken != current.idToken {
            do {
                tokens = try await IDTokenValidator.validated(
                    tokens, metadata: metadata, client: client, nonce: nil, previousSubject: current.subject)
            } catch  where error.isIdentityChange {
                var kept = current
                kept.refreshToken = nil
                try await storeOperation { try await store.save(kept, for: key) }
                await wrote(kept)
                lastRefreshIDTokenError = error
                throw AuthError(
                    .loginRequired,
                    "the refreshed tokens were issued for another account (\(error.message)); they were discarded",
                    hint: "sign in again",
                    operation: .refresh,
                    underlying: error
                )
            } catch {
                lastRefreshIDTokenError = error
                tokens.idToken = current.idToken
                tokens.subject = current.subject
                tokens.displayName = current.displayName
            }
        }
        try await keepRefreshed(tokens, replacing: current)
        client.logger.debug("tokens refreshed")
        return tokens
    }

    /// Asks for a renewable set's grant again with the scopes it holds, and stores the answer:
    /// client credentials (RFC 6749 §4.4 issues no refresh token), or the configuration's
    /// ``WorkloadGrant`` with its subject token read again now. A refusal (`invalid_client`: the
    /// secret or key was revoked; `invalid_grant`: the subject token is no good) leaves the store
    /// as it was.
    private func sendRenewal(_ current: TokenSet) async throws -> TokenSet {
        let metadata = try await client.metadata()
        try current.checkIssued(for: "token_endpoint", at: metadata.tokenEndpoint, operation: .refresh)
        let grant = try await Self.renewal(
            of: current, scopes: current.scopes, configuration: client.provider.configuration, client: client)
        var tokens = try await client.tokens(
            for: grant, metadata: metadata, requestedScopes: current.scopes, dpop: current.dpopKey)
        tokens.endpoints = TokenSet.endpoints(of: metadata)
        tokens.resourceTokens = current.resourceTokens
        tokens.derivedCredentials = current.derivedCredentials
        tokens.renewableGrant = current.renewableGrant
        tokens.subject = current.subject
        tokens.displayName = current.displayName
        tokens.idToken = nil
        try await storeOperation { try await store.save(tokens, for: key) }
        await wrote(tokens)
        client.logger.debug("client credentials renewed")
        return tokens
    }

    /// The grant that renews `current`, asking for `scopes`.
    static func renewal(
        of current: TokenSet, scopes: [String], configuration: ProviderConfiguration, client: ExchangeClient
    ) async throws(AuthError) -> Grant {
        let kind = current.renewableGrant
        if kind == .clientCredentials { return .clientCredentials(scopes: scopes) }
        guard let workload = configuration.workload, workload.kind == kind else {
            throw AuthError(
                .loginRequired,
                "the tokens came from a \(kind?.rawValue ?? "sign-in") grant, and this configuration has no"
                    + " subject token to renew them with",
                hint:
                    "give the subject token as at login (`subject_token_file`, `subject_token_command`), or sign in again"
            )
        }
        return try await workload.grant(scopes: scopes, transport: client.transport)
    }
}
