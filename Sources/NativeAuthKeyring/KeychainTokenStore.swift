#if canImport(Security)
    public import Foundation
    public import NativeAuth
    internal import Security

    /// A token store in the Keychain (Apple platforms): one generic-password item per key, readable
    /// after the first unlock and never synced or migrated to another device
    /// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), locked across processes like
    /// `FileTokenStore`.
    ///
    /// It shares everything but the Keychain calls with ``SecretServiceTokenStore``: the stored
    /// JSON, writing only changes, the ``KeyringTokenLock``, the revision and moving token files
    /// in. The item's service is ``service``; its account is the key (account, issuer and client id
    /// on separate lines), and the key's JSON is in the item's generic attribute so that
    /// ``keys()`` can list them. Values are passed to the Keychain API directly, not through the
    /// `security` tool, so large token sets fit.
    ///
    /// Compiled and tested on macOS only.
    public struct KeychainTokenStore: TokenStore {
        /// The `kSecAttrService` of every item.
        public let service: String
        /// The lock of the store's keys, across the processes of this machine.
        public let lock: KeyringTokenLock
        let storage: KeyringStorage<KeychainKeyring>

        /// Creates a store.
        ///
        /// - Parameters:
        ///   - service: The items' service attribute.
        ///   - lockDirectory: The private directory of the lock files; default
        ///     ``TokenStorage/defaultLockDirectory(environment:)``.
        ///   - files: A file store whose sets for the same keys move into the Keychain.
        ///   - moved: Called after a token file was taken over.
        ///   - clock: What the lock's timeouts are measured with.
        public init(
            service: String = "nativeauth",
            lockDirectory: String? = nil,
            movingFilesFrom files: FileTokenStore? = nil,
            moved: (@Sendable (TokenFileMove) -> Void)? = nil,
            clock: AuthClock = .system
        ) {
            self.service = service
            lock = KeyringTokenLock(
                files: FileTokenLock(directory: lockDirectory ?? TokenStorage.defaultLockDirectory(), clock: clock))
            storage = KeyringStorage(backend: KeychainKeyring(service: service), lock: lock, files: files, moved: moved)
        }

        public func load(_ key: TokenKey) async throws -> TokenSet? { try await storage.load(key) }
        public func save(_ tokens: TokenSet, for key: TokenKey) async throws {
            try await storage.save(tokens, for: key)
        }
        public func remove(_ key: TokenKey) async throws { try await storage.remove(key) }
        public func keys() async throws -> [TokenKey] { try await storage.keys() }
        public func revision(of key: TokenKey) -> TokenStoreRevision? { storage.revision(of: key) }
    }

    /// The Keychain half of ``KeychainTokenStore``.
    struct KeychainKeyring: Keyring {
        let service: String

        private func itemQuery(_ key: TokenKey) -> [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: "\(key.account)\n\(key.issuer)\n\(key.clientID)",
            ]
        }

        func read(_ key: TokenKey) async throws -> [UInt8]? {
            var query = itemQuery(key)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            try check(status, "read")
            guard let data = result as? Data else {
                throw AuthError(.tokenStoreFailed, "the Keychain returned the item without its data")
            }
            return Array(data)
        }

        func write(_ bytes: [UInt8], label: String, for key: TokenKey) async throws {
            let keyJSON = try KeyringFormat.keyData(key)
            let update: [String: Any] = [
                kSecValueData as String: Data(bytes), kSecAttrLabel as String: label,
                kSecAttrGeneric as String: keyJSON,
            ]
            let status = SecItemUpdate(itemQuery(key) as CFDictionary, update as CFDictionary)
            if status != errSecItemNotFound {
                try check(status, "update")
                return
            }
            var add = itemQuery(key).merging(update) { $1 }
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            try check(SecItemAdd(add as CFDictionary, nil), "add")
        }

        func delete(_ key: TokenKey) async throws -> Bool {
            let status = SecItemDelete(itemQuery(key) as CFDictionary)
            if status == errSecItemNotFound { return false }
            try check(status, "delete")
            return true
        }

        func keys() async throws -> [TokenKey] {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return [] }
            try check(status, "list")
            let items = result as? [[String: Any]] ?? []
            return items.compactMap { item in
                (item[kSecAttrGeneric as String] as? Data).flatMap { try? KeyringFormat.key(from: Array($0)) }
            }
        }

        private func check(_ status: OSStatus, _ what: String) throws {
            guard status != errSecSuccess else { return }
            let reason = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
            if status == errSecInteractionNotAllowed {
                throw AuthError(
                    .tokenStoreFailed, "the Keychain is locked: unlock it, or use --token-storage file",
                    hint: "log in to this Mac's session (or unlock the keychain with `security unlock-keychain`)")
            }
            throw AuthError(.tokenStoreFailed, "the Keychain refused to \(what) the token item: \(reason)")
        }
    }
#endif
