public import Foundation
internal import Logging

extension Authenticator {
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
        guard let tokens = try await currentTokens() else {
            throw AuthError(.loginRequired, "not signed in", hint: "sign in first")
        }
        if !tokens.accessToken.isEmpty, tokens.isValid(at: now(), leeway: minimumValidity) {
            return tokens.accessToken
        }
        guard tokens.refreshToken != nil else {
            throw AuthError(
                .loginRequired, "the access token has expired and there is no refresh token", hint: "sign in again")
        }
        return try await refresh(replacing: tokens, minimumValidity: minimumValidity).accessToken
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
        guard let tokens = try await currentTokens() else {
            throw AuthError(.loginRequired, "not signed in", hint: "sign in first")
        }
        return try await refresh(replacing: tokens, minimumValidity: nil)
    }

    /// The single-flight entry: joins a refresh in flight, or starts one. `minimumValidity` `nil`
    /// forces a token request unless the stored set changed since `seen`.
    func refresh(replacing seen: TokenSet, minimumValidity: TimeInterval?) async throws -> TokenSet {
        if let refreshTask { return try await refreshTask.value }
        if let cached, cached.accessToken != seen.accessToken, !cached.accessToken.isEmpty,
            cached.isValid(at: now(), leeway: minimumValidity ?? 0)
        {
            return cached  // refreshed since the caller looked
        }
        let task = Task { try await self.refreshUnderLock(seen: seen, minimumValidity: minimumValidity) }
        refreshTask = task
        defer { refreshTask = nil }
        return try await task.value
    }

    private func refreshUnderLock(seen: TokenSet, minimumValidity: TimeInterval?) async throws -> TokenSet {
        let store = store
        let key = key
        return try await mapStoreErrors {
            try await store.withLock(key, timeout: self.lockTimeout) {
                try await self.refreshLocked(seen: seen, minimumValidity: minimumValidity)
            }
        }
    }

    private func refreshLocked(seen: TokenSet, minimumValidity: TimeInterval?) async throws -> TokenSet {
        let stored = try await mapStoreErrors { try await store.load(key) }
        guard let current = stored ?? cached else {
            throw AuthError(.loginRequired, "not signed in", hint: "sign in first")
        }
        if current.accessToken != seen.accessToken, !current.accessToken.isEmpty,
            current.isValid(at: now(), leeway: minimumValidity ?? 0)
        {
            logger.debug("using tokens another process refreshed")
            cached = current
            return current
        }
        guard let refreshToken = current.refreshToken else {
            throw AuthError(.loginRequired, "there is no refresh token", hint: "sign in again")
        }
        do {
            return try await sendRefresh(current, refreshToken: refreshToken)
        } catch let error as AuthError where error.isLoginRequired {
            // Lost a rotation race? Another process may have stored a newer refresh token.
            let reloaded = try await mapStoreErrors { try await store.load(key) }
            if let reloaded, let newer = reloaded.refreshToken, newer != refreshToken {
                logger.debug("refresh token rotated by another process; retrying with the stored one")
                if !reloaded.accessToken.isEmpty, reloaded.isValid(at: now(), leeway: minimumValidity ?? 0) {
                    cached = reloaded
                    return reloaded
                }
                return try await sendRefresh(reloaded, refreshToken: newer)
            }
            var cleared = reloaded ?? current
            cleared.refreshToken = nil
            try await mapStoreErrors { try await store.save(cleared, for: key) }
            cached = cleared
            logger.info("refresh token refused; sign-in required")
            throw error
        }
    }

    private func sendRefresh(_ current: TokenSet, refreshToken: String) async throws -> TokenSet {
        let metadata = try await metadata()
        var request = TokenRequest(
            url: metadata.tokenEndpoint,
            operation: .refresh,
            form: [FormField("grant_type", "refresh_token"), FormField("refresh_token", refreshToken)]
        )
        provider.prepareTokenRequest(&request, metadata: metadata)
        var tokens = try await sendTokenRequest(request, requestedScopes: current.scopes, previous: current)
        // A new ID token is validated without a nonce, and must name the same subject (OIDC Core
        // §12.2). A bad one is not stored:
        // the new access and refresh tokens are (the old refresh token may be spent), with the
        // previous ID token, and the failure is reported.
        lastRefreshIDTokenError = nil
        if tokens.idToken != nil, tokens.idToken != current.idToken {
            do {
                try await validateIDToken(
                    of: tokens, metadata: metadata, nonce: nil, maxAge: nil, previousSubject: current.subject)
            } catch let error as AuthError {
                lastRefreshIDTokenError = error
                tokens.idToken = current.idToken
                tokens.subject = current.subject
                tokens.displayName = current.displayName
            }
        }
        try await mapStoreErrors { try await store.save(tokens, for: key) }
        cached = tokens
        logger.debug("tokens refreshed")
        return tokens
    }

    /// Marks the access token as expired (in memory and in the store), so that the next
    /// ``accessToken(minimumValidity:)`` refreshes: for testing an app's own refresh paths.
    public func expireAccessToken() async throws {
        guard var tokens = try await currentTokens() else { return }
        tokens.expiresAt = Date(timeIntervalSince1970: 0)
        try await mapStoreErrors { try await store.save(tokens, for: key) }
        cached = tokens
    }

    /// Replaces the refresh token with one the server will refuse, so that the next refresh fails
    /// with ``AuthError/Code/loginRequired``: for testing an app's sign-in-again path.
    public func expireRefreshToken() async throws {
        guard var tokens = try await currentTokens(), tokens.refreshToken != nil else { return }
        tokens.refreshToken = "nativeauth-expired-refresh-token"
        try await mapStoreErrors { try await store.save(tokens, for: key) }
        cached = tokens
    }

    func mapStoreErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AuthError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw AuthError(.tokenStoreFailed, "the token store failed (\(type(of: error)))", underlying: error)
        }
    }
}
