internal import Foundation
internal import NativeAuth

/// Reads a secret from a file only its owner can read, or from standard input (`-`): the ways to
/// hand a command a secret without putting it in the process list.
enum ClientSecretFile {
    /// The secret in `path` (`-`: standard input), without its trailing newline.
    ///
    /// - Throws: `AuthError` (`configuration_invalid`) for a file others can read, an unreadable
    ///   file, or an empty secret.
    static func read(_ path: String) throws(AuthError) -> String {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            let file = try SecretFile(path, what: "client secret file", maxBytes: 64 << 10)
            try file.requirePrivate()
            data = file.contents
        }
        var secret = String(decoding: data.prefix(64 << 10), as: UTF8.self)
        while let last = secret.last, last.isNewline { secret.removeLast() }
        guard !secret.isEmpty else {
            throw AuthError(
                .configurationInvalid, "the client secret from \(path == "-" ? "standard input" : path) is empty")
        }
        return secret
    }
}
