internal import CNativeAuthPOSIX
internal import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `open(2)` of a directory, without following a symbolic link in its last component (outside
/// ``PrivateDirectory``, whose `open()` would shadow the C function).
private func openDirectoryNoFollow(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
}

/// A directory only its owner may enter, and the checks every file in it gets: what
/// ``FileTokenStore`` and ``FileTokenLock`` share.
///
/// Work happens through one descriptor of the directory (``open()``): the files in it are
/// reached with `openat`, `renameat` and `unlinkat`, so a directory swapped for a symbolic link
/// after the checks changes nothing. The directory itself must not be a symbolic link, and no
/// directory above it may be changeable by another user (one writable by others, unless it is
/// root's and sticky like `/tmp`, or one owned by another user), as OpenSSH's `safe_path` demands:
/// such a user could otherwise replace the store's path.
struct PrivateDirectory: Sendable {
    let path: String

    /// An open descriptor of the directory, closed when the handle goes away.
    struct Handle: ~Copyable {
        let descriptor: Int32

        deinit { close(descriptor) }
    }

    /// The directory, checked and open; created with mode 0700 (and missing parents) when missing.
    func open() throws(AuthError) -> Handle {
        var created = false
        if nativeauth_stat(path).error == ENOENT {
            var current = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                current += "/" + component
                if mkdir(current, 0o700) != 0, errno != EEXIST {
                    throw Self.failure("cannot create the token directory \(current)", errno: errno)
                }
            }
            created = true
        }
        guard let handle = try openIfPresent(settingMode: created) else {
            throw AuthError(.tokenStoreFailed, "the token directory \(path) was removed while it was created")
        }
        return handle
    }

    /// The directory, checked and open; `nil` when it does not exist (nothing is created).
    ///
    /// - Parameter settingMode: Sets mode 0700 on what was opened (`mkdir`'s mode is filtered by
    ///   the umask).
    func openIfPresent(settingMode: Bool = false) throws(AuthError) -> Handle? {
        let info = nativeauth_stat(path)
        if info.error == ENOENT { return nil }
        guard info.error == 0 else {
            throw Self.failure("cannot inspect the token directory \(path)", errno: info.error)
        }
        try checkAncestors()
        let descriptor = openDirectoryNoFollow(path)
        guard descriptor >= 0 else {
            if errno == ELOOP || errno == ENOTDIR {
                throw AuthError(
                    .tokenStoreFailed, "the token store path \(path) is a symbolic link or not a directory",
                    hint: "use a real directory of your own (`store`)")
            }
            throw Self.failure("cannot open the token directory \(path)", errno: errno)
        }
        let handle = Handle(descriptor: descriptor)
        if settingMode, fchmod(descriptor, 0o700) != 0 {
            throw Self.failure("cannot set mode 0700 on \(path)", errno: errno)
        }
        try Self.checkPrivate(descriptor: descriptor, path: path, isDirectory: true)
        return handle
    }

    /// Refuses the store when a directory above it can be changed by another user.
    private func checkAncestors() throws(AuthError) {
        let parent = (path as NSString).deletingLastPathComponent
        guard let resolved = realpath(parent.isEmpty ? "." : parent, nil) else {
            throw Self.failure("cannot resolve the directory above \(path)", errno: errno)
        }
        var current = String(cString: resolved)
        free(resolved)
        let me = geteuid()
        while true {
            let info = nativeauth_stat(current)
            guard info.error == 0 else { throw Self.failure("cannot inspect \(current)", errno: info.error) }
            let mode = mode_t(truncatingIfNeeded: info.mode)
            let writableByOthers = mode & 0o022 != 0
            let stickyRoot = mode & S_ISVTX != 0 && info.uid == 0
            if (info.uid != 0 && info.uid != me) || (writableByOthers && !stickyRoot) {
                throw AuthError(
                    .tokenStoreFailed,
                    "the directory \(current) above the token store can be changed by other users"
                        + " (owner uid \(info.uid), mode \(String(mode & 0o7777, radix: 8)))",
                    hint: "keep the token store under a directory only you (or root) can change (`store`)"
                )
            }
            if current == "/" { return }
            current = (current as NSString).deletingLastPathComponent
            if current.isEmpty { current = "/" }
        }
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
                hint: "use a token store directory of your own (`store`)"
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

    static func failure(_ message: String, errno code: Int32) -> AuthError {
        AuthError(.tokenStoreFailed, "\(message): \(String(cString: strerror(code)))")
    }
}
