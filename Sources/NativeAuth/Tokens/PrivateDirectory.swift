internal import CNativeAuthPOSIX
internal import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A directory only its owner may enter, and the checks every file in it gets: what
/// ``FileTokenStore`` and ``FileTokenLock`` share.
struct PrivateDirectory: Sendable {
    let path: String

    /// Creates the directory (and missing parents) with mode 0700, or checks the existing one.
    func prepare() throws(AuthError) {
        let info = nativeauth_stat(path)
        if info.error == 0 {
            guard mode_t(truncatingIfNeeded: info.mode) & S_IFMT == S_IFDIR else {
                throw AuthError(.tokenStoreFailed, "the token store path \(path) is not a directory")
            }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.failure("cannot open the token directory \(path)", errno: errno) }
            defer { close(descriptor) }
            try Self.checkPrivate(descriptor: descriptor, path: path, isDirectory: true)
            return
        }
        guard info.error == ENOENT else {
            throw Self.failure("cannot inspect the token directory \(path)", errno: info.error)
        }
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST {
                throw Self.failure("cannot create the token directory \(current)", errno: errno)
            }
        }
        // mkdir's mode is filtered by the umask: set it exactly.
        guard chmod(path, 0o700) == 0 else { throw Self.failure("cannot set mode 0700 on \(path)", errno: errno) }
    }

    /// Refuses a file or directory that belongs to someone else, that others may access, or (for
    /// a file) that is not a regular file.
    static func checkPrivate(descriptor: Int32, path: String, isDirectory: Bool) throws(AuthError) {
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

    /// Makes a rename in the directory durable. Best effort: some file systems refuse `fsync` on
    /// directories.
    func sync() {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    static func failure(_ message: String, errno code: Int32) -> AuthError {
        AuthError(.tokenStoreFailed, "\(message): \(String(cString: strerror(code)))")
    }
}
