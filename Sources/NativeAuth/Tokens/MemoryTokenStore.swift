/// A token store that keeps token sets in memory for the life of the process.
///
/// Its lock serialises the authenticators of one process that share the store.
public actor MemoryTokenStore: TokenStore {
    private var items: [TokenKey: TokenSet] = [:]
    private var locked: Set<TokenKey> = []
    private var waiters: [TokenKey: [CheckedContinuation<Void, Never>]] = [:]

    /// Creates an empty store.
    public init() {}

    public func load(_ key: TokenKey) -> TokenSet? { items[key] }

    public func save(_ tokens: TokenSet, for key: TokenKey) { items[key] = tokens }

    public func remove(_ key: TokenKey) { items[key] = nil }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        while locked.contains(key) {
            await withCheckedContinuation { waiters[key, default: []].append($0) }
        }
        locked.insert(key)
        defer {
            locked.remove(key)
            if var queue = waiters[key], !queue.isEmpty {
                queue.removeFirst().resume()
                waiters[key] = queue
            }
        }
        return try await body()
    }
}
