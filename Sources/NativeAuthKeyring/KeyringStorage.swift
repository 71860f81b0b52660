public import NativeAuth

/// A token file that a keyring store took over: the set moved into the keyring, or (when the
/// keyring already held one) the stale file removed.
public struct TokenFileMove: Sendable, Equatable {
    /// The key of the set.
    public let key: TokenKey
    /// The file that was removed.
    public let path: String
    /// `true` when the file's set was copied into the keyring; `false` when the keyring already
    /// held a set for the key and the file was only removed.
    public let copied: Bool
}

/// What ``SecretServiceTokenStore`` and `KeychainTokenStore` (Apple platforms) share: the stored
/// format, writing only what changed, the cross-process lock, the revision, and moving token files
/// in.
struct KeyringStorage<Backend: Keyring>: Sendable {
    let backend: Backend
    let lock: KeyringTokenLock
    /// The file store whose sets for the same keys are moved in.
    let files: FileTokenStore?
    let moved: (@Sendable (TokenFileMove) -> Void)?

    /// How long taking over a token file waits for a refresh in another process.
    static var moveLockTimeout: Duration { .seconds(30) }

    func load(_ key: TokenKey) async throws -> TokenSet? {
        let stored = try await read(key)
        guard let files, Self.fileExists(for: key, in: files) else { return stored }
        if KeyringTokenLock.isHeld(key) { return try await takeOver(key, from: files) }
        return try await lock.withLock(key, timeout: Self.moveLockTimeout) { try await takeOver(key, from: files) }
    }

    /// The set stored for `key`. Items are found by their attributes, which any program on the
    /// session bus may set; an item whose embedded key names another sign-in (another account,
    /// client or issuer) is refused rather than used as this one's.
    private func read(_ key: TokenKey) async throws -> TokenSet? {
        guard let bytes = try await backend.read(key) else { return nil }
        let (tokens, storedKey) = try KeyringFormat.decode(bytes)
        if let storedKey, storedKey != key {
            throw AuthError(
                .tokenStoreFailed,
                "the keyring item found for account \(key.account) of client \(key.clientID) at \(key.issuer) holds"
                    + " the tokens of another sign-in (account \(storedKey.account) of client \(storedKey.clientID) at"
                    + " \(storedKey.issuer)); it was not used",
                hint: "remove the item (Seahorse, or `secret-tool clear` with its attributes), then sign in again")
        }
        return tokens
    }

    private static func fileExists(for key: TokenKey, in files: FileTokenStore) -> Bool {
        guard let revision = files.revision(of: key) else { return true }  // unreadable: let load say why
        return revision != TokenStoreRevision([0])
    }

    /// Under the lock: the file's set goes into the keyring unless the keyring has one, then the
    /// file goes. A file that cannot be read is left alone while the keyring has a set.
    private func takeOver(_ key: TokenKey, from files: FileTokenStore) async throws -> TokenSet? {
        let stored = try await read(key)
        let fromFile: TokenSet?
        do {
            fromFile = try files.load(key)
        } catch {
            if stored != nil { return stored }
            throw error
        }
        guard let fromFile else { return stored }  // moved by another process meanwhile
        if stored == nil {
            try await backend.write(
                try KeyringFormat.encode(fromFile, for: key), label: keyringLabel(for: key), for: key)
        }
        try files.remove(key)
        try lock.files.recordChange(of: key)
        moved?(TokenFileMove(key: key, path: files.path(for: key), copied: stored == nil))
        return stored ?? fromFile
    }

    /// Writes only when the stored set (or its key) differs: saving the same set touches nothing.
    func save(_ tokens: TokenSet, for key: TokenKey) async throws {
        if let bytes = try await backend.read(key), let (stored, storedKey) = try? KeyringFormat.decode(bytes),
            stored == tokens, storedKey == key
        {
            return
        }
        try await backend.write(try KeyringFormat.encode(tokens, for: key), label: keyringLabel(for: key), for: key)
        try lock.files.recordChange(of: key)
    }

    func remove(_ key: TokenKey) async throws {
        _ = try await backend.delete(key)
        try files?.remove(key)
        try lock.files.recordChange(of: key)
    }

    func keys() async throws -> [TokenKey] {
        var keys = Set(try await backend.keys())
        if let files { keys.formUnion(try files.keys()) }
        return Array(keys)
    }

    /// Changes made through NativeAuth (in any process) change it; an item another program changes
    /// does not (the copy in memory is then trusted until its access token expires).
    func revision(of key: TokenKey) -> TokenStoreRevision? {
        lock.files.lastChange(of: key)
    }
}
