internal import CNativeAuthPOSIX
internal import Crypto
public import Foundation
internal import LenientJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A token store that keeps one JSON file per key in a private directory.
///
/// - The directory is created with mode 0700 when missing; an existing directory that other users
///   can enter, read or write is refused.
/// - Each file is 0600 and owned by the current user; a file that group or others can read or
///   write, or that belongs to someone else, is refused with the command that fixes it.
/// - Saving writes a temporary file in the same directory, `fsync`s it and renames it over the old
///   file, so a crash at any moment leaves the old set or the new one. The temporary files of
///   writers that died mid-save are removed by a later save.
/// - A damaged file is reported, never deleted.
/// - ``withLock(_:timeout:_:)`` takes an exclusive `flock` on a lock file next to the token file
///   (`tokens-….json.lock`, 0600), so refreshes in several processes sharing the store run one at a
///   time. The wait polls without blocking a thread and gives up after the timeout.
public struct FileTokenStore: TokenStore {
    /// The directory holding the token files.
    public let directory: String

    /// The largest token file read.
    static let maxFileBytes = 1 << 20

    /// Creates a store in `directory`, or in the default directory (``defaultDirectory(environment:)``).
    /// Nothing is created until the first save.
    public init(directory: String? = nil) {
        self.directory = directory ?? Self.defaultDirectory()
    }

    /// `$XDG_STATE_HOME/nativeauth`, or `~/.local/state/nativeauth` when `XDG_STATE_HOME` is unset or
    /// not absolute (as the XDG Base Directory specification says).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/nativeauth"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/nativeauth"
    }

    /// The file that holds the tokens for `key`.
    public func path(for key: TokenKey) -> String {
        let digest = SHA256.hash(data: Data("\(key.issuer)\n\(key.clientID)\n\(key.account)".utf8))
        let hex = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        return directory + "/tokens-" + hex + ".json"
    }

    public func load(_ key: TokenKey) throws -> TokenSet? {
        let path = path(for: key)
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw failure("cannot open the token file \(path)", errno: errno)
        }
        defer { close(descriptor) }
        try checkPrivate(descriptor: descriptor, path: path, isDirectory: false)
        let data = try readAll(descriptor, path: path)
        do {
            guard let object = try JSONValue.parse(data).objectValue else {
                throw AuthError(.tokenStoreFailed, "the token file \(path) does not hold a JSON object")
            }
            return try TokenSet(storageJSON: object)
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(
                .tokenStoreFailed,
                "the token file \(path) is damaged: \(Self.summary(of: error))",
                hint: "sign in again to replace it, or delete the file",
                underlying: error
            )
        }
    }

    public func save(_ tokens: TokenSet, for key: TokenKey) throws {
        try prepareDirectory()
        let path = path(for: key)
        let bytes: [UInt8]
        do {
            bytes = try tokens.storageJSON.encoded()
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the token set", underlying: error)
        }
        removeStaleTemporaryFiles()
        var template = Array((directory + "/" + Self.temporaryPrefix + "XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else {
            throw failure("cannot create a temporary file in \(directory)", errno: errno)
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        // The lock on the temporary file says "a writer is alive" until the file is renamed and
        // closed; the kernel drops it when the process dies, however it dies.
        defer { close(descriptor) }
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
        guard fchmod(descriptor, 0o600) == 0 else {
            throw failure("cannot set mode 0600 on \(temporary)", errno: errno)
        }
        try writeAll(descriptor, bytes, path: temporary)
        guard fsync(descriptor) == 0 else { throw failure("cannot flush \(temporary) to disk", errno: errno) }
        guard rename(temporary, path) == 0 else {
            throw failure("cannot move the new token file into place at \(path)", errno: errno)
        }
        committed = true
        syncDirectory()
    }

    /// The name of a temporary file `save` writes before renaming it into place.
    static let temporaryPrefix = ".tokens."

    /// Removes what writers that died mid-save (a crash, `kill -9`, power loss) left: temporary
    /// files that nobody holds a lock on and that were not written for a second. Best effort.
    private func removeStaleTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let now = Date().timeIntervalSince1970
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            let path = directory + "/" + name
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }  // renamed or removed meanwhile
            defer { close(descriptor) }
            let status = nativeauth_fstat(descriptor)
            // A file just created may not be locked yet: only files idle for a second are stale.
            guard status.error == 0, status.uid == geteuid(), now - Double(status.modified_seconds) > 1,
                flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            unlink(path)
        }
    }

    public func remove(_ key: TokenKey) throws {
        let path = path(for: key)
        if unlink(path) != 0, errno != ENOENT {
            throw failure("cannot remove the token file \(path)", errno: errno)
        }
        syncDirectory()
    }

    /// The lock file of `key`.
    public func lockPath(for key: TokenKey) -> String { path(for: key) + ".lock" }

    public func withLock<T: Sendable>(
        _ key: TokenKey,
        timeout: Duration,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try prepareDirectory()
        let path = lockPath(for: key)
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open the lock file \(path)", errno: errno) }
        defer { close(descriptor) }  // closing releases the lock, also if the body throws
        try checkPrivate(descriptor: descriptor, path: path, isDirectory: false)
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw failure("cannot lock \(path)", errno: errno)
            }
            guard ContinuousClock.now < deadline else {
                throw AuthError(
                    .tokenStoreFailed,
                    "another process held the token lock \(path) for longer than \(timeout)",
                    hint: "if no other sign-in or refresh is running, try again",
                    isRetryable: true
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await body()
    }

    // MARK: - Directory and permissions

    /// Creates the directory (and missing parents) with mode 0700, or checks the existing one.
    func prepareDirectory() throws {
        let info = nativeauth_stat(directory)
        if info.error == 0 {
            guard mode_t(truncatingIfNeeded: info.mode) & S_IFMT == S_IFDIR else {
                throw AuthError(.tokenStoreFailed, "the token store path \(directory) is not a directory")
            }
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("cannot open the token directory \(directory)", errno: errno) }
            defer { close(descriptor) }
            try checkPrivate(descriptor: descriptor, path: directory, isDirectory: true)
            return
        }
        guard info.error == ENOENT else {
            throw failure("cannot inspect the token directory \(directory)", errno: info.error)
        }
        var current = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST {
                throw failure("cannot create the token directory \(current)", errno: errno)
            }
        }
        // mkdir's mode is filtered by the umask: set it exactly.
        guard chmod(directory, 0o700) == 0 else { throw failure("cannot set mode 0700 on \(directory)", errno: errno) }
    }

    private func checkPrivate(descriptor: Int32, path: String, isDirectory: Bool) throws {
        let info = nativeauth_fstat(descriptor)
        guard info.error == 0 else { throw failure("cannot inspect \(path)", errno: info.error) }
        let kind = isDirectory ? "directory" : "file"
        let mode = mode_t(truncatingIfNeeded: info.mode) & 0o777
        if info.uid != geteuid() {
            throw AuthError(
                .tokenStoreFailed,
                "the token \(kind) \(path) belongs to another user (uid \(info.uid))",
                hint: "use a token store directory of your own (--store DIR)"
            )
        }
        if !isDirectory, mode_t(truncatingIfNeeded: info.mode) & S_IFMT != S_IFREG {
            throw AuthError(.tokenStoreFailed, "the token file \(path) is not a regular file")
        }
        if mode & 0o077 != 0 {
            let wanted = isDirectory ? "700" : "600"
            throw AuthError(
                .tokenStoreFailed,
                "the token \(kind) \(path) can be accessed by other users (mode \(String(mode, radix: 8))); it is not used",
                hint: "run: chmod \(wanted) '\(path)'"
            )
        }
    }

    private func readAll(_ descriptor: Int32, path: String) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read the token file \(path)", errno: errno)
            }
            if count == 0 { return result }
            result.append(contentsOf: buffer[0..<count])
            if result.count > Self.maxFileBytes {
                throw AuthError(.tokenStoreFailed, "the token file \(path) is larger than \(Self.maxFileBytes) bytes")
            }
        }
    }

    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(path)", errno: errno)
            }
            offset += count
        }
    }

    /// Makes the rename durable. Best effort: some file systems refuse `fsync` on directories.
    private func syncDirectory() {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private func failure(_ message: String, errno code: Int32) -> AuthError {
        AuthError(.tokenStoreFailed, "\(message): \(String(cString: strerror(code)))")
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case let error as JSONParseError: error.summary
        case let error as JSONFieldError: error.description
        default: "\(type(of: error))"
        }
    }
}
