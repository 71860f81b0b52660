// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    internal import Crypto
    internal import Foundation
    internal import LenientJSON
    public import Logging
    public import NativeAuth
    public import PostgresNIO
    public import ServiceLifecycle

    /// Keeps token sets in PostgreSQL, so that a fleet of instances (replicas of a service, workers of
    /// an agent platform) shares them, and refreshes each one once however many instances need it.
    ///
    /// - **Sealed at rest.** Each set is sealed with AES-256-GCM under the current ``SealingKey``,
    ///   bound to its row; the table holds the key's id, never a token. A set sealed with a key this
    ///   instance lacks, or that its key does not open, is a clear error, never an empty store.
    /// - **One refresh across machines.** The lock (``PostgresTokenLock``) is
    ///   `pg_advisory_xact_lock` on the key, held by a transaction for the whole reload, refresh and
    ///   save; a crashed holder's session ends and releases it.
    /// - **Caches that stay honest.** While ``run()`` runs, the store listens on a channel that
    ///   every save and removal notifies (`LISTEN`/`NOTIFY`, in the statement that writes). An
    ///   authenticator then uses its set in memory without a database round trip until another
    ///   instance changes it, and a logout anywhere counts everywhere at once. Without ``run()``,
    ///   each use reads the row's generation (one small query).
    ///
    /// The table is created on first use by a versioned migration (or by ``migrate()`` for teams that
    /// run migrations themselves, with ``Configuration/migratesOnFirstUse`` off).
    ///
    /// ```swift
    /// let client = PostgresClient(configuration: .init(host: "db", username: "app", password: pw,
    ///                                                  database: "app", tls: .require(.makeClientConfiguration())))
    /// let store = PostgresTokenStore(client: client, keys: try SealingKeys(current: .init(id: "k1", base64: key)))
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask { await client.run() }
    ///     group.addTask { await store.run() }
    ///     let auth = Authenticator(provider: provider, store: store)
    ///     …
    /// }
    /// ```
    public final class PostgresTokenStore: TokenStore, Service {
        /// The store's settings.
        public struct Configuration: Sendable {
            /// Whether the first operation creates or upgrades the table. Default `true`.
            public var migratesOnFirstUse: Bool
            /// How long a holder of the lock may leave its transaction idle (a hung process, a machine
            /// cut off without closing its connection) before PostgreSQL ends its session and frees
            /// the lock. Default 2 minutes: far longer than any refresh.
            public var lockHolderIdleLimit: Duration
            /// How long one operation may take, a wait for a connection included, before it fails
            /// (a database that is down answers with this error). Default 10 seconds.
            public var operationTimeout: Duration
            /// How many of the pool's connections this store's locks may use at once, waiting for a
            /// key's lock or holding it; more keys locked at once (many accounts refreshing together)
            /// wait their turn in this process. Default 4.
            ///
            /// Keep it at least 2 below the client's `maximumConnections`: the reads and writes inside
            /// each lock, and ``PostgresTokenStore/run()``'s listener, need connections of their own.
            public var maximumLockConnections: Int

            /// Creates settings; every parameter has the documented default.
            public init(
                migratesOnFirstUse: Bool = true,
                lockHolderIdleLimit: Duration = .seconds(120),
                operationTimeout: Duration = .seconds(10),
                maximumLockConnections: Int = 4
            ) {
                self.migratesOnFirstUse = migratesOnFirstUse
                self.lockHolderIdleLimit = lockHolderIdleLimit
                self.operationTimeout = operationTimeout
                self.maximumLockConnections = maximumLockConnections
            }
        }

        /// What the store did, for metrics and tests: how often it went to the database and how often
        /// its cache answered.
        public struct Statistics: Sendable, Equatable {
            /// Queries that read a row or its generation.
            public var databaseReads = 0
            /// Saves and removals.
            public var databaseWrites = 0
            /// Revisions answered from memory, kept current by notifications.
            public var revisionsFromMemory = 0
            /// Notifications received from any instance (this one's own included).
            public var notifications = 0
            /// Locks taken (``PostgresTokenLock``).
            public var locksTaken = 0
            /// How long the locks taken were waited for, in all: from the request to the lock held
            /// (a wait in this process for a connection included).
            public var totalLockWait: Duration = .zero
            /// The longest of those waits.
            public var longestLockWait: Duration = .zero
        }

        /// The table's name.
        public static let tableName = "nativeauth_token_sets"
        /// The prefix of the channel every save and removal notifies; the rest is derived from the
        /// store's secret (``notificationChannel()``), so that a role without access to the table
        /// cannot listen to, or forge, the store's notifications by name.
        public static let channelPrefix = "nativeauth_"

        let client: PostgresClient
        let keys: SealingKeys
        let configuration: Configuration
        let logger: Logger
        let cache = Locked(Cache())
        /// The newest generation this instance read or wrote per key: a row older than it is refused.
        let seen = Locked<[TokenKey: Int64]>([:])
        let lockConnections: ConnectionGate
        let migration = Locked<Task<Void, any Error>?>(nil)
        private let secret = Locked<Task<StoreSecret, any Error>?>(nil)

        /// The lock of this store's keys: every instance that shares the database.
        public var lock: PostgresTokenLock { PostgresTokenLock(store: self) }

        /// Creates a store on `client`, which the application runs (`client.run()`).
        ///
        /// - Parameters:
        ///   - client: The connection pool. Each holder of a lock uses one connection for its
        ///     transaction and others for the reads and writes inside it; see
        ///     ``Configuration/maximumLockConnections``.
        ///   - keys: The sealing keys.
        ///   - configuration: The settings.
        ///   - logger: Where the store logs (never a token).
        public init(
            client: PostgresClient,
            keys: SealingKeys,
            configuration: Configuration = Configuration(),
            logger: Logger = Logger(label: "NativeAuthPostgres")
        ) {
            self.client = client
            self.keys = keys
            self.configuration = configuration
            self.logger = logger
            self.lockConnections = ConnectionGate(slots: configuration.maximumLockConnections)
        }

        /// What the store did so far.
        public var statistics: Statistics { cache.withLock { $0.statistics } }

        /// Whether ``run()`` listens for changes now (revisions then come from memory): for health
        /// checks, and for tests that wait until it does.
        public var isListening: Bool { cache.withLock { $0.listening } }

        // MARK: - TokenStore

        public func load(_ key: TokenKey) async throws -> TokenSet? {
            try await ensureMigrated()
            // What this instance knew before the read: a write of its own that ends during the read
            // may be newer than the row read, which is not a row going backwards.
            let floor = seen.withLock { $0[key] }
            let row = try await operation("read the tokens of \(key)") { () -> (Int64, String?, Data?)? in
                let rows = try await self.client.query(
                    """
                    SELECT generation, key_id, sealed FROM nativeauth_token_sets
                    WHERE issuer = \(key.issuer) AND client_id = \(key.clientID) AND account = \(key.account)
                    """,
                    logger: self.logger
                )
                for try await row in rows.decode((Int64, String?, Data?).self) { return row }
                return nil
            }
            count { $0.databaseReads += 1 }
            guard let row else { return nil }
            try checkForward(key, generation: row.0, floor: floor)
            guard let keyID = row.1, let sealed = row.2 else { return nil }
            let plaintext = try keys.open(sealed, keyID: keyID, for: key, generation: row.0)
            do {
                guard let object = try JSONValue.parse(plaintext).objectValue else {
                    throw AuthError(.tokenStoreFailed, "the stored tokens of \(key) are not a JSON object")
                }
                return try TokenSet(storageJSON: object)
            } catch let error as AuthError {
                throw error
            } catch {
                throw AuthError(
                    .tokenStoreFailed,
                    "the stored tokens of \(key) are damaged (\(error))",
                    hint: "sign in again to replace them"
                )
            }
        }

        public func save(_ tokens: TokenSet, for key: TokenKey) async throws {
            try await ensureMigrated()
            let plaintext: [UInt8]
            do {
                plaintext = try tokens.storageJSON.encoded()
            } catch {
                throw AuthError(.tokenStoreFailed, "cannot encode the tokens of \(key): \(error)")
            }
            let keyID = keys.current.id
            let lockID = try await self.advisoryLockID(of: key)
            let channel = try await notificationChannel()
            // Compare and swap: the value is sealed for the generation it will have, which needs the
            // one it replaces; another writer in between makes the swap fail, and it is done again.
            var replaced = try await readGeneration(of: key)
            // Each failed swap means another writer's landed: this ends however many write at once.
            for _ in 0..<64 {
                let next = replaced + 1
                let sealed = try keys.seal(plaintext, for: key, generation: next)
                // The notification goes out when the statement commits, with the new generation.
                let written = try await write(
                    "save the tokens of \(key)", lockID: lockID,
                    """
                    WITH saved AS (
                        INSERT INTO nativeauth_token_sets AS stored (issuer, client_id, account, generation, key_id, sealed)
                        VALUES (\(key.issuer), \(key.clientID), \(key.account), \(next), \(keyID), \(sealed))
                        ON CONFLICT (issuer, client_id, account) DO UPDATE
                        SET generation = EXCLUDED.generation, key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed,
                            updated_at = now()
                        WHERE stored.generation = \(replaced)
                        RETURNING generation)
                    SELECT generation, pg_notify(\(channel), \(String(lockID)) || ':' || generation)::text
                    FROM saved
                    """
                )
                if let written {
                    // This instance's own write: what it reads next must not be older.
                    seen.withLock { $0[key] = written }
                    return
                }
                replaced = try await readGeneration(of: key)
            }
            throw AuthError(
                .tokenStoreFailed, "the tokens of \(key) were changed by other writers 64 times while this one saved",
                hint: "try again", isRetryable: true)
        }

        /// Refuses a row whose generation is older than one this instance read or wrote: someone who
        /// can write the table put back an older row (its sealed value, bound to its generation, would
        /// open), such as the tokens from before a logout.
        private func checkForward(_ key: TokenKey, generation: Int64, floor: Int64?) throws {
            let older: Int64? = seen.withLock { seen in
                if let floor, generation < floor { return floor }
                seen[key] = max(seen[key] ?? generation, generation)
                return nil
            }
            if let older {
                throw AuthError(
                    .tokenStoreFailed,
                    "the stored tokens of \(key) went backwards (generation \(generation) after \(older)): someone who can"
                        + " write the table put back an older row; refused",
                    hint:
                        "check who can write nativeauth_token_sets (see the NativeAuthPostgres article on privileges);"
                        + " sign in again to replace the row")
            }
        }

        public func remove(_ key: TokenKey) async throws {
            try await ensureMigrated()
            let lockID = try await self.advisoryLockID(of: key)
            let channel = try await notificationChannel()
            // The row stays, emptied, so that its generation keeps counting: a revision never comes back.
            let removed = try await write(
                "remove the tokens of \(key)", lockID: lockID,
                """
                WITH removed AS (
                    UPDATE nativeauth_token_sets SET generation = generation + 1, key_id = NULL, sealed = NULL,
                        updated_at = now()
                    WHERE issuer = \(key.issuer) AND client_id = \(key.clientID) AND account = \(key.account)
                        AND sealed IS NOT NULL
                    RETURNING generation)
                SELECT generation, pg_notify(\(channel), \(String(lockID)) || ':' || generation)::text
                FROM removed
                """
            )
            if let removed { seen.withLock { $0[key] = max($0[key] ?? removed, removed) } }
        }

        /// Runs a write whose answer is the row's new generation (`nil` when it changed nothing), which
        /// it also sent to every instance, and notes it.
        @discardableResult
        private func write(_ what: String, lockID: Int64, _ query: PostgresQuery) async throws -> Int64? {
            let generation = try await operation(what) { () -> Int64? in
                let rows = try await self.client.query(query, logger: self.logger)
                for try await row in rows.decode((Int64, String?).self) { return row.0 }
                return nil
            }
            wrote(lockID, generation: generation)
            return generation
        }

        public func keys() async throws -> [TokenKey] {
            try await ensureMigrated()
            let keys = try await operation("list the stored accounts") { () -> [TokenKey] in
                var keys: [TokenKey] = []
                let rows = try await self.client.query(
                    "SELECT issuer, client_id, account FROM nativeauth_token_sets WHERE sealed IS NOT NULL",
                    logger: self.logger
                )
                for try await (issuer, clientID, account) in rows.decode((String, String, String).self) {
                    keys.append(TokenKey(issuer: issuer, clientID: clientID, account: account))
                }
                return keys
            }
            count { $0.databaseReads += 1 }
            return keys
        }

        /// The row's generation: from memory while ``run()`` listens and has seen the key, else read.
        public func revision(of key: TokenKey) async throws -> TokenStoreRevision? {
            let lockID = try await self.advisoryLockID(of: key)
            let known: (generation: Int64?, epoch: Int?) = cache.withLock { cache in
                guard cache.listening else { return (nil, nil) }
                if let generation = cache.generations[lockID] {
                    cache.statistics.revisionsFromMemory += 1
                    return (generation, nil)
                }
                return (nil, cache.epoch)
            }
            if let generation = known.generation { return TokenStoreRevision([generation]) }
            // One read per key at a time: callers that ask while it runs share its answer (a write
            // through this store ends the sharing, so that its own change shows at once).
            let (read, started, hintBefore) = cache.withLock { cache -> (Cache.Read, Bool, Int64?) in
                if let read = cache.reads[lockID] { return (read, false, nil) }
                cache.nextRead += 1
                let read = Cache.Read(id: cache.nextRead, task: Task { try await self.readGeneration(of: key) })
                cache.reads[lockID] = read
                return (read, true, cache.hints[lockID])
            }
            let result = await read.task.result
            guard started else { return TokenStoreRevision([try result.get()]) }
            let forged: (hint: Int64, generation: Int64)? = cache.withLock { cache in
                if cache.reads[lockID]?.id == read.id { cache.reads[lockID] = nil }
                guard case .success(let generation) = result else { return nil }
                cache.statistics.databaseReads += 1
                // Kept only when the listener ran the whole time: then no change since is missed.
                guard let epoch = known.epoch, cache.listening, cache.epoch == epoch else { return nil }
                // A notification is a hint: the row read is kept once it shows the hinted generation.
                // A hint the table does not bear out, though it was there before this read began, named
                // a generation that does not exist: it is dropped, and said.
                if let hint = cache.hints[lockID], generation < hint {
                    guard let hintBefore, hintBefore >= hint else { return nil }
                    cache.hints[lockID] = nil
                    return (hint, generation)
                }
                cache.hints[lockID] = nil
                cache.generations[lockID] = max(cache.generations[lockID] ?? generation, generation)
                return nil
            }
            if let forged {
                logger.warning(
                    """
                    a token change notification named a generation the table does not have: not trusted (another \
                    role that can connect may be sending them; see the NativeAuthPostgres article on privileges)
                    """,
                    metadata: ["notified": "\(forged.hint)", "stored": "\(forged.generation)"])
            }
            return TokenStoreRevision([try result.get()])
        }

        /// The row's generation, read from the database (0 for a key never saved).
        private func readGeneration(of key: TokenKey) async throws -> Int64 {
            try await ensureMigrated()
            return try await operation("read the generation of \(key)") { () -> Int64 in
                let rows = try await self.client.query(
                    """
                    SELECT generation FROM nativeauth_token_sets
                    WHERE issuer = \(key.issuer) AND client_id = \(key.clientID) AND account = \(key.account)
                    """,
                    logger: self.logger
                )
                for try await generation in rows.decode(Int64.self) { return generation }
                return 0
            }
        }

        // MARK: - Support

        /// What the store keeps in memory.
        struct Cache {
            var listening = false
            /// Changes whenever listening starts or stops: a read that began in another epoch may
            /// have missed a change, and is not kept.
            var epoch = 0
            /// The latest generation seen per lock id.
            var generations: [Int64: Int64] = [:]
            /// The largest generation notifications named per lock id, not yet borne out by a read.
            var hints: [Int64: Int64] = [:]
            var lockIDs: [TokenKey: Int64] = [:]
            var statistics = Statistics()
            /// The generation read running per lock id, which callers that ask meanwhile share.
            var reads: [Int64: Read] = [:]
            var nextRead = 0

            struct Read {
                let id: Int
                let task: Task<Int64, any Error>
            }
        }

        /// The advisory lock id of `key`, and its id in notifications: 64 bits of HMAC-SHA-256 of the
        /// key under the store's secret, so that a role that may only connect cannot compute it (to
        /// hold an account's lock, or to know whose lock it sees). `pg_locks` shows it as `classid`
        /// (high 32 bits) and `objid` (low 32 bits); a lock wait that times out names the session
        /// holding it.
        ///
        /// - Throws: `AuthError` (`token_store_failed`) when the store's secret cannot be read.
        public func advisoryLockID(of key: TokenKey) async throws -> Int64 {
            if let known = cache.withLock({ $0.lockIDs[key] }) { return known }
            let secret = try await storeSecret()
            let code = HMAC<SHA256>.authenticationCode(for: SealingKeys.associatedData(key), using: secret.key)
            let id = Array(code).prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
            cache.withLock { cache in
                if cache.lockIDs.count > 10_000 { cache.lockIDs = [:] }
                cache.lockIDs[key] = id
            }
            return id
        }

        /// The channel every save and removal notifies: ``channelPrefix`` and 96 bits of HMAC-SHA-256
        /// under the store's secret.
        ///
        /// - Throws: `AuthError` (`token_store_failed`) when the store's secret cannot be read.
        public func notificationChannel() async throws -> String {
            try await storeSecret().channel
        }

        /// The secret of the store's migration 2, read once.
        struct StoreSecret: Sendable {
            let key: SymmetricKey
            let channel: String
        }

        private func storeSecret() async throws -> StoreSecret {
            try await ensureMigrated()
            let task = secret.withLock { current in
                if let current { return current }
                let task = Task { try await self.readStoreSecret() }
                current = task
                return task
            }
            do {
                return try await task.value
            } catch {
                secret.withLock { if $0 == task { $0 = nil } }
                throw error
            }
        }

        private func readStoreSecret() async throws -> StoreSecret {
            let bytes = try await operation("read the token store's secret") { () -> Data? in
                do {
                    let rows = try await self.client.query(
                        "SELECT secret FROM nativeauth_store_secret", logger: self.logger)
                    for try await secret in rows.decode(Data.self) { return secret }
                    return nil
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                    return nil  // undefined_table: not migrated to version 2
                }
            }
            guard let bytes, bytes.count == 32 else {
                throw AuthError(
                    .tokenStoreFailed, "the token store's secret (table nativeauth_store_secret) is missing",
                    hint: "run the store's migrations (PostgresTokenStore.migrate()), or let it migrate on first use")
            }
            let key = SymmetricKey(data: bytes)
            let code = HMAC<SHA256>.authenticationCode(for: Data("nativeauth notification channel".utf8), using: key)
            let channel = Self.channelPrefix + Array(code).prefix(12).map { String(format: "%02x", $0) }.joined()
            return StoreSecret(key: key, channel: channel)
        }

        /// Runs `body`, bounded by ``Configuration/operationTimeout``; a database error becomes an
        /// `AuthError` (`token_store_failed`) that says what failed and what to do.
        func operation<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T
        {
            let timeout = configuration.operationTimeout
            do {
                return try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask { try await body() }
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        return nil
                    }
                    defer { group.cancelAll() }
                    guard let first = try await group.next(), let value = first else {
                        throw AuthError(
                            .tokenStoreFailed,
                            "cannot \(what): PostgreSQL did not answer within \(timeout)",
                            hint: "check that the database is up and reachable; the operation can be tried again",
                            isRetryable: true
                        )
                    }
                    return value
                }
            } catch let error as AuthError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as PostgresTransactionError {
                // A transaction's error wraps the one that ended it: this store's own, or the database's.
                let cause = error.closureError ?? error.beginError ?? error.commitError
                if let cause = cause as? AuthError { throw cause }
                throw Self.storeError(what, cause ?? error)
            } catch {
                throw Self.storeError(what, error)
            }
        }

        /// A database error as an `AuthError`; never the query's values.
        static func storeError(_ what: String, _ error: any Error) -> AuthError {
            AuthError(
                .tokenStoreFailed,
                "cannot \(what): \(describe(error))",
                hint: "check that the database is up and reachable and that its user may use the table; the"
                    + " operation can be tried again",
                isRetryable: true
            )
        }

        /// A PostgreSQL error in words: the server's SQLSTATE and message, or the connection problem.
        /// (`PSQLError`'s own description hides everything, and its reflection holds the query's values.)
        static func describe(_ error: any Error) -> String {
            guard let error = error as? PSQLError else {
                // The pool's own errors (its module is not public API): named by their case.
                let name = String(reflecting: error)
                if name.contains("CircuitBreaker") {
                    return "PostgreSQL has not accepted a connection for a minute or more; the client keeps trying"
                }
                if name.contains("poolShutdown") { return "the PostgreSQL client was shut down" }
                return "\(type(of: error))"
            }
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? "?"
                let message = info[.message] ?? "no message"
                return "PostgreSQL answered \(state): \(message)"
            }
            switch error.code {
            case .connectionError: return "cannot connect to PostgreSQL"
            case .serverClosedConnection, .uncleanShutdown: return "PostgreSQL closed the connection"
            case .poolClosed: return "the PostgreSQL client was shut down"
            default: return "PostgreSQL client error \(error.code)"
            }
        }
    }
#endif
