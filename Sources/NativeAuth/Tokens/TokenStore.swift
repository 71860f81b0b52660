/// Keeps token sets between runs, under a ``TokenKey``.
///
/// NativeAuth ships ``MemoryTokenStore`` and ``FileTokenStore``; a Keychain or Secret Service store
/// conforms the same way.
///
/// ### Implementation requirements
/// - `save` replaces the stored set atomically: a reader sees the old set or the new one, never a
///   mixture, an empty file or nothing.
/// - A failure never loses what was stored before it.
/// - Throw ``AuthError`` with code ``AuthError/Code/tokenStoreFailed`` and a message that says
///   what to do; never put a token in it, and never log or print token values.
/// - ``withLock(_:timeout:_:)`` runs its body while no other holder of the same key's lock runs;
///   a store shared between processes locks across processes (``FileTokenStore`` does). The
///   default runs the body at once, which is right for a store used by one authenticator.
public protocol TokenStore: Sendable {
    /// The token set stored under `key`, or `nil` when there is none.
    func load(_ key: TokenKey) async throws -> TokenSet?
    /// Stores `tokens` under `key`, replacing what was there.
    func save(_ tokens: TokenSet, for key: TokenKey) async throws
    /// Removes what is stored under `key`; removing nothing is not an error.
    func remove(_ key: TokenKey) async throws
    /// Runs `body` holding the exclusive lock of `key`, waiting at most `timeout` for it.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/tokenStoreFailed`` when the wait runs out,
    ///   or whatever `body` throws.
    func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T
}

extension TokenStore {
    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await body()
    }
}
