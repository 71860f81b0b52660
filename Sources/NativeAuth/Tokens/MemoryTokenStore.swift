/// A token store that keeps token sets in memory for the life of the process.
public actor MemoryTokenStore: TokenStore {
    private var items: [TokenKey: TokenSet] = [:]

    /// Creates an empty store.
    public init() {}

    public func load(_ key: TokenKey) -> TokenSet? { items[key] }

    public func save(_ tokens: TokenSet, for key: TokenKey) { items[key] = tokens }

    public func remove(_ key: TokenKey) { items[key] = nil }
}
