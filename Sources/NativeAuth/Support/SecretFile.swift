internal import CNativeAuthPOSIX
package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that may hold a secret (a configuration file, a client secret file), read through one
/// descriptor together with its status, so that the check of who may read it is about the file
/// that was read.
package struct SecretFile {
    /// What the file holds.
    package let contents: Data
    /// Whether another user may read or change it: it is not the user's own (or root's), or it
    /// gives group or others any access.
    package let othersMayAccess: Bool
    /// Its path, for messages.
    package let path: String

    /// Reads at most `maxBytes` of the file at `path`.
    ///
    /// With `trusted`, the file must be one only the user could have written, as OpenSSH asks of
    /// `~/.ssh/config`: a configuration file may name a command to run (`subject_token_command`)
    /// or the account a helper uses, so another user's file would act as them. It is opened
    /// without following a symbolic link and without waiting on a FIFO, and the opened descriptor
    /// must be a regular file, owned by the user (or root), that neither group nor others may change.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) naming `what` when the file
    ///   cannot be read, or, with `trusted`, is not such a file (with the command that fixes it).
    package init(_ path: String, what: String, maxBytes: Int = 1 << 20, trusted: Bool = false) throws(AuthError) {
        let flags = O_RDONLY | O_CLOEXEC | (trusted ? O_NOFOLLOW | O_NONBLOCK : 0)
        let descriptor = open(path, flags)
        guard descriptor >= 0 else {
            let error = errno
            if trusted, error == ELOOP {
                throw AuthError(
                    .configurationInvalid,
                    "the \(what) \(path) is a symbolic link; it is read only as a regular file",
                    hint: "name the file the link points to, or put the file itself there")
            }
            throw AuthError(
                .configurationInvalid, "cannot read the \(what) \(path): \(String(cString: strerror(error)))")
        }
        defer { close(descriptor) }
        let status = nativeauth_fstat(descriptor)
        if trusted { try Self.requireTrusted(status, path: path, what: what) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while data.count <= maxBytes {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw AuthError(
                    .configurationInvalid, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        self.path = path
        self.contents = data
        self.othersMayAccess =
            status.error != 0 || status.mode & 0o077 != 0 || (status.uid != getuid() && status.uid != 0)
    }

    /// Whether anything is at `path`, a dangling symbolic link too (which a trusted read refuses
    /// by name, rather than taking it for no file).
    package static func exists(_ path: String) -> Bool {
        nativeauth_lstat(path).error == 0
    }

    /// Throws unless `status` is of a regular file owned by the user (or root) that neither group
    /// nor others may change.
    private static func requireTrusted(_ status: nativeauth_file_status, path: String, what: String)
        throws(AuthError)
    {
        guard status.error == 0 else {
            throw AuthError(
                .configurationInvalid, "cannot read the \(what) \(path): \(String(cString: strerror(status.error)))")
        }
        guard status.mode & 0o170000 == 0o100000 else {
            throw AuthError(
                .configurationInvalid,
                "the \(what) \(path) is not a regular file (a FIFO, a device or a directory)",
                hint: "replace it with a regular file, or remove it")
        }
        let user = getuid()
        guard status.uid == user || status.uid == 0 else {
            throw AuthError(
                .configurationInvalid,
                "the \(what) \(path) belongs to another user (uid \(status.uid)), who could make it run commands as you",
                hint: "if it is yours to use, run: chown \(user) '\(path)' (as root); else remove it")
        }
        guard status.mode & 0o022 == 0 else {
            throw AuthError(
                .configurationInvalid,
                "the \(what) \(path) can be changed by other users, who could make it run commands as you",
                hint: "run: chmod go-w '\(path)'")
        }
    }

    /// Throws when another user may read or change the file, with the command that fixes it.
    ///
    /// - Parameter what: What the file holds, for the message.
    package func requirePrivate(holding what: String = "a client secret") throws(AuthError) {
        guard othersMayAccess else { return }
        throw AuthError(
            .configurationInvalid,
            "\(path) holds \(what) but other users can read or change it",
            hint: "run: chmod 600 '\(path)' (and make it yours), or keep the secret elsewhere"
        )
    }

    /// Replaces the file at `path` with `bytes`, atomically and readable by its owner only: a
    /// temporary file created 0600 beside it, written, flushed and renamed over it. A crash leaves
    /// the old file or the new one. `what` names the file in errors, which have `code`.
    package static func writePrivately(
        _ bytes: [UInt8],
        to path: String,
        what: String,
        code: AuthError.Code = .configurationInvalid
    ) throws(AuthError) {
        let temporary = (path as NSString).deletingLastPathComponent + "/.nativeauth." + SecureRandom.token(bytes: 9)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw AuthError(code, "cannot write the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += count
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw AuthError(code, "cannot write the \(what) \(path): \(String(cString: strerror(failure)))")
        }
    }
}
