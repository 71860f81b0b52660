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
public protocol TokenStore: Sendable {
    /// The token set stored under `key`, or `nil` when there is none.
    func load(_ key: TokenKey) async throws -> TokenSet?
    /// Stores `tokens` under `key`, replacing what was there.
    func save(_ tokens: TokenSet, for key: TokenKey) async throws
    /// Removes what is stored under `key`; removing nothing is not an error.
    func remove(_ key: TokenKey) async throws
}
