/// A ``TokenLock`` for the holders in one process: the lock of ``MemoryTokenStore``, and of any
/// store that keeps nothing other processes could share.
///
/// Waiters are served in the order they came. A wait ends when the lock is free, when `timeout`
/// runs out (measured with the lock's ``AuthClock``), or at once when the waiting task is cancelled.
public actor InProcessTokenLock: TokenLock {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Always ``TokenLockScope/process``.
    public nonisolated let scope = TokenLockScope.process
    private let clock: AuthClock
    private var held: Set<TokenKey> = []
    private var waiters: [TokenKey: [Waiter]] = [:]
    private var nextWaiter = 0

    /// Creates a lock with no holder.
    ///
    /// - Parameter clock: What timeouts are measured with.
    public init(clock: AuthClock = .system) {
        self.clock = clock
    }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await acquire(key, timeout: timeout)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: TokenKey, timeout: Duration) async throws {
        try Task.checkCancellation()
        guard held.contains(key) else {
            held.insert(key)
            return
        }
        let id = nextWaiter
        nextWaiter += 1
        let clock = clock
        let timer = Task {
            guard (try? await clock.sleep(timeout)) != nil else { return }
            self.fail(key, id, with: AuthError.lockTimeout(timeout, holder: "another holder in this process"))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[key, default: []].append(Waiter(id: id, continuation: continuation))
                }
            }
        } onCancel: {
            Task { await self.fail(key, id, with: CancellationError()) }
        }
    }

    /// Ends the wait of waiter `id` with `error`, when it is still waiting.
    private func fail(_ key: TokenKey, _ id: Int, with error: any Error) {
        guard let index = waiters[key]?.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters[key]?.remove(at: index)
        if waiters[key]?.isEmpty == true { waiters[key] = nil }
        waiter?.continuation.resume(throwing: error)
    }

    /// Hands the lock to the next waiter, or frees it.
    private func release(_ key: TokenKey) {
        guard var queue = waiters[key], !queue.isEmpty else {
            held.remove(key)
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue.isEmpty ? nil : queue
        next.continuation.resume()  // the key stays held: it passes to `next`
    }
}
