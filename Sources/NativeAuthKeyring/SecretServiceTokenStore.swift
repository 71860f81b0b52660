#if canImport(CNativeAuthSecret)
    internal import CNativeAuthSecret
    public import NativeAuth

    /// A token store in the freedesktop Secret Service (GNOME Keyring, KeePassXC, KWallet's
    /// Secret Service) on the session bus (`DBUS_SESSION_BUS_ADDRESS`), through libsecret: one item
    /// per key in the default collection (the login keyring), locked across processes like
    /// `FileTokenStore`.
    ///
    /// - Each item has the attributes `application` (``application``), `issuer`, `client_id` and
    ///   `account`, and a label such as "NativeAuth sign-in at https://id.example.com (client cli)",
    ///   so that `secret-tool search application nativeauth` and Seahorse find it. Its secret is the
    ///   JSON the file store writes. An item another program stored with these attributes is read.
    /// - Nothing prompts: a locked collection is an error ("the login keyring is locked: unlock it,
    ///   or use --token-storage file"), and every D-Bus call ends within ``timeout``.
    /// - Saving a set equal to the stored one writes nothing.
    /// - Its lock is a ``KeyringTokenLock``: a `flock` per key in a private directory, so N processes
    ///   refresh once. Its ``revision(of:)`` is a file in that directory that every change through
    ///   NativeAuth renames into place.
    /// - With `movingFilesFrom`, a set found in that `FileTokenStore` for the same key is moved in
    ///   on the first load (or the file removed when the keyring already holds a set), and
    ///   ``remove(_:)`` removes the file too.
    public struct SecretServiceTokenStore: TokenStore {
        /// The `application` attribute of every item.
        public let application: String
        /// The lock of the store's keys, across the processes of this machine.
        public let lock: KeyringTokenLock
        /// How long one call to the Secret Service may take.
        public var timeout: Duration { connection.timeout }
        let storage: KeyringStorage<SecretServiceKeyring>
        let connection: SecretServiceConnection

        /// Creates a store; nothing is asked of the Secret Service until the first call.
        ///
        /// - Parameters:
        ///   - application: The `application` attribute of the items.
        ///   - lockDirectory: The private directory of the lock files; default
        ///     ``TokenStorage/defaultLockDirectory(environment:)``.
        ///   - timeout: How long one call (connecting included) may take.
        ///   - files: A file store whose sets for the same keys move into the keyring.
        ///   - moved: Called after a token file was taken over (to tell the person).
        ///   - clock: What the lock's timeouts are measured with.
        public init(
            application: String = "nativeauth",
            lockDirectory: String? = nil,
            timeout: Duration = .seconds(5),
            movingFilesFrom files: FileTokenStore? = nil,
            moved: (@Sendable (TokenFileMove) -> Void)? = nil,
            clock: AuthClock = .system
        ) {
            self.application = application
            let lockDirectory = lockDirectory ?? TokenStorage.defaultLockDirectory()
            lock = KeyringTokenLock(files: FileTokenLock(directory: lockDirectory, clock: clock))
            connection = SecretServiceConnection(timeout: timeout)
            storage = KeyringStorage(
                backend: SecretServiceKeyring(application: application, connection: connection), lock: lock,
                files: files, moved: moved)
        }

        public func load(_ key: TokenKey) async throws -> TokenSet? { try await storage.load(key) }
        public func save(_ tokens: TokenSet, for key: TokenKey) async throws {
            try await storage.save(tokens, for: key)
        }
        public func remove(_ key: TokenKey) async throws { try await storage.remove(key) }
        public func keys() async throws -> [TokenKey] { try await storage.keys() }
        public func revision(of key: TokenKey) -> TokenStoreRevision? { storage.revision(of: key) }

        /// What the Secret Service's default collection is, asked within ``timeout``.
        public struct Collection: Sendable, Equatable {
            /// Its label ("Login").
            public let label: String
            /// Whether it is locked (the store then refuses every call until it is unlocked).
            public let isLocked: Bool
        }

        /// The default collection (the login keyring), which also says that a Secret Service answers.
        ///
        /// - Throws: `AuthError` (`token_store_failed`) when none answers within ``timeout`` or
        ///   it has no default collection.
        public func defaultCollection() async throws -> Collection {
            try await defaultCollection(timeout: timeout)
        }

        /// Connects and opens a session, within `timeout`: that a Secret Service answers.
        func connect(timeout: Duration) async throws {
            _ = try await connection.call(timeout: timeout) { _, _ in
                SecretServiceConnection.Outcome<Bool>(status: Int32(NATIVEAUTH_SECRET_OK), message: nil, value: true)
            }
        }

        func defaultCollection(timeout: Duration) async throws -> Collection {
            let outcome = try await connection.call(timeout: timeout) { service, cancel in
                var label: UnsafeMutablePointer<CChar>?
                var locked: Int32 = 0
                var message: UnsafeMutablePointer<CChar>?
                let status = nativeauth_secret_default_collection(service, cancel, &label, &locked, &message)
                let name = SecretServiceConnection.take(label) ?? ""
                return .init(
                    status: status, message: SecretServiceConnection.take(message),
                    value: Collection(label: name.isEmpty ? "default" : name, isLocked: locked != 0))
            }
            guard let collection = outcome.value else {
                throw AuthError(.tokenStoreFailed, "the Secret Service has no default keyring to keep the tokens in")
            }
            return collection
        }
    }

    /// The Secret Service half of ``SecretServiceTokenStore``.
    struct SecretServiceKeyring: Keyring {
        let application: String
        let connection: SecretServiceConnection

        private func attributes(_ key: TokenKey) -> [String] {
            ["application", application, "issuer", key.issuer, "client_id", key.clientID, "account", key.account]
        }

        func read(_ key: TokenKey) async throws -> [UInt8]? {
            let attributes = attributes(key)
            let outcome = try await connection.call { service, cancel in
                withCStringArray(attributes) { pairs in
                    var bytes: UnsafeMutablePointer<UInt8>?
                    var length = 0
                    var message: UnsafeMutablePointer<CChar>?
                    let status = nativeauth_secret_lookup(service, pairs, cancel, &bytes, &length, &message)
                    defer { nativeauth_secret_free_bytes(bytes, length) }
                    let value = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) }
                    return .init(status: status, message: SecretServiceConnection.take(message), value: value)
                }
            }
            return outcome.status == NATIVEAUTH_SECRET_NOT_FOUND ? nil : outcome.value
        }

        func write(_ bytes: [UInt8], label: String, for key: TokenKey) async throws {
            let attributes = attributes(key)
            _ = try await connection.call { service, cancel in
                withCStringArray(attributes) { pairs in
                    var message: UnsafeMutablePointer<CChar>?
                    let status = bytes.withUnsafeBufferPointer { buffer in
                        nativeauth_secret_store(
                            service, pairs, label, buffer.baseAddress, buffer.count, "application/json", cancel,
                            &message)
                    }
                    return SecretServiceConnection.Outcome<Bool>(
                        status: status, message: SecretServiceConnection.take(message), value: true)
                }
            }
        }

        func delete(_ key: TokenKey) async throws -> Bool {
            let attributes = attributes(key)
            let outcome = try await connection.call { service, cancel in
                withCStringArray(attributes) { pairs in
                    var removed: Int32 = 0
                    var message: UnsafeMutablePointer<CChar>?
                    let status = nativeauth_secret_delete(service, pairs, cancel, &removed, &message)
                    return .init(status: status, message: SecretServiceConnection.take(message), value: removed > 0)
                }
            }
            return outcome.value ?? false
        }

        func keys() async throws -> [TokenKey] {
            let attributes = ["application", application]
            let wanted = ["issuer", "client_id", "account"]
            let outcome = try await connection.call { service, cancel in
                withCStringArray(attributes) { pairs in
                    withCStringArray(wanted) { names in
                        var values: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
                        var message: UnsafeMutablePointer<CChar>?
                        let status = nativeauth_secret_search(service, pairs, names, cancel, &values, &message)
                        defer { nativeauth_secret_free_strings(values) }
                        var strings: [String] = []
                        var index = 0
                        while let values, let value = values[index] {
                            strings.append(String(cString: value))
                            index += 1
                        }
                        return .init(status: status, message: SecretServiceConnection.take(message), value: strings)
                    }
                }
            }
            let strings = outcome.value ?? []
            return stride(from: 0, to: strings.count - 2, by: 3).compactMap { index in
                let (issuer, clientID, account) = (strings[index], strings[index + 1], strings[index + 2])
                guard !issuer.isEmpty, !clientID.isEmpty else { return nil }
                return TokenKey(issuer: issuer, clientID: clientID, account: account.isEmpty ? "default" : account)
            }
        }
    }
#endif
