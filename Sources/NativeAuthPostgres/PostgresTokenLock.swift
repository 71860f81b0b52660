// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    internal import Logging
    public import NativeAuth
    internal import PostgresNIO

    /// The lock of a ``PostgresTokenStore``'s keys: `pg_advisory_xact_lock`, so that one instance
    /// on any machine refreshes a key while the others wait, then use what it stored.
    ///
    /// A holder keeps one connection in a transaction for the whole of its body (the reload, the
    /// refresh request and the save); committing ends the transaction and frees the lock. The reads
    /// and writes inside go through other connections of the pool, each committed at once, so that
    /// a refreshed set is stored the moment the save returns, whatever happens to the lock's
    /// connection afterwards.
    ///
    /// - A holder that dies frees the lock with its session; one that hangs with its transaction idle
    ///   is ended by PostgreSQL after ``PostgresTokenStore/Configuration/lockHolderIdleLimit``.
    /// - A wait is bounded by its timeout (`lock_timeout`, in slices) and ends within a slice (at most
    ///   200 ms) of the task's cancellation.
    /// - At most ``PostgresTokenStore/Configuration/maximumLockConnections`` locks of one store wait or
    ///   hold at once; the others wait in the process, within the same timeout, so that many keys
    ///   locked together never take every connection of the pool.
    public struct PostgresTokenLock: TokenLock {
        let store: PostgresTokenStore

        /// Every process on every machine that shares the database.
        public var scope: TokenLockScope { .everywhere }

        /// How long one `lock_timeout` slice waits before cancellation is looked at again.
        static let slice: Duration = .milliseconds(200)

        public func withLock<T: Sendable>(
            _ key: TokenKey,
            timeout: Duration,
            _ body: @Sendable () async throws -> T
        ) async throws -> T {
            try Task.checkCancellation()
            try await store.ensureMigrated()
            let lockID = try await store.advisoryLockID(of: key)
            let idleLimit = Self.milliseconds(store.configuration.lockHolderIdleLimit)
            let requested = ContinuousClock.now
            let deadline = requested + timeout
            let client = store.client
            do {
                return try await store.lockConnections.withSlot(
                    deadline: deadline,
                    timedOut: AuthError.lockTimeout(timeout, holder: "other locks of this process")
                ) {
                    // A connection first, within the operation timeout: a pool whose database is down
                    // would otherwise hold the lease request for as long as its circuit breaker takes to trip.
                    try await store.operation("reach the database to lock the tokens of \(key)") {
                        try await client.withConnection { _ in }
                    }
                    return try await client.withConnection { connection in
                        try await locked(
                            lockID, on: connection, requested: requested, deadline: deadline, timeout: timeout,
                            idleLimit: idleLimit, body)
                    }
                }
            } catch let failure as BodyFailure {
                throw failure.error  // the body's own error, as it is
            } catch let error as AuthError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw PostgresTokenStore.storeError("lock the tokens of \(key)", error)
            }
        }

        /// Runs `body` in a transaction on `connection` that holds the advisory lock.
        private func locked<T: Sendable>(
            _ lockID: Int64,
            on connection: PostgresConnection,
            requested: ContinuousClock.Instant,
            deadline: ContinuousClock.Instant,
            timeout: Duration,
            idleLimit: Int64,
            _ body: @Sendable () async throws -> T
        ) async throws -> T {
            let logger = store.logger
            do {
                try await connection.run("BEGIN", logger: logger)
                try await connection.run(
                    "SELECT set_config('idle_in_transaction_session_timeout', \(String(idleLimit)), true)",
                    logger: logger
                )
                try await acquire(lockID, on: connection, deadline: deadline, timeout: timeout, logger: logger)
            } catch {
                _ = try? await connection.run("ROLLBACK", logger: logger)
                throw error
            }
            let waited = ContinuousClock.now - requested
            store.count { statistics in
                statistics.locksTaken += 1
                statistics.totalLockWait += waited
                statistics.longestLockWait = max(statistics.longestLockWait, waited)
            }
            let result: T
            do {
                result = try await body()
            } catch {
                _ = try? await connection.run("ROLLBACK", logger: logger)
                throw BodyFailure(error: error)
            }
            // Nothing was written in this transaction: committing only frees the lock, and a lost
            // connection frees it as well.
            do {
                try await connection.run("COMMIT", logger: logger)
            } catch {
                logger.debug(
                    "the lock's transaction ended with its connection",
                    metadata: ["error": "\(PostgresTokenStore.describe(error))"])
            }
            return result
        }

        /// Takes the advisory lock at once when it is free; else waits in `lock_timeout` slices, each
        /// in a savepoint, until the deadline or cancellation.
        private func acquire(
            _ lockID: Int64,
            on connection: PostgresConnection,
            deadline: ContinuousClock.Instant,
            timeout: Duration,
            logger: Logger
        ) async throws {
            for try await taken in try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(lockID))", logger: logger
            ).decode(Bool.self) where taken {
                return
            }
            while true {
                try Task.checkCancellation()
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    throw AuthError.lockTimeout(
                        timeout, holder: await holder(of: lockID, on: connection, logger: logger))
                }
                let slice = Self.milliseconds(min(remaining, Self.slice))
                try await connection.run("SAVEPOINT nativeauth_lock_wait", logger: logger)
                do {
                    try await connection.run(
                        """
                        SELECT set_config('lock_timeout', \(String(max(slice, 1))), true), pg_advisory_xact_lock(\(lockID))::text
                        """,
                        logger: logger
                    )
                    try await connection.run("RELEASE SAVEPOINT nativeauth_lock_wait", logger: logger)
                    return
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                    // lock_not_available: this slice ran out; the savepoint undoes only the wait.
                    try await connection.run("ROLLBACK TO SAVEPOINT nativeauth_lock_wait", logger: logger)
                }
            }
        }

        /// Who holds the advisory lock `lockID`, as `pg_locks` and `pg_stat_activity` tell it: the
        /// backend's pid, role, application and address, for the operator to look up (or end).
        private func holder(of lockID: Int64, on connection: PostgresConnection, logger: Logger) async -> String {
            let high = (lockID >> 32) & 0xFFFF_FFFF
            let low = lockID & 0xFFFF_FFFF
            do {
                let rows = try await connection.query(
                    """
                    SELECT l.pid, coalesce(a.usename::text, '?'), coalesce(a.application_name, ''),
                        coalesce(host(a.client_addr), 'a local socket')
                    FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                        AND l.classid = \(high)::oid AND l.objid = \(low)::oid
                    """,
                    logger: logger)
                for try await (pid, role, application, address) in rows.decode((Int32, String, String, String).self) {
                    let named = application.isEmpty ? "" : " (\(application))"
                    return "the PostgreSQL session of pid \(pid), role \(role)\(named), from \(address)"
                }
            } catch {
                logger.debug(
                    "could not tell who holds the lock", metadata: ["error": "\(PostgresTokenStore.describe(error))"])
            }
            return "another instance"
        }

        static func milliseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return seconds * 1000 + attoseconds / 1_000_000_000_000_000
        }
    }

    /// What the body threw, kept apart from the database's errors so that it passes through unchanged.
    private struct BodyFailure: Error {
        let error: any Error
    }

    extension PostgresConnection {
        /// Runs a statement and reads its whole answer: an error the server reports while executing
        /// it (a `lock_timeout`, say) arrives after the answer's first part, and is thrown only there.
        func run(_ query: PostgresQuery, logger: Logger) async throws {
            for try await _ in try await self.query(query, logger: logger) {}
        }
    }
#endif
