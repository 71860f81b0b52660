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
}
