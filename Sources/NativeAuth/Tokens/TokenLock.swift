/// How far a ``TokenLock`` reaches: which holders of the same key it keeps apart.
public enum TokenLockScope: Int, Sendable, Comparable, CustomStringConvertible {
    /// The holders in this process only. Processes that share the store can refresh at the same
    /// time and spend a rotated refresh token twice.
    case process
    /// Every process on this machine that shares the store (``FileTokenStore``'s `flock`).
    case machine
    /// Every process on every machine that shares the store (a database's lock).
    case everywhere

    public static func < (lhs: TokenLockScope, rhs: TokenLockScope) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .process: "this process"
        case .machine: "every process on this machine"
        case .everywhere: "every process on every machine"
        }
    }
}

/// Keeps holders of one token key apart while they refresh, so that one refresh request is sent
/// however many authenticators (and, with a wide enough ``scope``, processes) need new tokens.
///
/// Every ``TokenStore`` names its lock in its type (``TokenStore/Lock``): a store that cannot lock
/// across processes says so with an ``InProcessTokenLock``.
///
/// ### Implementation requirements
/// - ``withLock(_:timeout:_:)`` runs `body` while no other holder of the same key's lock (within
///   ``scope``) runs its body; holders of other keys do not wait.
/// - It waits at most `timeout`, then throws ``AuthError`` with code
///   ``AuthError/Code/tokenStoreFailed`` (retryable); it stops waiting at once when the task is
///   cancelled, throwing `CancellationError`.
/// - The lock is released however `body` ends, thrown errors included, and when the process dies.
/// - NativeAuthTesting's `TokenStoreConformance` checks all of this.
public protocol TokenLock: Sendable {
    /// Which holders of the same key the lock keeps apart.
    var scope: TokenLockScope { get }

    /// Runs `body` holding the exclusive lock of `key`, waiting at most `timeout` for it.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/tokenStoreFailed`` when the wait runs out,
    ///   `CancellationError` when the task is cancelled while waiting, or whatever `body` throws.
    func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T
}

extension AuthError {
    /// The error of a lock wait that ran out.
    package static func lockTimeout(_ timeout: Duration, holder: String) -> AuthError {
        AuthError(
            .tokenStoreFailed,
            "\(holder) held the token lock for longer than \(timeout)",
            hint: "if no other sign-in or refresh is running, try again",
            isRetryable: true
        )
    }
}

/// Any ``TokenLock``, for stores that wrap another store whose type they do not know (a store
/// that times, logs or encrypts what another one keeps): `var lock: AnyTokenLock { AnyTokenLock(base.lock) }`.
public struct AnyTokenLock: TokenLock {
    private let base: any TokenLock

    /// Wraps `base`.
    ///
    /// - Parameter base: The lock to use.
    public init(_ base: any TokenLock) {
        self.base = base
    }

    /// The wrapped lock's scope.
    public var scope: TokenLockScope { base.scope }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await base.withLock(key, timeout: timeout, body)
    }
}
