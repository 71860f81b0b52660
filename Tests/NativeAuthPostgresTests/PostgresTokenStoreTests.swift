// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Crypto
    import Foundation
    import HTTPTypes
    import NIOConcurrencyHelpers
    import NativeAuth
    import NativeAuthPostgres
    import NativeAuthTesting
    import PostgresNIO
    import TestSupport
    import Testing

    /// PostgresTokenStore against a real PostgreSQL 15 (scripts/postgres), each test in a database of
    /// its own.
    @Suite(.testLogging, .enabled(if: TestDatabase.isAvailable, "needs NATIVEAUTH_POSTGRES_URL (scripts/postgres)"))
    struct PostgresTokenStoreTests {
        @Test func theStoreConformsReadingRevisionsFromTheDatabase() async throws {
            try await TestDatabase.withStores(2, listening: false) { stores in
                try await TokenStoreConformance(Self.alternating(stores)).run()
            }
        }

        @Test func theStoreConformsWithRevisionsKeptByNotifications() async throws {
            try await TestDatabase.withStores(2, listening: true) { stores in
                try await TokenStoreConformance(Self.alternating(stores)).run()
                #expect(
                    stores[0].statistics.revisionsFromMemory > 0, "the suite reads revisions through its first handle")
                #expect(stores.allSatisfy { $0.statistics.notifications > 0 })
            }
        }

        /// Each call the next of `stores`: the suite's two handles are two instances.
        static func alternating(_ stores: [PostgresTokenStore]) -> @Sendable () -> any TokenStore {
            let next = NIOLockedValueBox(0)
            return {
                stores[
                    next.withLockedValue { index in
                        defer { index += 1 }
                        return index % stores.count
                    }]
            }
        }

        static func tokens(_ marker: String) -> TokenSet {
            TokenSet(
                accessToken: "pg-access-\(marker)-\(UUID().uuidString)",
                tokenType: "Bearer",
                refreshToken: "pg-refresh-\(marker)-\(UUID().uuidString)",
                idToken: "pg.id.\(marker)-\(UUID().uuidString)",
                scopes: ["openid"],
                expiresAt: Date().addingTimeInterval(3600),
                issuedAt: Date()
            )
        }

        /// A dump of the table (every column as text, the sealed bytes as hex and as raw bytes) holds
        /// no token, and shows which key sealed each row.
        @Test func theTableHoldsNoTokenOnlySealedBytesAndTheKeyID() async throws {
            let database = try await TestDatabase.create()
            let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "alice")
            let tokens = Self.tokens("sealed")
            try await TestDatabase.withStores(1, database: database, listening: false) { stores in
                try await stores[0].save(tokens, for: key)
                let loaded = try await stores[0].load(key)
                #expect(loaded == tokens)
            }
            let dump = try await TestDatabase.withClient(database: database) { client in
                var text = ""
                for try await (row, sealed) in try await client.query(
                    "SELECT t::text, t.sealed FROM nativeauth_token_sets t", logger: TestDatabase.logger
                ).decode((String, Data).self) {
                    text += row + (String(data: sealed, encoding: .isoLatin1) ?? "")
                }
                return text
            }
            #expect(dump.contains("alice") && dump.contains("k1"), "the row and its key id are there")
            for secret in [tokens.accessToken, tokens.refreshToken ?? "", tokens.idToken ?? ""] {
                #expect(!dump.contains(secret), "a token is in the table")
            }
            #expect(!dump.contains("pg-access") && !dump.contains("pg-refresh"))
        }

        /// A key under the same id that is not the one that sealed, a key id this instance lacks, and
        /// rotation: each a clear error naming the key, never an empty store; the next save re-seals.
        @Test func aWrongOrMissingKeyIsAClearErrorAndRotationReseals() async throws {
            let database = try await TestDatabase.create()
            let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "bob")
            let tokens = Self.tokens("rotation")
            let first = try SealingKey(id: "k1", key: SymmetricKey(size: .bits256))
            let second = try SealingKey(id: "k2", key: SymmetricKey(size: .bits256))
            try await TestDatabase.withStores(
                1, database: database, keys: SealingKeys(current: first), listening: false
            ) {
                try await $0[0].save(tokens, for: key)
            }
            // Another key under the id "k1".
            try await TestDatabase.withStores(1, database: database, listening: false) { stores in
                let error = await #expect(throws: AuthError.self) { try await stores[0].load(key) }
                #expect(error?.code == .tokenStoreFailed)
                #expect(
                    error?.message.contains("\"k1\" does not open the stored tokens") == true,
                    "\(String(describing: error))")
                let listed = try await stores[0].keys()
                #expect(listed == [key], "the row is still listed, not lost")
            }
            // Only "k2": the row names "k1".
            try await TestDatabase.withStores(
                1, database: database, keys: SealingKeys(current: second), listening: false
            ) {
                stores in
                let error = await #expect(throws: AuthError.self) { try await stores[0].load(key) }
                #expect(
                    error?.message.contains("sealed with the key \"k1\", which this instance was not given") == true)
                #expect(error?.hint?.contains("previous sealing keys") == true)
            }
            // "k2" current, "k1" previous: it opens, and the next save re-seals with "k2".
            let rotated = try SealingKeys(current: second, previous: [first])
            try await TestDatabase.withStores(1, database: database, keys: rotated, listening: false) { stores in
                let loaded = try await stores[0].load(key)
                #expect(loaded == tokens)
                try await stores[0].save(tokens, for: key)
            }
            let keyIDs = try await TestDatabase.withClient(database: database) { client in
                var ids: [String] = []
                for try await id in try await client.query(
                    "SELECT key_id FROM nativeauth_token_sets", logger: TestDatabase.logger
                ).decode(String.self) {
                    ids.append(id)
                }
                return ids
            }
            #expect(keyIDs == ["k2"])
            try await TestDatabase.withStores(
                1, database: database, keys: SealingKeys(current: second), listening: false
            ) {
                let loaded = try await $0[0].load(key)
                #expect(loaded == tokens, "k1 is no longer needed")
            }
        }

        /// A row copied into another account's row does not open there (the sealed value is bound to
        /// its key).
        @Test func aSealedSetCopiedToAnotherAccountDoesNotOpen() async throws {
            let database = try await TestDatabase.create()
            let alice = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "alice")
            let mallory = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "mallory")
            let keys = try TestDatabase.keys()
            try await TestDatabase.withStores(1, database: database, keys: keys, listening: false) { stores in
                try await stores[0].save(Self.tokens("alice"), for: alice)
                try await stores[0].save(Self.tokens("mallory"), for: mallory)
            }
            try await TestDatabase.withClient(database: database) { client in
                try await client.query(
                    """
                    UPDATE nativeauth_token_sets SET sealed = (SELECT sealed FROM nativeauth_token_sets WHERE account = 'alice')
                    WHERE account = 'mallory'
                    """,
                    logger: TestDatabase.logger)
            }
            try await TestDatabase.withStores(1, database: database, keys: keys, listening: false) { stores in
                await #expect(throws: AuthError.self) { try await stores[0].load(mallory) }
                let opened = try await stores[0].load(alice)
                #expect(opened != nil)
            }
        }

        /// A database writer who puts back an older sealed set (the tokens from before a logout):
        /// under the row's newer generation it does not open, since the generation is sealed in; with
        /// the older generation as well, an instance that saw the newer one refuses it as going
        /// backwards.
        @Test func anOlderSealedSetPutBackIsRefused() async throws {
            let database = try await TestDatabase.create()
            let alice = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "alice")
            let keys = try TestDatabase.keys()
            try await TestDatabase.withStores(1, database: database, keys: keys, listening: false) { stores in
                try await stores[0].save(Self.tokens("before"), for: alice)
                try await TestDatabase.withClient(database: database) { client in
                    try await client.query(
                        "CREATE TABLE kept AS SELECT generation, sealed FROM nativeauth_token_sets",
                        logger: TestDatabase.logger)
                }
                try await stores[0].remove(alice)
                let after = Self.tokens("after")
                try await stores[0].save(after, for: alice)
                #expect(try await stores[0].load(alice)?.accessToken == after.accessToken)

                // The old sealed value under the current generation.
                try await TestDatabase.withClient(database: database) { client in
                    try await client.query(
                        "UPDATE nativeauth_token_sets SET sealed = (SELECT sealed FROM kept)",
                        logger: TestDatabase.logger)
                }
                let altered = await #expect(throws: AuthError.self) { try await stores[0].load(alice) }
                #expect(altered?.message.contains("the row was altered") == true, "\(String(describing: altered))")

                // The old sealed value with its old generation.
                try await TestDatabase.withClient(database: database) { client in
                    try await client.query(
                        "UPDATE nativeauth_token_sets SET (generation, sealed) = (SELECT generation, sealed FROM kept)",
                        logger: TestDatabase.logger)
                }
                let backwards = await #expect(throws: AuthError.self) { try await stores[0].load(alice) }
                #expect(
                    backwards?.message.contains("went backwards (generation 1 after 3)") == true,
                    "\(String(describing: backwards))")
            }
        }

        /// Two instances saving one key at once: each save is a compare-and-swap on the generation, so
        /// every save lands (none overwrites another's generation) and the row opens.
        @Test func concurrentSavesOfOneKeyEachLandAndTheRowOpens() async throws {
            let database = try await TestDatabase.create()
            let alice = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "alice")
            try await TestDatabase.withStores(2, database: database, keys: try TestDatabase.keys(), listening: false) {
                stores in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<20 {
                        group.addTask { try await stores[index % 2].save(Self.tokens("save-\(index)"), for: alice) }
                    }
                    try await group.waitForAll()
                }
                #expect(try await stores[0].load(alice) != nil)
                #expect(try await stores[1].load(alice) != nil)
                #expect(try await stores[0].revision(of: alice) == TokenStoreRevision([20]))
            }
        }

        // MARK: - With authenticators

        static func provider(_ sandbox: SandboxAuthorizationServer) throws -> GenericOIDCProvider {
            try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "profile", "email", "offline_access"]))
        }

        /// Instances on separate clients (separate machines, as far as the store can tell): a valid
        /// token costs no database read; another instance's refresh is seen at once, with one read; a
        /// logout anywhere is a `login_required` everywhere within a second.
        @Test func anotherInstancesRefreshAndLogoutAreSeenWithoutAReadPerCall() async throws {
            let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
            try await TestDatabase.withStores(2, listening: true) { stores in
                let first = Authenticator(
                    provider: try Self.provider(sandbox), store: stores[0], transport: sandbox.transport)
                let second = Authenticator(
                    provider: try Self.provider(sandbox), store: stores[1], transport: sandbox.transport)
                try await first.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
                let signedIn = try await first.accessToken()
                let seenBySecond = try await second.accessToken()
                #expect(seenBySecond == signedIn)

                let before = stores[1].statistics
                for _ in 0..<200 {
                    let token = try await second.accessToken()
                    #expect(token == signedIn)
                }
                let after = stores[1].statistics
                #expect(after.databaseReads == before.databaseReads, "200 calls with a valid token read nothing")
                #expect(after.revisionsFromMemory - before.revisionsFromMemory == 200)

                let refreshed = try await first.refresh().accessToken
                let deadline = ContinuousClock.now + .seconds(1)
                var seen = try await second.accessToken()
                while seen != refreshed && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(2))
                    seen = try await second.accessToken()
                }
                #expect(seen == refreshed, "the other instance's refresh is seen within a second")
                // Two reads: the row's generation (a notification is only a hint: any session on the
                // channel can send one) and the new set.
                #expect(
                    stores[1].statistics.databaseReads - after.databaseReads == 2, "the generation, then the new set")
                #expect(sandbox.grantCount(.refreshToken) == 1)

                _ = try await first.logout()
                var loggedOut = false
                while !loggedOut && ContinuousClock.now < deadline + .seconds(1) {
                    do {
                        _ = try await second.accessToken()
                        try await Task.sleep(for: .milliseconds(2))
                    } catch let error as AuthError where error.code == .loginRequired {
                        loggedOut = true
                    }
                }
                #expect(loggedOut, "a logout on one instance is login_required on the other within a second")
                let left = try await stores[1].load(first.key)
                #expect(left == nil, "and nothing was written back")
                #expect(sandbox.grantCount(.refreshToken) == 1, "no refresh from the copy in memory")
            }
            await sandbox.stop()
        }

        /// Four instances, each on its own client, 25 callers each, an expired access token and
        /// rotating refresh tokens: one refresh request, no refused refresh token, every caller served.
        @Test func instancesOnSeparateConnectionsRefreshOnce() async throws {
            let time = TestClock()
            let sandbox = try await SandboxAuthorizationServer.start(
                .init(autoApprove: true, clock: time.clock), mode: .inMemory)
            try await TestDatabase.withStores(4, listening: true) { stores in
                let authenticators = try stores.map {
                    Authenticator(
                        provider: try Self.provider(sandbox), store: $0, transport: sandbox.transport, clock: time.clock
                    )
                }
                try await authenticators[0].login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
                let old = try await authenticators[0].accessToken()
                for authenticator in authenticators { _ = try await authenticator.accessToken() }
                time.advance(by: .seconds(7200))
                let served = try await withThrowingTaskGroup(of: String.self) { group in
                    for authenticator in authenticators {
                        for _ in 0..<25 { group.addTask { try await authenticator.accessToken() } }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(served.count == 100)
                #expect(Set(served).count == 1 && served.first != old, "every caller got the one new token")
                #expect(sandbox.grantCount(.refreshToken) == 1)
                #expect(sandbox.errorCount("invalid_grant") == 0)
            }
            await sandbox.stop()
        }

        /// PostgreSQL grants CONNECT on a new database to PUBLIC, and `LISTEN`/`NOTIFY` and advisory
        /// locks have no access control (review L1). A second role that may only connect cannot read
        /// the store's secret (so it can compute neither the channel nor a lock id); handed the channel
        /// anyway, a forged generation hides no logout; holding a key's lock (its id read from
        /// `pg_locks`), it is named in the error of the wait it blocks.
        @Test func aRoleThatMayOnlyConnectCanNeitherHideALogoutNorHoldALockUnnamed() async throws {
            let database = try await TestDatabase.create()
            // Short: an error message shows no run of 20 token characters (Redaction).
            let role = "intruder_" + UUID().uuidString.prefix(6).lowercased()
            let password = UUID().uuidString
            let admin = try await TestDatabase.connect(database: database)
            try await admin.query(
                PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD '\(password)'"),
                logger: TestDatabase.logger)
            try await admin.close()
            let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "watched")
            try await TestDatabase.withStores(2, database: database, listening: true) { stores in
                try await stores[0].migrate()
                let url = try #require(TestDatabase.url)
                let intruder = try await PostgresConnection.connect(
                    configuration: .init(
                        host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: role, password: password,
                        database: database, tls: .disable),
                    id: 2, logger: TestDatabase.logger)
                for table in ["nativeauth_store_secret", "nativeauth_token_sets"] {
                    await #expect(throws: (any Error).self, "\(table) is not the intruder's to read") {
                        try await intruder.query(
                            PostgresQuery(unsafeSQL: "SELECT * FROM \(table)"), logger: TestDatabase.logger
                        ).collect()
                    }
                }
                let channel = try await stores[0].notificationChannel()
                #expect(channel.hasPrefix("nativeauth_") && channel.count == "nativeauth_".count + 24)

                // The second store knows generation 1 from memory; a forged, far larger generation
                // is only a hint, so the logout's real one is seen.
                try await stores[0].save(Self.tokens("watched"), for: key)
                var deadline = ContinuousClock.now + .seconds(5)
                while try await stores[1].revision(of: key) != TokenStoreRevision([1]), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let lockID = try await stores[0].advisoryLockID(of: key)
                try await intruder.query(
                    "SELECT pg_notify(\(channel), \(String(lockID) + ":999999"))", logger: TestDatabase.logger
                ).collect()
                try await Task.sleep(for: .milliseconds(100))
                try await stores[0].remove(key)
                deadline = ContinuousClock.now + .seconds(2)
                var seen = try await stores[1].revision(of: key)
                while seen != TokenStoreRevision([2]), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                    seen = try await stores[1].revision(of: key)
                }
                #expect(seen == TokenStoreRevision([2]), "the logout is seen despite the forged generation")
                #expect(try await stores[1].load(key) == nil)

                // Holding the key's lock (the id is in pg_locks for anyone to see) blocks a refresh
                // until the wait's timeout, and the error names the session to end.
                try await intruder.query("SELECT pg_advisory_lock(\(lockID))", logger: TestDatabase.logger).collect()
                let blocked = await #expect(throws: AuthError.self) {
                    try await stores[0].lock.withLock(key, timeout: .milliseconds(500)) { true }
                }
                #expect(blocked?.message.contains("role \(role)") == true, "\(String(describing: blocked?.message))")
                #expect(blocked?.message.contains("pid ") == true)
                try await intruder.close()
            }
        }

        /// A key's lock is held by one instance; another's wait gives up at its timeout; the first's
        /// death (its connection closed) frees the lock at once.
        @Test func aLockHeldByAnInstanceWhoseConnectionDiesIsFreed() async throws {
            let database = try await TestDatabase.create()
            let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "lock")
            try await TestDatabase.withStores(1, database: database, listening: false) { stores in
                try await stores[0].migrate()
                // A bare session holds the advisory lock the store uses, then dies.
                let connection = try await TestDatabase.connect(database: database)
                let lockID = try await stores[0].advisoryLockID(of: key)
                try await connection.query("BEGIN", logger: TestDatabase.logger)
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockID))", logger: TestDatabase.logger)
                let error = await #expect(throws: AuthError.self) {
                    try await stores[0].lock.withLock(key, timeout: .milliseconds(500)) { true }
                }
                #expect(error?.code == .tokenStoreFailed && error?.isRetryable == true)
                async let waited = stores[0].lock.withLock(key, timeout: .seconds(20)) { ContinuousClock.now }
                try await Task.sleep(for: .milliseconds(300))
                let died = ContinuousClock.now
                try await connection.close()
                let acquired = try await waited
                #expect(acquired > died)
                #expect(acquired - died < .seconds(2), "the lock is free once its session ends")
            }
        }

        /// More keys locked at once in one process than the pool has connections (a backend whose
        /// users' tokens expire together): each lock's reads and writes still find a connection, because
        /// at most `maximumLockConnections` locks take one. Without that bound, the same locks leave
        /// their bodies waiting for connections that only their own ends would free.
        @Test func manyKeysLockedAtOnceLeaveConnectionsForTheirReadsAndWrites() async throws {
            // Unbounded, the bodies fail at the operation timeout: a short one keeps the test short.
            for (lockConnections, bounded) in [(2, true), (16, false)] {
                let configuration = PostgresTokenStore.Configuration(
                    operationTimeout: .seconds(bounded ? 10 : 2), maximumLockConnections: lockConnections)
                try await TestDatabase.withStores(
                    1, listening: true, maximumConnections: 4, configuration: configuration
                ) {
                    stores in
                    let store = stores[0]
                    let inside = NIOLockedValueBox(0)
                    let outcomes = await withTaskGroup(of: Result<Void, any Error>.self) { group in
                        for index in 0..<8 {
                            let key = TokenKey(
                                issuer: "https://issuer.example", clientID: "client", account: "user\(index)")
                            group.addTask {
                                do {
                                    try await store.lock.withLock(key, timeout: .seconds(30)) {
                                        // Every holder in at once, as far as the bound lets them.
                                        inside.withLockedValue { $0 += 1 }
                                        let until = ContinuousClock.now + .milliseconds(500)
                                        while inside.withLockedValue({ $0 }) < 3 && ContinuousClock.now < until {
                                            try await Task.sleep(for: .milliseconds(10))
                                        }
                                        _ = try await store.load(key)
                                        try await store.save(Self.tokens("many"), for: key)
                                    }
                                    return .success(())
                                } catch {
                                    return .failure(error)
                                }
                            }
                        }
                        return await group.reduce(into: [Result<Void, any Error>]()) { $0.append($1) }
                    }
                    let failures = outcomes.compactMap { outcome -> AuthError? in
                        guard case .failure(let error) = outcome else { return nil }
                        return error as? AuthError
                    }
                    if bounded {
                        #expect(failures.isEmpty, "\(failures.map(\.message))")
                        #expect(store.statistics.locksTaken == 8)
                        let stored = try await store.keys()
                        #expect(stored.count == 8)
                    } else {
                        #expect(!failures.isEmpty, "the test must show the exhaustion it guards against")
                        #expect(failures.allSatisfy { $0.code == .tokenStoreFailed && $0.isRetryable })
                    }
                }
            }
        }

        /// Instances starting together on a fresh database create the table once between them; a
        /// database whose schema is newer than this NativeAuth's is a clear error, not a guess.
        @Test func instancesStartingTogetherMigrateOnceAndANewerSchemaIsRefused() async throws {
            let database = try await TestDatabase.create()
            try await TestDatabase.withStores(8, database: database, listening: false) { stores in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for store in stores { group.addTask { try await store.migrate() } }
                    try await group.waitForAll()
                }
                try await stores[0].migrate()  // current already: nothing to do
                let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "migrated")
                try await stores[1].save(Self.tokens("migrated"), for: key)
                #expect(try await stores[2].load(key) != nil)
            }
            try await TestDatabase.withClient(database: database) { client in
                var versions: [Int] = []
                for try await version in try await client.query(
                    "SELECT version FROM nativeauth_schema_migrations ORDER BY version", logger: TestDatabase.logger
                ).decode(Int.self) {
                    versions.append(version)
                }
                #expect(versions == [1, 2], "each migration applied once")
                try await client.query(
                    "INSERT INTO nativeauth_schema_migrations (version) VALUES (99)", logger: TestDatabase.logger)
            }
            try await TestDatabase.withStores(1, database: database, listening: false) { stores in
                let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "migrated")
                let error = await #expect(throws: AuthError.self) { try await stores[0].load(key) }
                #expect(error?.code == .tokenStoreFailed)
                #expect(error?.message.contains("schema version 99") == true, "\(String(describing: error?.message))")
            }
        }

        /// 50 callers asking a store that does not listen for one key's revision at once share the
        /// reads that are running, instead of 50 queries; a save through the same store still shows
        /// at once to the next caller.
        @Test func concurrentRevisionReadsOfOneKeyAreShared() async throws {
            try await TestDatabase.withStores(1, listening: false) { stores in
                let store = stores[0]
                let key = TokenKey(issuer: "https://issuer.example", clientID: "client", account: "shared")
                try await store.save(Self.tokens("shared"), for: key)
                let before = store.statistics.databaseReads
                let revisions = try await withThrowingTaskGroup(of: TokenStoreRevision?.self) { group in
                    for _ in 0..<50 { group.addTask { try await store.revision(of: key) } }
                    return try await group.reduce(into: [TokenStoreRevision?]()) { $0.append($1) }
                }
                let reads = store.statistics.databaseReads - before
                #expect(Set(revisions).count == 1, "every caller got the one generation")
                #expect(reads >= 1 && reads < 25, "\(reads) queries for 50 callers")

                let old = try await store.revision(of: key)
                try await store.save(Self.tokens("shared-again"), for: key)
                let new = try await store.revision(of: key)
                #expect(old != new, "a save through the store shows at once")
            }
        }
    }
#endif
