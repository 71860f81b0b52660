/// A token store that keeps token sets in memory for the life of the process.
///
/// Its lock (``InProcessTokenLock``) serialises the authenticators of one process that share the
/// store; nothing outside the process can see the sets, so nothing outside needs locking.
public actor MemoryTokenStore: TokenStore {
    private var items: [TokenKey: TokenSet] = [:]
    private var changes: [TokenKey: Int64] = [:]

    /// The lock of the store's keys, within this process.
    public nonisolated let lock: InProcessTokenLock

    /// Creates an empty store.
    ///
    /// - Parameter clock: What the lock's timeouts are measured with.
    public init(clock: AuthClock = .system) {
        lock = InProcessTokenLock(clock: clock)
    }

    public func load(_ key: TokenKey) -> TokenSet? { items[key] }

    public func save(_ tokens: TokenSet, for key: TokenKey) {
        items[key] = tokens
        changes[key, default: 0] += 1
    }

    public func remove(_ key: TokenKey) {
        items[key] = nil
        changes[key, default: 0] += 1
    }

    /// A count of the saves and removals of `key`.
    public func revision(of key: TokenKey) -> TokenStoreRevision? {
        TokenStoreRevision([changes[key] ?? 0])
    }

    public func keys() -> [TokenKey] { Array(items.keys) }
}
