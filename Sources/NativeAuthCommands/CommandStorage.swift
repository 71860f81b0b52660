internal import Foundation
internal import NativeAuth
internal import NativeAuthKeyring

/// The token storage of a command (`--token-storage`), and what the commands say about it.
enum CommandStorage {
    /// Opens the storage; a token file moved into the keyring is announced on stderr, once (the
    /// file is gone afterwards).
    static func open(
        _ choice: TokenStorage.Choice,
        fileDirectory: String?,
        environment: [String: String]
    ) async throws -> TokenStorage {
        var options = TokenStorage.Options()
        options.fileDirectory = fileDirectory
        options.moved = { move in
            let what =
                move.copied
                ? "moved the tokens of \(move.key) from \(move.path) into the keyring"
                : "removed \(move.path): the keyring already holds the tokens of \(move.key)"
            CommandSupport.notice(what)
        }
        return try await TokenStorage.open(choice, options: options, environment: environment)
    }

    /// The notice for a command that stores tokens: where they went when that was not the
    /// keyring `auto` looks for first, and how to choose.
    static func notice(for storage: TokenStorage) -> String? {
        if let reason = storage.fallbackReason {
            return "tokens are kept in files under \(storage.location) (mode 0600), not in a keyring: \(reason)."
                + " Choose with --token-storage keyring|file|none"
        }
        if storage.backend == .memory {
            return "--token-storage none: the tokens are kept in memory only and are gone when this command ends"
        }
        return nil
    }

    /// `status`'s line about the storage.
    static func line(for storage: TokenStorage) async -> String {
        "Storage: \(storage.backend.rawValue) (\(await storage.describedLocation()))"
    }
}
