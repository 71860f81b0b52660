public import Foundation
public import NativeAuth

/// Picks where tokens are kept, the way the sample CLIs' `--token-storage` does: the OS keyring
/// when one answers, else files, and says which it picked.
///
/// ```swift
/// let storage = try await TokenStorage.open(.auto)
/// if let reason = storage.fallbackReason { print("tokens go to \(storage.location): \(reason)") }
/// let auth = Authenticator(provider: provider, store: storage.store, logger: logger)
/// ```
///
/// See <doc:WhereTokensAreKept> for what each backend protects against.
public struct TokenStorage: Sendable {
    /// Where to keep tokens.
    public enum Choice: String, Sendable, CaseIterable {
        /// The keyring when one answers within ``Options/probeTimeout``, else files.
        case auto
        /// The keyring, or an error when none answers (fail closed).
        case keyring
        /// Files: `FileTokenStore`.
        case file
        /// Memory only: nothing outlives the process (containers, CI).
        case none
    }

    /// The kind of store picked.
    public enum Backend: String, Sendable {
        /// ``SecretServiceTokenStore`` on Linux, `KeychainTokenStore` on Apple platforms.
        case keyring
        /// `FileTokenStore`.
        case file
        /// `MemoryTokenStore`.
        case memory
    }

    /// What ``open(_:options:environment:)`` needs besides the choice.
    public struct Options: Sendable {
        /// The keyring items' application (Secret Service) or service (Keychain) attribute.
        public var application = "nativeauth"
        /// The file store's directory; default `FileTokenStore/defaultDirectory(environment:)`.
        /// With the keyring, sets found there move in.
        public var fileDirectory: String?
        /// The keyring stores' lock directory; default ``TokenStorage/defaultLockDirectory(environment:)``.
        public var lockDirectory: String?
        /// How long `auto` and `keyring` wait for a keyring to answer.
        public var probeTimeout: Duration = .seconds(3)
        /// How long each later keyring call may take.
        public var timeout: Duration = .seconds(5)
        /// Called after a token file moved into the keyring.
        public var moved: (@Sendable (TokenFileMove) -> Void)?
        /// What lock timeouts are measured with.
        public var clock: AuthClock = .system

        /// Default options.
        public init() {}
    }

    /// The kind of store picked.
    public let backend: Backend
    /// Where the tokens are, for a person: a directory, or the keyring and its collection.
    public let location: String
    /// The store.
    public let store: any TokenStore
    /// Why `auto` picked files instead of the keyring (to tell the person once); `nil` otherwise.
    public let fallbackReason: String?
    /// Where the active account is kept (see `Accounts`): a small file in the file store's
    /// directory for files and the keyring alike (it is not a secret), memory for ``Backend/memory``.
    public let activeAccounts: any ActiveAccountStore
    /// What was learned about the protected resources the tools were sent to (`KnownResource`):
    /// small files beside the active-account ones, memory for ``Backend/memory``.
    public let knownResources: any KnownResourceStore
    let options: Options
    let environment: [String: String]

    /// The keyring stores' lock directory: `$XDG_RUNTIME_DIR/nativeauth` when `XDG_RUNTIME_DIR` is
    /// set and absolute (a private per-user directory that the system empties at logout), else
    /// the file store's default directory.
    public static func defaultLockDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/nativeauth" }
        return FileTokenStore.defaultDirectory(environment: environment)
    }

    /// Opens the storage `choice` names.
    ///
    /// - Throws: `AuthError` (`token_store_failed`) when `choice` is ``Choice/keyring`` and no
    ///   keyring answers, saying how to start one or choose files.
    public static func open(
        _ choice: Choice = .auto,
        options: Options = Options(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> TokenStorage {
        let fileDirectory = options.fileDirectory ?? FileTokenStore.defaultDirectory(environment: environment)
        let files = FileTokenStore(directory: fileDirectory, clock: options.clock)
        func make(_ backend: Backend, _ location: String, _ store: any TokenStore, _ reason: String? = nil)
            -> TokenStorage
        {
            TokenStorage(
                backend: backend, location: location, store: store, fallbackReason: reason,
                activeAccounts: backend == .memory
                    ? MemoryActiveAccountStore() : FileActiveAccountStore(directory: fileDirectory),
                knownResources: backend == .memory
                    ? MemoryKnownResourceStore() : FileKnownResourceStore(directory: fileDirectory),
                options: options, environment: environment)
        }
        switch choice {
        case .file:
            return make(.file, fileDirectory, files)
        case .none:
            return make(
                .memory, "memory (nothing is kept after the process ends)", MemoryTokenStore(clock: options.clock))
        case .keyring, .auto:
            switch await probeKeyring(options: options, files: files, environment: environment) {
            case .success(let (store, location)):
                return make(.keyring, location, store)
            case .failure(let error):
                guard choice == .auto else { throw error }
                return make(.file, fileDirectory, files, error.message)
            }
        }
    }

    /// ``location``, and for the Secret Service the default collection and whether it is locked
    /// (`Secret Service, collection "Login"`), asked within the store's timeout.
    public func describedLocation() async -> String {
        #if canImport(CNativeAuthSecret)
            if let keyring = store as? SecretServiceTokenStore {
                do {
                    let collection = try await keyring.defaultCollection()
                    return "Secret Service, collection \"\(collection.label)\"\(collection.isLocked ? ", locked" : "")"
                } catch let error as AuthError {
                    return "Secret Service (\(error.message))"
                } catch {
                    return location
                }
            }
        #endif
        return location
    }

    /// Removes `key` from the backends other than ``backend`` where it is found (a `logout` that
    /// leaves nothing behind); returns what could not be checked or removed. A keyring that does
    /// not answer holds nothing to remove and is not an error.
    public func removeElsewhere(_ key: TokenKey) async -> [AuthError] {
        var problems: [AuthError] = []
        if backend != .file {
            do {
                try FileTokenStore(directory: options.fileDirectory, clock: options.clock).remove(key)
            } catch let error as AuthError {
                problems.append(error)
            } catch {
                problems.append(AuthError(.tokenStoreFailed, "cannot remove the token file", underlying: error))
            }
        }
        if backend != .keyring {
            if case .success(let (store, _)) = await Self.probeKeyring(
                options: options, files: nil, environment: environment)
            {
                do {
                    try await store.remove(key)
                } catch let error as AuthError {
                    problems.append(error)
                } catch {
                    problems.append(AuthError(.tokenStoreFailed, "cannot remove the keyring item", underlying: error))
                }
            }
        }
        return problems
    }

    /// The platform's keyring store and its location when it answers within the probe timeout.
    static func probeKeyring(
        options: Options,
        files: FileTokenStore?,
        environment: [String: String]
    ) async -> Result<(any TokenStore, String), AuthError> {
        let lockDirectory = options.lockDirectory ?? defaultLockDirectory(environment: environment)
        #if canImport(Security)
            let store = KeychainTokenStore(
                service: options.application, lockDirectory: lockDirectory, movingFilesFrom: files,
                moved: options.moved, clock: options.clock)
            return .success((store, "Keychain, service \"\(options.application)\""))
        #elseif canImport(CNativeAuthSecret)
            let store = SecretServiceTokenStore(
                application: options.application, lockDirectory: lockDirectory,
                timeout: options.timeout, movingFilesFrom: files, moved: options.moved,
                clock: options.clock)
            do {
                // Connecting and opening a session says that one answers; which collection, and
                // whether it is locked, ``describedLocation()`` asks (one round trip fewer here).
                try await store.connect(timeout: options.probeTimeout)
                return .success((store, "Secret Service"))
            } catch let error as AuthError {
                return .failure(error)
            } catch {
                return .failure(AuthError(.tokenStoreFailed, "the keyring check was cancelled"))
            }
        #else
            return .failure(AuthError(.tokenStoreFailed, "this platform has no keyring NativeAuth can use"))
        #endif
    }
}
