internal import Foundation
internal import NativeAuth

/// Reads a secret from a file only its owner can read, or from standard input (`-`): the ways to
/// hand a command a secret without putting it in the process list.
enum SecretFile {
    /// The secret in `path` (`-`: standard input), without its trailing newline.
    ///
    /// - Throws: `AuthError` (`configuration_invalid`) for a file others can read, an unreadable
    ///   file, or an empty secret.
    static func read(_ path: String) throws(AuthError) -> String {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            try ProviderConfiguration.checkPrivate(path)
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw AuthError(.configurationInvalid, "cannot read the client secret file \(path)", underlying: error)
            }
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
