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
    package func requirePrivate() throws(AuthError) {
        guard othersMayAccess else { return }
        throw AuthError(
            .configurationInvalid,
            "\(path) holds a client secret but other users can read or change it",
            hint: "run: chmod 600 '\(path)' (and make it yours), or keep the secret elsewhere"
        )
    }
}
