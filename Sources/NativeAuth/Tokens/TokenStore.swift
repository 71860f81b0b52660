/// Keeps token sets between runs, under a ``TokenKey``, and names the lock that keeps refreshes of
/// one key apart.
///
/// What a store keeps and how a key is locked are separate: a store's ``Lock`` says in its type
/// how far the lock reaches (``TokenLock/scope``). ``MemoryTokenStore`` locks within its process
/// (``InProcessTokenLock``); ``FileTokenStore`` locks every process of the machine that shares its
/// directory (``FileTokenLock``). A store has no default lock: it must say which one it has.
///
/// ### Implementation requirements
/// - `save` replaces the stored set atomically: a reader sees the old set or the new one, never a
///   mixture, an empty file or nothing.
/// - A failure never loses what was stored before it.
/// - ``keys()`` lists every key with a stored set, and only those.
/// - ``lock`` reaches every holder that shares the stored sets: a store that other processes can
///   read must lock across processes, or every process refreshes on its own.
/// - Throw ``AuthError`` with code ``AuthError/Code/tokenStoreFailed`` and a message that says
///   what to do; never put a token in it, and never log or print token values.
/// - NativeAuthTesting's `TokenStoreConformance` checks all of this in one line.
public protocol TokenStore: Sendable {
    /// How this store's keys are locked.
    associatedtype Lock: TokenLock

    /// The lock of this store's keys.
    var lock: Lock { get }

    /// The token set stored under `key`, or `nil` when there is none.
    func load(_ key: TokenKey) async throws -> TokenSet?
    /// Stores `tokens` under `key`, replacing what was there.
    func save(_ tokens: TokenSet, for key: TokenKey) async throws
    /// Removes what is stored under `key`; removing nothing is not an error.
    func remove(_ key: TokenKey) async throws
    /// The keys of every stored set, in no particular order.
    func keys() async throws -> [TokenKey]

    /// What identifies the stored state of `key` cheaply, without loading it: it changes with every
    /// save and removal, in this process or another. `nil` (the default) when the store cannot tell
    /// cheaply. A change through this handle shows at once; one made elsewhere may show a moment
    /// later in a store that learns of it by notification (`NativeAuthPostgres`), never later than
    /// the notification takes to arrive.
    ///
    /// An authenticator compares it before it uses the set it holds in memory, so that a logout or
    /// a new sign-in in another process takes effect at once. A store that returns `nil` has its
    /// copy in memory trusted until the access token expires.
    func revision(of key: TokenKey) async throws -> TokenStoreRevision?
}

extension TokenStore {
    public func revision(of key: TokenKey) async throws -> TokenStoreRevision? { nil }
}

/// The stored state of one key, as ``TokenStore/revision(of:)`` identifies it: equal revisions
/// mean nothing was saved or removed in between.
public struct TokenStoreRevision: Hashable, Sendable {
    private let parts: [Int64]

    /// A revision made of whatever identifies the state (a counter; a file's inode, size and time).
    public init(_ parts: [Int64]) {
        self.parts = parts
    }
}
