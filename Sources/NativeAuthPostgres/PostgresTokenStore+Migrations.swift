// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    internal import Crypto
    internal import Foundation
    internal import LenientJSON
    internal import Logging
    internal import NativeAuth
    internal import PostgresNIO
    internal import ServiceLifecycle

    // The table and its migrations, applied once per store.
    extension PostgresTokenStore {
        /// The schema's migrations, in order; the position is the version.
        static let migrations: [[String]] = [
            [
                """
                CREATE TABLE \(tableName) (
                    issuer text NOT NULL,
                    client_id text NOT NULL,
                    account text NOT NULL,
                    generation bigint NOT NULL,
                    key_id text,
                    sealed bytea,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (issuer, client_id, account),
                    CHECK ((key_id IS NULL) = (sealed IS NULL))
                )
                """,
                "COMMENT ON TABLE \(tableName) IS 'NativeAuth token sets, sealed with AES-256-GCM; sealed IS NULL once removed'",
            ],
            // The store's secret: the advisory lock ids and the notification channel are keyed with it,
            // so that a role that may only connect can neither compute an account's lock nor name the
            // channel. 32 bytes from two random UUIDs (PostgreSQL's strong random source), 244 of them random.
            [
                """
                CREATE TABLE nativeauth_store_secret (
                    one boolean PRIMARY KEY DEFAULT true CHECK (one),
                    secret bytea NOT NULL CHECK (length(secret) = 32)
                )
                """,
                """
                INSERT INTO nativeauth_store_secret (secret)
                VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))
                """,
                "COMMENT ON TABLE nativeauth_store_secret IS 'NativeAuth: the key of the token store''s lock ids and channel'",
            ],
        ]

        /// Creates the table, or brings it to this version's schema; safe to run on every instance at
        /// once (a lock keeps them apart) and again (it does nothing then).
        ///
        /// - Throws: `AuthError` (`token_store_failed`) when the database refuses.
        public func migrate() async throws {
            // Most starts find the schema current: one read, and no lock that instances starting
            // together would queue for.
            guard try await appliedVersion() != Self.migrations.count else { return }
            try await operation("migrate the token table") {
                try await self.client.withTransaction(logger: self.logger) { connection in
                    // A fixed lock id of its own: instances starting together migrate one at a time.
                    try await connection.run("SELECT pg_advisory_xact_lock(7380981122334455667)", logger: self.logger)
                    try await connection.run(
                        """
                        CREATE TABLE IF NOT EXISTS nativeauth_schema_migrations (
                            version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                        """,
                        logger: self.logger
                    )
                    var applied = 0
                    for try await version in try await connection.query(
                        "SELECT coalesce(max(version), 0) FROM nativeauth_schema_migrations", logger: self.logger
                    ).decode(Int.self) {
                        applied = version
                    }
                    guard applied <= Self.migrations.count else {
                        throw AuthError(
                            .tokenStoreFailed,
                            "the token table is at schema version \(applied), newer than this NativeAuth's"
                                + " \(Self.migrations.count)",
                            hint: "upgrade this instance to the NativeAuth the others run"
                        )
                    }
                    for (index, statements) in Self.migrations.enumerated() where index + 1 > applied {
                        for statement in statements {
                            try await connection.run(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                        }
                        let version = index + 1
                        try await connection.run(
                            "INSERT INTO nativeauth_schema_migrations (version) VALUES (\(version))",
                            logger: self.logger)
                        self.logger.info("migrated the token table", metadata: ["version": "\(version)"])
                    }
                }
            }
        }

        /// The schema version the database is at; 0 before the first migration.
        func appliedVersion() async throws -> Int {
            try await operation("read the token table's schema version") {
                do {
                    let rows = try await self.client.query(
                        "SELECT coalesce(max(version), 0) FROM nativeauth_schema_migrations", logger: self.logger)
                    for try await version in rows.decode(Int.self) { return version }
                    return 0
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                    return 0  // undefined_table: never migrated
                }
            }
        }

        /// Migrates once per store, on first use, unless turned off.
        func ensureMigrated() async throws {
            guard configuration.migratesOnFirstUse else { return }
            let task = migration.withLock { current in
                if let current { return current }
                let task = Task { try await self.migrate() }
                current = task
                return task
            }
            do {
                try await task.value
            } catch {
                // A failed migration (a database that is down) is tried again by the next operation.
                migration.withLock { if $0 == task { $0 = nil } }
                throw error
            }
        }
    }
#endif
