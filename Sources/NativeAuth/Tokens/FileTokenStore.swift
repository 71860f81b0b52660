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
/// - Each file holds its key (issuer, client id, account) beside the tokens, so ``keys()`` can
///   list what is stored; files written before keys were recorded load as before and are listed
///   once they are saved again.
/// - Its lock is a ``FileTokenLock``: an exclusive `flock` per key, so refreshes in several
///   processes sharing the directory run one at a time.
public struct FileTokenStore: TokenStore {
    /// The directory holding the token files.
    public let directory: String
    /// The lock of the store's keys, across the processes of this machine.
    public let lock: FileTokenLock

    /// The largest token file read.
    static let maxFileBytes = 1 << 20

    /// Creates a store in `directory`, or in the default directory (``defaultDirectory(environment:)``).
    /// Nothing is created until the first save.
    ///
    /// - Parameters:
    ///   - directory: The directory; default ``defaultDirectory(environment:)``.
    ///   - clock: What the lock's timeouts and waits are measured with.
    public init(directory: String? = nil, clock: AuthClock = .system) {
        let directory = directory ?? Self.defaultDirectory()
        self.directory = directory
        self.lock = FileTokenLock(directory: directory, clock: clock)
    }

    private var privateDirectory: PrivateDirectory { PrivateDirectory(path: directory) }

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
    public func path(for key: TokenKey) -> String { Self.path(for: key, in: directory) }

    /// The file that holds the tokens for `key` in `directory`: a hash of the key, so that no
    /// file name says whose tokens it holds.
    static func path(for key: TokenKey, in directory: String) -> String {
        let digest = SHA256.hash(data: Data("\(key.issuer)\n\(key.clientID)\n\(key.account)".utf8))
        let hex = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        return directory + "/" + filePrefix + hex + ".json"
    }

    /// The start of every token file's name.
    static let filePrefix = "tokens-"

    public func load(_ key: TokenKey) throws -> TokenSet? {
        guard let handle = try privateDirectory.openIfPresent() else { return nil }
        guard let object = try readObject(Self.name(for: key), in: handle) else { return nil }
        return try tokens(in: object, path: path(for: key))
    }

    /// The token file's device, inode, size and modification time (every save renames a new file
    /// into place), or that there is none: one `lstat`, without reading the file.
    public func revision(of key: TokenKey) -> TokenStoreRevision? {
        let status = nativeauth_lstat(path(for: key))
        if status.error == ENOENT { return TokenStoreRevision([0]) }
        guard status.error == 0 else { return nil }
        return TokenStoreRevision([
            1, Int64(bitPattern: status.device), Int64(bitPattern: status.inode), status.size,
            status.modified_seconds, status.modified_nanoseconds,
        ])
    }

    /// The name of the file for `key` in the directory.
    static func name(for key: TokenKey) -> String {
        (path(for: key, in: "") as NSString).lastPathComponent
    }

    public func keys() throws -> [TokenKey] {
        // Refuses a directory others can enter.
        guard let handle = try privateDirectory.openIfPresent() else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot list the token directory \(directory)", underlying: error)
        }
        var keys: [TokenKey] = []
        for name in names where name.hasPrefix(Self.filePrefix) && name.hasSuffix(".json") {
            let path = directory + "/" + name
            // A file written before keys were recorded, or renamed, is not listed: its key is unknown.
            // So is a damaged one (its own key reports it at `load`): one bad file does not hide the
            // others. A file others can read is still an error.
            guard let data = try readChecked(name, in: handle),
                let object = (try? JSONValue.parse(data))?.objectValue, let stored = try? object.object("key"),
                let key = try? TokenKey(storageJSON: stored), self.path(for: key) == path
            else { continue }
            keys.append(key)
        }
        return keys
    }

    /// The bytes of the file `name` in the directory, after the checks every token file gets;
    /// `nil` when there is no such file.
    private func readChecked(_ name: String, in directory: borrowing PrivateDirectory.Handle) throws -> [UInt8]? {
        let path = self.directory + "/" + name
        let descriptor = openat(directory.descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw PrivateDirectory.failure("cannot open the token file \(path)", errno: errno)
        }
        defer { close(descriptor) }
        try PrivateDirectory.checkPrivate(descriptor: descriptor, path: path, isDirectory: false)
        return try readAll(descriptor, path: path)
    }

    /// The JSON object of the file `name` in the directory (``readChecked(_:in:)``); `nil` when
    /// there is no such file.
    private func readObject(_ name: String, in directory: borrowing PrivateDirectory.Handle) throws -> JSONObject? {
        let path = self.directory + "/" + name
        guard let data = try readChecked(name, in: directory) else { return nil }
        do {
            guard let object = try JSONValue.parse(data).objectValue else {
                throw AuthError(.tokenStoreFailed, "the token file \(path) does not hold a JSON object")
            }
            return object
        } catch let error as AuthError {
            throw error
        } catch {
            throw damaged(path, error)
        }
    }

    private func tokens(in object: JSONObject, path: String) throws -> TokenSet {
        do {
            return try TokenSet(storageJSON: object)
        } catch {
            throw damaged(path, error)
        }
    }

    private func damaged(_ path: String, _ error: any Error) -> AuthError {
        AuthError(
            .tokenStoreFailed,
            "the token file \(path) is damaged: \(Self.summary(of: error))",
            hint: "sign in again to replace it, or delete the file",
            underlying: error
        )
    }

    public func save(_ tokens: TokenSet, for key: TokenKey) throws {
        let handle = try privateDirectory.open()
        let path = path(for: key)
        let name = Self.name(for: key)
        let bytes: [UInt8]
        do {
            var object = tokens.storageJSON.objectValue ?? JSONObject()
            object["key"] = .object(key.storageJSON)
            bytes = try JSONValue.object(object).encoded()
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the token set", underlying: error)
        }
        removeStaleTemporaryFiles(in: handle)
        let temporaryName = Self.temporaryPrefix + SecureRandom.token(bytes: 9)
        let temporary = directory + "/" + temporaryName
        let descriptor = openat(
            handle.descriptor, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PrivateDirectory.failure("cannot create a temporary file in \(directory)", errno: errno)
        }
        var committed = false
        defer {
            if !committed { unlinkat(handle.descriptor, temporaryName, 0) }
        }
        // The lock on the temporary file says "a writer is alive" until the file is renamed and
        // closed; the kernel drops it when the process dies, however it dies.
        defer { close(descriptor) }
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
        guard fchmod(descriptor, 0o600) == 0 else {
            throw PrivateDirectory.failure("cannot set mode 0600 on \(temporary)", errno: errno)
        }
        try writeAll(descriptor, bytes, path: temporary)
        guard fsync(descriptor) == 0 else {
            throw PrivateDirectory.failure("cannot flush \(temporary) to disk", errno: errno)
        }
        guard renameat(handle.descriptor, temporaryName, handle.descriptor, name) == 0 else {
            throw PrivateDirectory.failure("cannot move the new token file into place at \(path)", errno: errno)
        }
        committed = true
        _ = fsync(handle.descriptor)  // the rename, durable (best effort: some file systems refuse)
    }

    /// The name of a temporary file `save` writes before renaming it into place.
    static let temporaryPrefix = ".tokens."

    /// Removes what writers that died mid-save (a crash, `kill -9`, power loss) left: temporary
    /// files that nobody holds a lock on and that were not written for a second. Best effort.
    private func removeStaleTemporaryFiles(in handle: borrowing PrivateDirectory.Handle) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let now = Date().timeIntervalSince1970
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            let descriptor = openat(handle.descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }  // renamed or removed meanwhile
            defer { close(descriptor) }
            let status = nativeauth_fstat(descriptor)
            // A file just created may not be locked yet: only files idle for a second are stale.
            guard status.error == 0, status.uid == geteuid(), now - Double(status.modified_seconds) > 1,
                flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            unlinkat(handle.descriptor, name, 0)
        }
    }

    public func remove(_ key: TokenKey) throws {
        guard let handle = try privateDirectory.openIfPresent() else { return }
        if unlinkat(handle.descriptor, Self.name(for: key), 0) != 0, errno != ENOENT {
            throw PrivateDirectory.failure("cannot remove the token file \(path(for: key))", errno: errno)
        }
        _ = fsync(handle.descriptor)
    }

    private func readAll(_ descriptor: Int32, path: String) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PrivateDirectory.failure("cannot read the token file \(path)", errno: errno)
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
                throw PrivateDirectory.failure("cannot write \(path)", errno: errno)
            }
            offset += count
        }
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case let error as JSONParseError: error.summary
        case let error as JSONFieldError: error.description
        default: "\(type(of: error))"
        }
    }
}
