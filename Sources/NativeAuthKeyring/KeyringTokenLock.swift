public import NativeAuth

/// The lock of the keyring stores: `FileTokenLock`'s `flock` per key, in a private directory, so
/// that the processes of this machine refresh one at a time whichever store keeps the tokens.
///
/// It also knows which keys the current task holds, so that the store can take the lock for the
/// work it does on its own (moving a token file into the keyring) without waiting for itself.
public struct KeyringTokenLock: TokenLock {
    /// Always `TokenLockScope/machine`.
    public var scope: TokenLockScope { files.scope }
    /// The lock files, in `FileTokenLock/directory`.
    public let files: FileTokenLock

    @TaskLocal static var held: Set<TokenKey> = []

    init(files: FileTokenLock) {
        self.files = files
    }

    /// Whether the current task holds the lock of `key`.
    static func isHeld(_ key: TokenKey) -> Bool { held.contains(key) }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await files.withLock(key, timeout: timeout) {
            try await Self.$held.withValue(Self.held.union([key])) { try await body() }
        }
    }
}
