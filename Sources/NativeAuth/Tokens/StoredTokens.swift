package import Foundation
package import HTTPTypes
internal import Logging

/// The holder that keeps a sign-in's tokens: the copy in memory, the store, refreshing once however
/// many callers and processes need it (``TokenHolder``).
///
/// Refreshing is a decision (``RefreshDecision``, pure) carried out here
/// (`StoredTokens+Refresh.swift`):
/// - concurrent callers share one refresh (``SingleFlight``);
/// - under the store's lock the stored set is loaded again, and a set another process refreshed
///   meanwhile is used instead of spending the refresh token;
/// - when the server refuses the refresh token, the store is read once more in case another
///   process won a rotation race; else the refresh token is removed and the person must sign in;
/// - any other failure (5xx, network, timeout, a malformed answer) leaves the store as it was.
///
/// Tokens per resource (`StoredTokens+Resources.swift`) and credentials of other services
/// (`StoredTokens+Derived.swift`) are kept in the set and got the same way: once, under the lock.
package actor StoredTokens: TokenHolder {
    package nonisolated let key: TokenKey
    package nonisolated let store: any TokenStore
    nonisolated let lock: any TokenLock
    nonisolated let client: ExchangeClient
    nonisolated let lockTimeout: Duration
    nonisolated let refreshes = SingleFlight<Refreshed>()
    /// One flight per resource and scope set (``resourceToken(for:scopes:minimumValidity:)``).
    var resourceFlights: [String: SingleFlight<ResourceToken>] = [:]
    /// One flight per credential name (``derivedCredential(named:minimumValidity:idToken:obtain:)``).
    var derivedFlights: [String: SingleFlight<DerivedCredential>] = [:]
    var cached: TokenSet?
    /// The store's revision of the key when ``cached`` was loaded or saved; `nil` when the store
    /// cannot tell (the copy in memory is then trusted until it expires).
    var cachedRevision: TokenStoreRevision?
    /// A refreshed set whose save failed, and the stored set it replaces: while the store still
    /// holds that set, the refreshed one (whose refresh token is the live one) wins, and is saved again.
    var unsaved: (tokens: TokenSet, replacing: TokenSet)?

    /// Why the ID token of the last refresh was refused, if it was.
    package internal(set) var lastRefreshIDTokenError: AuthError?

    package init(client: ExchangeClient, store: any TokenStore, key: TokenKey, lockTimeout: Duration) {
        self.client = client
        self.store = store
        self.lock = store.lock
        self.key = key
        self.lockTimeout = lockTimeout
    }

    package nonisolated var stored: StoredTokens? { self }

    package nonisolated func holding(account: String) -> any TokenHolder {
        StoredTokens(
            client: client, store: store, key: TokenKey(issuer: key.issuer, clientID: key.clientID, account: account),
            lockTimeout: lockTimeout)
    }

    var now: Date { client.clock.now() }

    // MARK: - The set

    /// The set in memory while the store still holds it, else the stored one; `nil` when signed out.
    ///
    /// The store is asked for its revision of the key (cheap: one `lstat` for files) before the
    /// copy in memory is used, so that a logout or a new sign-in in another process counts at once.
    package func current() async throws -> TokenSet? {
        let revision = try? await store.revision(of: key)
        if let cached, revision == nil || revision == cachedRevision { return cached }
        let loaded = try await storeOperation { try await store.load(key) }
        cached = loaded
        cachedRevision = revision
        return loaded
    }

    /// Notes the store's revision after this process wrote `tokens` (or removed them).
    func wrote(_ tokens: TokenSet?) async {
        cached = tokens
        cachedRevision = try? await store.revision(of: key)
    }

    /// Stores the set of a new sign-in and keeps it.
    package func adopt(_ tokens: TokenSet) async throws {
        try await storeOperation { try await store.save(tokens, for: key) }
        await wrote(tokens)
    }

    /// Removes the stored set under the store's lock, so that a refresh running in another process
    /// finishes first and none starts from it afterwards; returns what was stored (a set a refresh
    /// elsewhere just wrote, for revocation), or the set in memory when the stored one is gone or
    /// unreadable.
    package func remove() async throws -> TokenSet? {
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

    // MARK: - Credentials, for the sender

    package func credential(for target: TokenTarget, minimumValidity: TimeInterval) async throws
        -> AccessCredential
    {
        guard let resource = target.resource else {
            return AccessCredential(try await validTokens(minimumValidity: minimumValidity, idToken: false))
        }
        let token = try await resourceToken(for: resource, scopes: target.scopes, minimumValidity: minimumValidity)
        return AccessCredential(token, key: cached?.dpopKey)
    }

    /// `nil`: the key is in the set, and the exchange signs with it.
    package nonisolated func proof(for request: HTTPRequest, credential: AccessCredential, nonce: String?) -> String? {
        nil
    }

    /// Refreshes the sign-in (unless its token changed meanwhile), or drops the resource's token.
    package func renew(_ target: TokenTarget, refused: String) async throws -> Bool {
        guard target.resource == nil else {
            _ = try await discard(accessToken: refused)
            return true
        }
        guard let current = try await current(), current.accessToken == refused else { return true }
        // Without a refresh token (GitHub's non-expiring tokens) there is nothing to retry with,
        // unless the set's grant can be asked for again (client credentials).
        guard current.refreshToken != nil || current.renewableGrant != nil else { return false }
        _ = try await refresh(replacing: current, minimumValidity: nil)
        return true
    }

    // MARK: - Under the store's lock

    /// Runs `body` under the store's lock for this key; the wait for the lock is a span
    /// (`nativeauth.lock_wait`) and a timer, which end when the lock is taken (or not).
    func underLock<T: Sendable>(_ body: @Sendable @escaping () async throws -> T) async throws -> T {
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

    /// The stored set, read under the store's lock, with a refreshed set whose save failed saved now
    /// when the store still holds the set it replaces (its refresh token is the live one).
    ///
    /// - Throws: ``RefreshDecision/signedOutElsewhere`` when the store is empty: the person signed
    ///   out (in another process, perhaps), and the copy in memory must not sign them back in.
    func storedUnderLock() async throws -> TokenSet {
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
    func signedOutElsewhere() -> AuthError {
        cached = nil
        client.logger.info("the stored tokens were removed; sign-in required")
        return RefreshDecision.signedOutElsewhere
    }

    /// Stores a set whose refresh token a request just used (and the server may have rotated).
    ///
    /// It is kept in memory before the store is asked: when saving fails, the new refresh token
    /// (the old one is spent) still serves this process, and is saved again at the next refresh.
    func keepRefreshed(_ tokens: TokenSet, replacing current: TokenSet) async throws {
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

    /// Clears the refresh token after the server refused it, and notes that a sign-in is needed.
    func clearRefused(_ cleared: TokenSet) async throws {
        try await storeOperation { try await store.save(cleared, for: key) }
        await wrote(cleared)
        client.logger.info("refresh token refused; sign-in required")
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
