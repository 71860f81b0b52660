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

    init(directory: String, clock: AuthClock) {
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
}
