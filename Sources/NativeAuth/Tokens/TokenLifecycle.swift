package import Foundation
package import HTTPTypes
internal import Logging
internal import NIOConcurrencyHelpers
internal import Tracing

/// The tokens of one sign-in over time: the copy in memory, the store, refreshing once however
/// many callers and processes need it, and sending requests with them.
///
/// Refreshing is a decision (``RefreshDecision``, pure) carried out here:
/// - concurrent callers share one refresh (``SingleFlight``);
/// - under the store's lock the stored set is loaded again, and a set another process refreshed
///   meanwhile is used instead of spending the refresh token;
/// - when the server refuses the refresh token, the store is read once more in case another
///   process won a rotation race; else the refresh token is removed and the person must sign in;
/// - any other failure (5xx, network, timeout, a malformed answer) leaves the store as it was.
package actor TokenLifecycle {
    package nonisolated let key: TokenKey
    package nonisolated let store: any TokenStore
    private nonisolated let lock: any TokenLock
    private nonisolated let client: ExchangeClient
    private nonisolated let lockTimeout: Duration
    private nonisolated let refreshes = SingleFlight<Refreshed>()
    /// Where the tokens are borrowed from instead of kept (a token agent); `nil`: the store keeps them.
    package nonisolated let source: (any TokenSource)?
    /// One request to ``source`` per kind of tokens asked for at once.
    private var borrowFlights: [String: SingleFlight<TokenSet>] = [:]
    /// The resources' tokens borrowed from ``source``, while valid.
    private var borrowedResources: [String: ResourceToken] = [:]
    /// One flight per resource and scope set (``accessToken(for:scopes:minimumValidity:)``).
    private var resourceFlights: [String: SingleFlight<ResourceToken>] = [:]
    /// One flight per credential name (``derivedCredential(named:minimumValidity:idToken:obtain:)``).
    private var derivedFlights: [String: SingleFlight<DerivedCredential>] = [:]
    /// Resources whose metadata named this issuer (``ProviderConfiguration/followsResourceMetadata``):
    /// requests under them get their own token.
    private var discoveredResources: [URL] = []
    private var cached: TokenSet?
    /// The store's revision of the key when ``cached`` was loaded or saved; `nil` when the store
    /// cannot tell (the copy in memory is then trusted until it expires).
    private var cachedRevision: TokenStoreRevision?
    /// A refreshed set whose save failed, and the stored set it replaces: while the store still
    /// holds that set, the refreshed one (whose refresh token is the live one) wins, and is saved again.
    private var unsaved: (tokens: TokenSet, replacing: TokenSet)?

    /// Why the ID token of the last refresh was refused, if it was.
    package private(set) var lastRefreshIDTokenError: AuthError?

    package init(
        client: ExchangeClient, store: any TokenStore, key: TokenKey, lockTimeout: Duration,
        source: (any TokenSource)? = nil
    ) {
        self.client = client
        self.source = source
        self.store = store
        self.lock = store.lock
        self.key = key
        self.lockTimeout = lockTimeout
    }

    private var now: Date { client.clock.now() }

    // MARK: - The set

    /// The set in memory while the store still holds it, else the stored one; `nil` when signed out.
    /// Borrowed from a ``TokenSource``: the set borrowed last, else the sign-in's, borrowed now.
    ///
    /// The store is asked for its revision of the key (cheap: one `lstat` for files) before the
    /// copy in memory is used, so that a logout or a new sign-in in another process counts at once.
    package func current() async throws -> TokenSet? {
        // Borrowed: what was borrowed last, else the sign-in's tokens, borrowed now.
        if let source {
            if let cached { return cached }
            return try await borrowed(from: source, minimumValidity: 60, idToken: false)
        }
        let revision = try? await store.revision(of: key)
        if let cached, revision == nil || revision == cachedRevision { return cached }
        let loaded = try await storeOperation { try await store.load(key) }
        cached = loaded
        cachedRevision = revision
        return loaded
    }

    /// Notes the store's revision after this process wrote `tokens` (or removed them).
    private func wrote(_ tokens: TokenSet?) async {
        cached = tokens
        cachedRevision = try? await store.revision(of: key)
    }

    /// Stores the set of a new sign-in and keeps it.
    package func adopt(_ tokens: TokenSet) async throws {
        try keepsItsOwnTokens()
        try await storeOperation { try await store.save(tokens, for: key) }
        await wrote(tokens)
    }

    /// Removes the stored set under the store's lock, so that a refresh running in another process
    /// finishes first and none starts from it afterwards; returns what was stored (a set a refresh
    /// elsewhere just wrote, for revocation), or the set in memory when the stored one is gone or
    /// unreadable.
    package func remove() async throws -> TokenSet? {
        try keepsItsOwnTokens()
        let store = store
        let key = key
        let removed = try await underLock {
            let stored = try? await store.load(key)
            try await store.remove(key)
            return stored ?? nil
        }
        let held = cached
        await wrote(nil)
        return removed ?? held
    }

    /// Changes the stored set in place, when there is one (the expiry hooks of NativeAuthTesting).
    package func modify(_ change: @Sendable (inout TokenSet) -> Void) async throws {
        guard var tokens = try await current() else { return }
        change(&tokens)
        try await adopt(tokens)
    }

    /// Marks the access token `token` expired in the stored set when the set still holds it (a
    /// server refused it), under the store's lock; the refresh token stays. The next access token is
    /// then refreshed, or a sign-in is asked for when there is no refresh token.
    ///
    /// - Returns: Whether it was marked: `false` when the store holds another access token (it was
    ///   refreshed meanwhile) or none.
    package func discard(accessToken token: String) async throws -> Bool {
        guard !token.isEmpty else { return false }
        if let source {
            try await refused(token, resource: nil, source: source)
            return true
        }
        let store = store
        let key = key
        let kept: TokenSet? = try await underLock {
            guard var stored = try await store.load(key) else { return nil }
            if ConstantTime.equals(stored.accessToken, token) {
                stored.expiresAt = Date(timeIntervalSince1970: 0)
            } else if let index = stored.resourceTokens.firstIndex(where: {
                ConstantTime.equals($0.accessToken, token)
            }) {
                stored.resourceTokens[index].expiresAt = Date(timeIntervalSince1970: 0)
            } else {
                return nil
            }
            try await store.save(stored, for: key)
            return stored
        }
        guard let kept else { return false }
        await wrote(kept)
        return true
    }

    /// Removes the kept tokens of `resource` (every scope set) from the stored set, under the
    /// store's lock; the sign-in and the other resources' tokens stay.
    ///
    /// - Returns: Whether any was removed.
    package func removeResourceTokens(for resource: URL) async throws -> Bool {
        if source != nil {
            let before = borrowedResources.count
            borrowedResources = borrowedResources.filter { $0.value.resource != resource }
            return borrowedResources.count != before
        }
        let store = store
        let key = key
        let kept: TokenSet? = try await underLock {
            guard var stored = try await store.load(key),
                stored.resourceTokens.contains(where: { $0.resource == resource })
            else { return nil }
            stored.resourceTokens.removeAll { $0.resource == resource }
            try await store.save(stored, for: key)
            return stored
        }
        guard let kept else { return false }
        await wrote(kept)
        return true
    }

    // MARK: - Refreshing

    /// An access token valid for at least `minimumValidity` seconds, refreshed when needed.
    package func accessToken(minimumValidity: TimeInterval) async throws -> String {
        try await validTokens(minimumValidity: minimumValidity).accessToken
    }

    /// The set, with an access token (and, with `idToken`, an ID token) valid for at least
    /// `minimumValidity` seconds, refreshed when needed.
    ///
    /// - Throws: With `idToken`, ``AuthError/Code/loginRequired`` when a refresh brought no new ID
    ///   token (or none that could be verified) and the one held expires: an expired ID token is
    ///   never handed out.
    package func validTokens(minimumValidity: TimeInterval, idToken: Bool = false) async throws -> TokenSet {
        if let source { return try await borrowed(from: source, minimumValidity: minimumValidity, idToken: idToken) }
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
        try keepsItsOwnTokens()
        guard let tokens = try await current() else { throw RefreshDecision.notSignedIn }
        return try await refresh(replacing: tokens, minimumValidity: nil)
    }

    /// Joins the refresh in flight, or starts one; uses the set in memory when it changed since
    /// `seen` and is good.
    private func refresh(
        replacing seen: TokenSet, minimumValidity: TimeInterval?, idToken: Bool = false
    ) async throws -> TokenSet {
        if case .use(let tokens) = RefreshDecision.decide(
            seen: seen, current: cached, now: now, minimumValidity: minimumValidity, idToken: idToken)
        {
            return tokens  // refreshed since the caller looked
        }
        let instruments = client.instruments
        return try await instruments.span("nativeauth.refresh") { span in
            do {
                let (refreshed, started) = try await refreshes.valueReportingStart {
                    try await self.refreshUnderLock(seen: seen, minimumValidity: minimumValidity, idToken: idToken)
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
    private struct Refreshed: Sendable {
        var tokens: TokenSet
        var byOtherProcess = false
    }

    private func refreshUnderLock(
        seen: TokenSet, minimumValidity: TimeInterval?, idToken: Bool
    ) async throws -> Refreshed {
        try await underLock {
            try await self.refreshLocked(seen: seen, minimumValidity: minimumValidity, idToken: idToken)
        }
    }

    /// Runs `body` under the store's lock for this key; the wait for the lock is a span
    /// (`nativeauth.lock_wait`) and a timer, which end when the lock is taken (or not).
    private func underLock<T: Sendable>(_ body: @Sendable @escaping () async throws -> T) async throws -> T {
        let wait = LockWait(client.instruments)
        return try await storeOperation {
            do {
                return try await lock.withLock(key, timeout: lockTimeout) {
                    wait?.taken()
                    return try await body()
                }
            } catch {
                wait?.ended(by: error)
                throw error
            }
        }
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
                    try await storeOperation { try await store.save(cleared, for: key) }
                    await wrote(cleared)
                    client.logger.info("refresh token refused; sign-in required")
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

    /// The stored set, read under the store's lock, with a refreshed set whose save failed saved now
    /// when the store still holds the set it replaces (its refresh token is the live one).
    ///
    /// - Throws: ``RefreshDecision/signedOutElsewhere`` when the store is empty: the person signed
    ///   out (in another process, perhaps), and the copy in memory must not sign them back in.
    private func storedUnderLock() async throws -> TokenSet {
        guard var stored = try await storeOperation({ try await store.load(key) }) else {
            unsaved = nil
            throw signedOutElsewhere()
        }
        if let pending = unsaved {
            if pending.replacing == stored {
                // The store did not change since the failed save: the refreshed set is the live one.
                // (Should this save fail too, the set stays pending.)
                try await storeOperation { try await store.save(pending.tokens, for: key) }
                stored = pending.tokens
            }
            unsaved = nil  // saved now, or the store moved on (another process, a new sign-in)
        }
        return stored
    }

    /// Forgets the set in memory after finding the store empty under the lock.
    private func signedOutElsewhere() -> AuthError {
        cached = nil
        client.logger.info("the stored tokens were removed; sign-in required")
        return RefreshDecision.signedOutElsewhere
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

    /// Stores a set whose refresh token a request just used (and the server may have rotated).
    ///
    /// It is kept in memory before the store is asked: when saving fails, the new refresh token
    /// (the old one is spent) still serves this process, and is saved again at the next refresh.
    private func keepRefreshed(_ tokens: TokenSet, replacing current: TokenSet) async throws {
        cached = tokens
        do {
            try await storeOperation { try await store.save(tokens, for: key) }
        } catch let error as AuthError {
            unsaved = (tokens, current)
            client.logger.warning(
                "refreshed tokens could not be stored; kept in memory", metadata: ["error": "\(error)"])
            var kept = error
            kept.message =
                "the refreshed tokens could not be stored (\(error.message)); this process keeps them in memory"
            kept.hint = error.hint ?? "fix the token store, or other processes will have to sign in again"
            throw kept
        }
        await wrote(tokens)
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

    // MARK: - Tokens per resource

    /// An access token for `resource` (RFC 8707) with `scopes` (`nil`: the sign-in's), valid for
    /// at least `minimumValidity` seconds: the one the set keeps, else a new one from its refresh
    /// token (a refresh with `resource`, RFC 8707 §2.2) or its renewable grant, asked for once
    /// however many callers and processes want the same resource and scopes.
    package func accessToken(for resource: URL, scopes: [String]?, minimumValidity: TimeInterval) async throws
        -> ResourceToken
    {
        if let source {
            return try await borrowed(
                from: source, resource: resource, scopes: scopes, minimumValidity: minimumValidity)
        }
        guard let current = try await current() else { throw RefreshDecision.notSignedIn }
        if let kept = current.resourceTokens.first(where: { $0.matches(resource, scopes: scopes) }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            return kept
        }
        let name = resource.absoluteString + " " + (scopes ?? []).sorted().joined(separator: " ")
        let flight = resourceFlights[name] ?? SingleFlight<ResourceToken>()
        resourceFlights[name] = flight
        return try await flight.value {
            try await self.resourceTokenUnderLock(resource, scopes: scopes, minimumValidity: minimumValidity)
        }
    }

    private func resourceTokenUnderLock(_ resource: URL, scopes: [String]?, minimumValidity: TimeInterval)
        async throws -> ResourceToken
    {
        try await underLock {
            try await self.resourceTokenLocked(resource, scopes: scopes, minimumValidity: minimumValidity)
        }
    }

    private func resourceTokenLocked(_ resource: URL, scopes: [String]?, minimumValidity: TimeInterval)
        async throws -> ResourceToken
    {
        var stored = try await storedUnderLock()
        if let kept = stored.resourceTokens.first(where: { $0.matches(resource, scopes: scopes) }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            client.logger.debug("using a resource token another process got")
            await wrote(stored)
            return kept
        }
        let refreshToken = stored.refreshToken
        guard stored.renewableGrant != nil || refreshToken != nil else {
            let name = Redaction.scrubURL(resource.absoluteString)
            throw AuthError(
                .loginRequired, "the sign-in has no refresh token to get a token for \(name) with",
                hint: "sign in again with the `resource` \(name)", operation: .refresh)
        }
        let metadata = try await client.metadata()
        try stored.checkIssued(for: "token_endpoint", at: metadata.tokenEndpoint, operation: .refresh)
        var answer: TokenSet
        let before = stored
        if let refreshToken, stored.renewableGrant == nil {
            do {
                answer = try await resourceRefresh(refreshToken, resource, scopes: scopes, stored, metadata)
            } catch let error as AuthError where error.isLoginRequired {
                // The same decision as a refresh's: another process may have rotated the refresh
                // token meanwhile (its new one is tried once, for the resource), or signed out.
                let reloaded = try await storeOperation { try await store.load(key) }
                switch RefreshDecision.afterRefusal(
                    of: refreshToken, reloaded: reloaded, now: now, minimumValidity: nil)
                {
                case .use(let newer), .retry(let newer, _):
                    guard let newerToken = newer.refreshToken else { throw error }
                    stored = newer
                    answer = try await resourceRefresh(newerToken, resource, scopes: scopes, stored, metadata)
                case .clear(let cleared):
                    try await storeOperation { try await store.save(cleared, for: key) }
                    await wrote(cleared)
                    client.logger.info("refresh token refused; sign-in required")
                    throw error
                case .signedOut:
                    throw signedOutElsewhere()
                }
            }
            if let rotated = answer.refreshToken {
                stored.refreshToken = rotated
                stored.refreshExpiresAt = answer.refreshExpiresAt
            }
        } else {
            let grant = try await Self.renewal(
                of: stored, scopes: scopes ?? stored.scopes, configuration: client.provider.configuration,
                client: client)
            answer = try await client.tokens(
                for: grant.forResources([resource]), metadata: metadata, requestedScopes: scopes ?? stored.scopes,
                dpop: stored.dpopKey)
        }
        let token = ResourceToken(resource: resource, requestedScopes: scopes ?? [], tokens: answer)
        stored.resourceTokens.removeAll { $0.matches(resource, scopes: scopes) }
        stored.resourceTokens.append(token)
        try await keepRefreshed(stored, replacing: before)
        client.logger.debug(
            "got an access token for a resource",
            metadata: ["resource": "\(Redaction.scrubURL(resource.absoluteString))"])
        return token
    }

    /// A refresh asking for `resource` (and `scopes`, narrowing): the answer as it came (its
    /// `refresh_token` only when the server rotated it).
    private func resourceRefresh(
        _ refreshToken: String, _ resource: URL, scopes: [String]?, _ current: TokenSet, _ metadata: ProviderMetadata
    ) async throws -> TokenSet {
        try await client.tokens(
            for: Grant.refreshToken(refreshToken, scopes: scopes ?? []).forResources([resource]), metadata: metadata,
            requestedScopes: scopes ?? current.scopes, dpop: current.dpopKey)
    }

    // MARK: - Credentials from other services

    /// The credential named `name` the set keeps while it is valid for `minimumValidity` seconds,
    /// else one `obtain` gets with the tokens (an ID token, with `idToken`, or an access token,
    /// valid for at least a minute, refreshed when needed), stored in the set: asked for once
    /// however many callers and processes want it, under the store's lock.
    package func derivedCredential(
        named name: String, minimumValidity: TimeInterval, idToken: Bool,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        if source != nil {
            // Nothing to keep it in: each borrower asks with the tokens it borrows.
            return try await obtain(try await validTokens(minimumValidity: 60, idToken: idToken))
        }
        guard let current = try await current() else { throw RefreshDecision.notSignedIn }
        if let kept = current.derivedCredentials.first(where: { $0.name == name }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            return kept
        }
        let flight = derivedFlights[name] ?? SingleFlight<DerivedCredential>()
        derivedFlights[name] = flight
        return try await flight.value {
            // The tokens first (a refresh takes the lock itself), then the credential under the lock.
            let tokens = try await self.validTokens(minimumValidity: 60, idToken: idToken)
            return try await self.derivedUnderLock(
                name, minimumValidity: minimumValidity, idToken: idToken, tokens: tokens, obtain: obtain)
        }
    }

    private func derivedUnderLock(
        _ name: String, minimumValidity: TimeInterval, idToken: Bool, tokens: TokenSet,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        try await underLock {
            try await self.derivedLocked(
                name, minimumValidity: minimumValidity, idToken: idToken, tokens: tokens, obtain: obtain)
        }
    }

    private func derivedLocked(
        _ name: String, minimumValidity: TimeInterval, idToken: Bool, tokens: TokenSet,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        var stored = try await storedUnderLock()
        if let kept = stored.derivedCredentials.first(where: { $0.name == name }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            client.logger.debug("using a credential another process got", metadata: ["credential": "\(name)"])
            await wrote(stored)
            return kept
        }
        // The stored tokens when another process refreshed them meanwhile (they are as good), else
        // the ones just made valid.
        let storedIsGood = idToken ? stored.idTokenIsValid(at: now) : stored.isValid(at: now)
        var credential = try await obtain(storedIsGood ? stored : tokens)
        credential.name = name
        guard credential.isValid(at: now, leeway: 0) else {
            throw AuthError(.responseMalformed, "the credential for \(name) came already expired")
        }
        stored.derivedCredentials.removeAll { $0.name == name }
        stored.derivedCredentials.append(credential)
        do {
            // No refresh token was spent: when the store fails, this caller still gets the
            // credential, and the next process asks for another.
            try await storeOperation { try await store.save(stored, for: key) }
            await wrote(stored)
        } catch {
            cached = stored
            client.logger.warning(
                "a credential from another service could not be stored; the next process asks again",
                metadata: ["credential": "\(name)", "error": "\(error)"])
        }
        client.logger.debug("got a credential from another service", metadata: ["credential": "\(name)"])
        return credential
    }

    // MARK: - Borrowed tokens

    /// Throws when the tokens are borrowed from a ``TokenSource``: signing in, out, and refreshing
    /// are the source's.
    package nonisolated func keepsItsOwnTokens() throws(AuthError) {
        guard source != nil else { return }
        throw AuthError(
            .configurationInvalid,
            "this authenticator borrows its tokens from a token agent, which signs in and refreshes them",
            hint: "sign in (or out) where the agent runs")
    }

    /// The sign-in's tokens from `source`, kept in memory while they are valid for
    /// `minimumValidity`; one request however many callers ask at once.
    private func borrowed(from source: any TokenSource, minimumValidity: TimeInterval, idToken: Bool) async throws
        -> TokenSet
    {
        if let cached, cached.isValid(at: now, leeway: minimumValidity),
            !idToken || cached.idTokenIsValid(at: now, leeway: minimumValidity)
        {
            return cached
        }
        let account = key.account
        let tokens = try await borrowFlight(idToken ? "id_token" : "").value {
            try await source.tokens(
                account: account, resource: nil, scopes: nil, minimumValidity: minimumValidity, idToken: idToken)
        }
        cached = tokens
        return tokens
    }

    /// A token for `resource` from `source`, kept in memory while it is valid for `minimumValidity`.
    private func borrowed(
        from source: any TokenSource, resource: URL, scopes: [String]?, minimumValidity: TimeInterval
    ) async throws -> ResourceToken {
        let name = resource.absoluteString + " " + (scopes ?? []).sorted().joined(separator: " ")
        if let kept = borrowedResources[name], kept.isValid(at: now, leeway: minimumValidity) { return kept }
        let account = key.account
        let tokens = try await borrowFlight(name).value {
            try await source.tokens(
                account: account, resource: resource, scopes: scopes, minimumValidity: minimumValidity, idToken: false)
        }
        let token = ResourceToken(resource: resource, requestedScopes: scopes ?? [], tokens: tokens)
        borrowedResources[name] = token
        return token
    }

    private func borrowFlight(_ name: String) -> SingleFlight<TokenSet> {
        if let flight = borrowFlights[name] { return flight }
        let flight = SingleFlight<TokenSet>()
        borrowFlights[name] = flight
        return flight
    }

    /// Forgets the refused `token` and tells `source`, so that the next borrow brings another.
    private func refused(_ token: String, resource: URL?, source: any TokenSource) async throws {
        if let held = cached, ConstantTime.equals(held.accessToken, token) { cached = nil }
        borrowedResources = borrowedResources.filter { !ConstantTime.equals($0.value.accessToken, token) }
        try await source.refused(account: key.account, accessToken: token, resource: resource)
    }

    /// The proof `request` goes with when its borrowed token is DPoP-bound: signed by the source,
    /// with the server's last nonce; `nil` for any other credential.
    private func borrowedProof(_ request: HTTPRequest, _ credential: AccessCredential) async throws -> String? {
        guard credential.provesThroughSource, let source, let url = request.url else { return nil }
        return try await source.proof(
            account: key.account, method: request.method.rawValue, url: url, accessToken: credential.accessToken,
            nonce: client.dpopNonces.nonce(for: url))
    }

    // MARK: - Sending

    /// Whose access token a request carries.
    package enum TokenTarget: Sendable, Equatable {
        /// The sign-in's own.
        case signIn
        /// A token for `resource` (RFC 8707) under the sign-in, with `scopes` (`nil`: the sign-in's).
        case resource(URL, scopes: [String]?)
    }

    /// Sends `request` with the access token of `target`, and acts on the answer as
    /// ``ResourceRetry`` decides: a refused DPoP proof gets one new proof, a refused token one new
    /// token (a refresh of the sign-in's, unless it changed meanwhile; another for a resource), a
    /// 401 that names the API's resource metadata is followed once when the configuration says so
    /// (``ProviderConfiguration/followsResourceMetadata``), and a step-up, a missing scope or a
    /// second refusal is an error. The one path of every request with a token.
    ///
    /// With `sink`, the body of a successful answer goes there as it arrives, and the returned body
    /// is empty; a success is never retried, so nothing is streamed twice.
    package func send(
        _ request: HTTPRequest, body: Data?, for target: TokenTarget = .signIn,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        let client = client
        return try await send(request, for: target) { authorized async throws(AuthError) in
            try await client.send(authorized, body: body, operation: .apiRequest, streamingTo: sink)
        } reading: {
            $0
        }
    }

    /// Sends `request` as ``send(_:body:for:streamingTo:)`` does, through `exchange` rather than
    /// the transport: for a stack that sends the request itself (an OpenAPI client's transport),
    /// whose body type is its own. `exchange` is given the request with its `Authorization` (and
    /// DPoP proof) and may be called again, for a retry; `read` gives the bytes of an answer that
    /// is acted on rather than returned (a refusal, for its error; a 401 before a retry).
    package func send<Body: Sendable>(
        _ request: HTTPRequest, for target: TokenTarget = .signIn,
        through exchange: @Sendable (HTTPRequest) async throws -> (HTTPResponse, Body),
        reading read: @Sendable (Body) async throws -> Data
    ) async throws -> (HTTPResponse, Body) {
        var target = target
        if target == .signIn, let url = request.url,
            let resource = discoveredResources.first(where: { ProtectedResourceMetadata.covers($0, url) })
        {
            target = .resource(resource, scopes: nil)
        }
        var attempt = ResourceRetry.Attempt(
            followsResourceMetadata: target == .signIn && client.provider.configuration.followsResourceMetadata)
        var credential = try await credential(for: target)
        var newProofPending = false
        while true {
            let authorized = try client.authorized(
                request, credential: credential, proof: try await borrowedProof(request, credential))
            let (response, body): (HTTPResponse, Body)
            if newProofPending {
                // The one retry with a new proof (and the server's nonce): a span of its own.
                newProofPending = false
                (response, body) = try await client.instruments.span("nativeauth.dpop_nonce_retry", kind: .client) {
                    $0.set(TraceSpan.Attribute.server, "resource")
                    return try await exchange(authorized)
                }
            } else {
                (response, body) = try await exchange(authorized)
            }
            let answer = try client.answer(to: response, of: request, credential: credential)
            let step = ResourceRetry.next(after: answer, attempt)
            if step == .deliver { return (response, body) }
            // Read whole: for the error it may become, and so that a retry does not leave it unread.
            let data = try await read(body)
            switch step {
            case .deliver:
                return (response, body)
            case .newProof:
                attempt.newProofSent = true
                newProofPending = true
                client.instruments.count(Instruments.Metric.dpopRetries, [("server", "resource")])
                client.logger.debug(
                    "the resource server refused the DPoP proof; sending a new one",
                    metadata: ["error": "\(answer.challenge?.error ?? "")"])
            case .newToken:
                attempt.newTokenSent = true
                guard try await renew(target, refused: credential.accessToken) else {
                    throw refusedToken(response, data, answer)
                }
                credential = try await self.credential(for: target)
            case .followResourceMetadata:
                target = .resource(try await followedResource(request, answer), scopes: nil)
                attempt = ResourceRetry.Attempt(followsResourceMetadata: false)
                credential = try await self.credential(for: target)
            case .fail(let failure):
                throw error(failure, response, data, answer)
            }
        }
    }

    /// The credential of `target`'s access token, valid for at least a minute.
    private func credential(for target: TokenTarget) async throws -> AccessCredential {
        var credential: AccessCredential
        switch target {
        case .signIn:
            credential = AccessCredential(try await validTokens(minimumValidity: 60))
        case .resource(let resource, let scopes):
            let token = try await accessToken(for: resource, scopes: scopes, minimumValidity: 60)
            credential = AccessCredential(token, key: cached?.dpopKey)
        }
        credential.provesThroughSource = source != nil && credential.isDPoPBound
        return credential
    }

    /// Makes the next ``credential(for:)`` of `target` another than the `refused` token: refreshes
    /// the sign-in (unless its token changed meanwhile), or drops the resource's token. `false`
    /// when nothing can give another (no refresh token, nor a grant to ask again).
    private func renew(_ target: TokenTarget, refused: String) async throws -> Bool {
        if let source {
            guard case .resource(let resource, _) = target else {
                try await self.refused(refused, resource: nil, source: source)
                return true
            }
            try await self.refused(refused, resource: resource, source: source)
            return true
        }
        switch target {
        case .signIn:
            guard let current = try await current(), current.accessToken == refused else { return true }
            // Without a refresh token (GitHub's non-expiring tokens) there is nothing to retry with,
            // unless the set's grant can be asked for again (client credentials).
            guard current.refreshToken != nil || current.renewableGrant != nil else { return false }
            _ = try await refresh(replacing: current, minimumValidity: nil)
        case .resource:
            _ = try await discard(accessToken: refused)
        }
        return true
    }

    /// The resource a 401 points to (RFC 9728), when its metadata names this issuer.
    ///
    /// - Throws: ``AuthError`` when the metadata cannot be had or is refused, or names another issuer.
    private func followedResource(_ request: HTTPRequest, _ answer: ResourceAnswer) async throws -> URL {
        let configuration = client.provider.configuration
        guard let url = request.url else { throw AuthError(.configurationInvalid, "the request has no URL") }
        let metadata = try await ProtectedResourceMetadata.discover(
            for: url, challenge: answer.challenge, transport: client.transport)
        func trimmed(_ url: URL) -> String {
            url.absoluteString.hasSuffix("/") ? String(url.absoluteString.dropLast()) : url.absoluteString
        }
        guard let issuer = configuration.issuer,
            metadata.authorizationServers.contains(where: { trimmed($0) == trimmed(issuer) })
        else {
            let servers = metadata.authorizationServers.map { Redaction.scrubURL($0.absoluteString) }
            throw AuthError(
                .invalidToken,
                "the API's tokens come from \(servers.isEmpty ? "no authorization server it names" : servers.joined(separator: ", ")),"
                    + " not from this configuration's issuer; no token was sent there",
                hint: "sign in at the authorization server the API names (RFC 9728 protected resource metadata)",
                operation: .apiRequest,
                status: 401)
        }
        if !discoveredResources.contains(metadata.resource) { discoveredResources.append(metadata.resource) }
        client.logger.debug(
            "following the API's protected resource metadata",
            metadata: ["resource": "\(Redaction.scrubURL(metadata.resource.absoluteString))"])
        return metadata.resource
    }

    /// The error a failed send ends with.
    private func error(
        _ failure: ResourceRetry.Failure, _ response: HTTPResponse, _ body: Data, _ answer: ResourceAnswer
    ) -> AuthError {
        switch failure {
        case .tokenRefused:
            return refusedToken(response, body, answer)
        case .stepUp(let options):
            return AuthError.stepUp(options, challenge: answer.challenge, status: Int(response.status.code))
        case .scopeMissing:
            var error = client.error(
                for: AuthFailure(operation: .apiRequest, response: response, body: body, challenge: answer.challenge))
            let named = (answer.challenge?.scope ?? "").split(separator: " ").map(String.init)
            if error.code == .insufficientScope, error.underlying == nil, !named.isEmpty {
                error.underlying = ScopeChallenge(scopes: named)
            }
            return error
        case .nonceMissing:
            return DPoPNonces.missingNonce(operation: .apiRequest, status: Int(response.status.code))
        }
    }

    /// A 401 as ``AuthError/Code/invalidToken``, in the provider's words when it has some.
    private func refusedToken(_ response: HTTPResponse, _ body: Data, _ answer: ResourceAnswer) -> AuthError {
        let error = client.error(
            for: AuthFailure(operation: .apiRequest, response: response, body: body, challenge: answer.challenge))
        guard error.code != .invalidToken else { return error }
        return AuthError(
            .invalidToken,
            "the server refused the access token",
            hint: "sign in again",
            operation: .apiRequest,
            status: 401,
            oauthError: error.oauthError
        )
    }
}

/// Runs a store operation, on the caller's actor; a failure that is not an ``AuthError`` becomes
/// ``AuthError/Code/tokenStoreFailed``.
nonisolated(nonsending) func storeOperation<T>(_ body: () async throws -> T) async throws -> T {
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

/// The wait for a store's lock, as a span and a timer (``Instruments/Metric/lockWait``): ended once,
/// when the lock is taken or the wait fails. `nil` when nothing is recorded.
private final class LockWait: Sendable {
    private let instruments: Instruments
    private let span: TraceSpan
    private let started: ContinuousClock.Instant
    private let ended = NIOLockedValueBox(false)

    init?(_ instruments: Instruments) {
        guard instruments.isRecording else { return nil }
        self.instruments = instruments
        span = instruments.startSpan("nativeauth.lock_wait")
        started = instruments.now
    }

    func taken() {
        end(outcome: "taken")
    }

    func ended(by error: any Error) {
        guard end(outcome: TracedFailure(error).code == AuthError.Code.cancelled.rawValue ? "cancelled" : "failed")
        else { return }
        span.failed(error)
        span.end()
    }

    /// Records the wait once; `true` for the call that did (a failure after the lock was taken is
    /// the body's, not the wait's).
    @discardableResult
    private func end(outcome: String) -> Bool {
        let first = ended.withLockedValue { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return false }
        instruments.time(Instruments.Metric.lockWait, [("outcome", outcome)], ContinuousClock.now - started)
        span.set(TraceSpan.Attribute.lockOutcome, outcome)
        if outcome == "taken" { span.end() }
        return true
    }
}
