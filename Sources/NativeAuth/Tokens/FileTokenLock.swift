internal import CNativeAuthPOSIX
internal import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock of ``FileTokenStore``: an exclusive `flock` on a lock file next to each token file
/// (`tokens-….json.lock`, 0600), so that the processes of this machine that share the store's
/// directory refresh one at a time.
///
/// The wait polls every 10 milliseconds without blocking a thread, gives up after the timeout
/// (measured with the lock's ``AuthClock``) and stops at once when the task is cancelled. The
/// kernel drops the lock when its holder dies, however it dies.
public struct FileTokenLock: TokenLock {
    /// Always ``TokenLockScope/machine``: every process that opens the same files.
    public let scope = TokenLockScope.machine
    /// The store's directory.
    public let directory: String
    let clock: AuthClock

    /// A lock whose files live in `directory` (created 0700 when missing; refused when others can
    /// enter it), for stores that keep their sets elsewhere (a keyring) but lock each key across
    /// the processes of this machine.
    ///
    /// - Parameters:
    ///   - directory: A private directory; the lock files are named like ``FileTokenStore``'s,
    ///     so a keyring store locking in the file store's directory excludes its refreshes too.
    ///   - clock: What the timeouts and waits are measured with.
    public init(directory: String, clock: AuthClock = .system) {
        self.directory = directory
        self.clock = clock
    }

    /// The lock file of `key`.
    public func path(for key: TokenKey) -> String { FileTokenStore.path(for: key, in: directory) + ".lock" }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let path = path(for: key)
        let descriptor = try {
            let handle = try PrivateDirectory(path: directory).open()
            return openat(
                handle.descriptor, FileTokenStore.name(for: key) + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                0o600)
        }()
        guard descriptor >= 0 else { throw PrivateDirectory.failure("cannot open the lock file \(path)", errno: errno) }
        defer { close(descriptor) }  // closing releases the lock, also if the body throws
        try PrivateDirectory.checkPrivate(descriptor: descriptor, path: path, isDirectory: false)
        let deadline = clock.now().addingTimeInterval(timeout.timeInterval)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw PrivateDirectory.failure("cannot lock \(path)", errno: errno)
            }
            guard clock.now() < deadline else {
                throw AuthError.lockTimeout(timeout, holder: "another process (lock file \(path))")
            }
            try await clock.sleep(.milliseconds(10))
        }
        return try await body()
    }

    // MARK: - Changes, for stores without a cheap revision of their own

    /// The file whose identity changes each time ``recordChange(of:)`` runs for `key`.
    func changePath(for key: TokenKey) -> String { FileTokenStore.path(for: key, in: directory) + ".changed" }

    /// Records that the set stored under `key` changed, for ``lastChange(of:)``: a new empty file
    /// `tokens-….json.changed` renamed into place. A store whose own backend has no cheap
    /// revision (a keyring) calls it after each save and removal.
    public func recordChange(of key: TokenKey) throws {
        let handle = try PrivateDirectory(path: directory).open()
        let name = FileTokenStore.name(for: key) + ".changed"
        let temporaryName = FileTokenStore.temporaryPrefix + SecureRandom.token(bytes: 9)
        let descriptor = openat(
            handle.descriptor, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PrivateDirectory.failure("cannot create a file in \(directory)", errno: errno)
        }
        close(descriptor)
        guard renameat(handle.descriptor, temporaryName, handle.descriptor, name) == 0 else {
            let code = errno
            unlinkat(handle.descriptor, temporaryName, 0)
            throw PrivateDirectory.failure("cannot record a change in \(directory)", errno: code)
        }
    }

    /// What identifies the last ``recordChange(of:)`` of `key` (one `lstat`), for
    /// ``TokenStore/revision(of:)``; `nil` when it cannot be read.
    public func lastChange(of key: TokenKey) -> TokenStoreRevision? {
        let status = nativeauth_lstat(changePath(for: key))
        if status.error == ENOENT { return TokenStoreRevision([0]) }
        guard status.error == 0 else { return nil }
        return TokenStoreRevision([
            1, Int64(bitPattern: status.device), Int64(bitPattern: status.inode),
            status.modified_seconds, status.modified_nanoseconds,
        ])
    }
}
