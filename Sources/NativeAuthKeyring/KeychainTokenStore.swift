#if canImport(Security)
    public import Foundation
    public import NativeAuth
    internal import Security

    /// A token store in the Keychain (Apple platforms): one generic-password item per key, readable
    /// after the first unlock and never synced or migrated to another device
    /// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), locked across processes like
    /// `FileTokenStore`.
    ///
    /// Items go to the data protection keychain (`kSecUseDataProtectionKeychain`), where that
    /// accessibility holds: the item is encrypted with a key of this device, readable while the
    /// session has been unlocked once since start-up, and belongs to an access group: only programs
    /// signed into that group (by the same team, with the same `keychain-access-groups` entitlement)
    /// read it, without asking. That keychain needs the program to be signed with an application
    /// identifier; without one (an unsigned command-line tool) the Keychain answers
    /// `errSecMissingEntitlement`, and the store falls back to the login keychain for the rest of
    /// the process. There the item lives in the keychain file, which ignores `…ThisDeviceOnly`, and
    /// its access list trusts the program that created it (as identified by its code signature):
    /// any other program asks the person first. Items that an earlier version left in the login
    /// keychain are read there and moved.
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
        let storage: KeyringStorage<KeychainKeyring<SecurityKeychainCalls>>

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
            storage = KeyringStorage(
                backend: KeychainKeyring(calls: SecurityKeychainCalls(service: service)), lock: lock, files: files,
                moved: moved)
        }

        public func load(_ key: TokenKey) async throws -> TokenSet? { try await storage.load(key) }
        public func save(_ tokens: TokenSet, for key: TokenKey) async throws {
            try await storage.save(tokens, for: key)
        }
        public func remove(_ key: TokenKey) async throws { try await storage.remove(key) }
        public func keys() async throws -> [TokenKey] { try await storage.keys() }
        public func revision(of key: TokenKey) -> TokenStoreRevision? { storage.revision(of: key) }
    }

    /// The Security framework's item calls, for ``KeychainKeyring``: generic-password items of one
    /// service, in the data protection keychain (`kSecUseDataProtectionKeychain`) or the file one.
    struct SecurityKeychainCalls: KeychainCalls {
        let service: String

        private func query(_ account: String?, _ keychain: KeychainKind) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecUseDataProtectionKeychain as String: keychain == .dataProtection,
            ]
            if let account { query[kSecAttrAccount as String] = account }
            return query
        }

        private func attributes(_ item: KeychainItem) -> [String: Any] {
            [
                kSecValueData as String: Data(item.value), kSecAttrLabel as String: item.label,
                kSecAttrGeneric as String: Data(item.generic),
            ]
        }

        private func outcome(_ status: OSStatus) -> KeychainOutcome {
            switch status {
            case errSecSuccess: .success
            case errSecItemNotFound: .notFound
            case errSecMissingEntitlement: .missingEntitlement
            case errSecInteractionNotAllowed: .locked
            default:
                .failure(
                    status: status, reason: SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)")
            }
        }

        func copy(_ account: String, in keychain: KeychainKind) -> (KeychainOutcome, [UInt8]?) {
            var query = self.query(account, keychain)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            return (outcome(status), (result as? Data).map { Array($0) })
        }

        func update(_ account: String, to item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome {
            outcome(SecItemUpdate(query(account, keychain) as CFDictionary, attributes(item) as CFDictionary))
        }

        func add(_ account: String, _ item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome {
            var add = query(account, keychain).merging(attributes(item)) { $1 }
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            return outcome(SecItemAdd(add as CFDictionary, nil))
        }

        func delete(_ account: String, in keychain: KeychainKind) -> KeychainOutcome {
            outcome(SecItemDelete(query(account, keychain) as CFDictionary))
        }

        func list(in keychain: KeychainKind) -> (KeychainOutcome, [[UInt8]]) {
            var query = self.query(nil, keychain)
            query[kSecReturnAttributes as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            let items = result as? [[String: Any]] ?? []
            return (outcome(status), items.compactMap { ($0[kSecAttrGeneric as String] as? Data).map { Array($0) } })
        }
    }
#endif
