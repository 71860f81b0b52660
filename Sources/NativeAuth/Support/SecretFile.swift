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
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) naming `what` when the file
    ///   cannot be read.
    package init(_ path: String, what: String, maxBytes: Int = 1 << 20) throws(AuthError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AuthError(
                .configurationInvalid, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let status = nativeauth_fstat(descriptor)
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
