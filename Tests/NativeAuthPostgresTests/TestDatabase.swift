// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Crypto
    import Foundation
    import Logging
    import NativeAuth
    import NativeAuthPostgres
    import PostgresNIO

    /// The real PostgreSQL that scripts/postgres started (scripts/test.sh sets NATIVEAUTH_POSTGRES_URL);
    /// each test gets a database of its own in it.
    enum TestDatabase {
        /// The cluster's URL, or `nil` when no PostgreSQL was started (the suite is then skipped, and
        /// fails instead when NATIVEAUTH_REQUIRE_POSTGRES is set).
        static let url: URL? = ProcessInfo.processInfo.environment["NATIVEAUTH_POSTGRES_URL"].flatMap(URL.init(string:))

        static var isAvailable: Bool {
            url != nil || ProcessInfo.processInfo.environment["NATIVEAUTH_REQUIRE_POSTGRES"] == "1"
        }

        static let logger = Logger(label: "NativeAuthPostgresTests")

        /// The client settings for `database` in the cluster.
        static func configuration(database: String) throws -> PostgresClient.Configuration {
            guard let url, let host = url.host, let user = url.user else {
                throw AuthError(
                    .configurationInvalid, "NATIVEAUTH_POSTGRES_URL is not set; start PostgreSQL with scripts/postgres")
            }
            return PostgresClient.Configuration(
                host: host, port: url.port ?? 5432, username: user, password: url.password, database: database,
                tls: .disable)
        }

        /// A connection of its own to `database`, outside any pool (a session the test controls).
        static func connect(database: String) async throws -> PostgresConnection {
            guard let url, let host = url.host, let user = url.user else {
                throw AuthError(.configurationInvalid, "NATIVEAUTH_POSTGRES_URL is not set")
            }
            return try await PostgresConnection.connect(
                configuration: .init(
                    host: host, port: url.port ?? 5432, username: user, password: url.password, database: database,
                    tls: .disable),
                id: 1, logger: logger)
        }

        /// A new, empty database; its name.
        static func create() async throws -> String {
            let name = "nativeauth_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try await withClient(database: "postgres") { client in
                try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            }
            return name
        }

        /// Runs `body` with a running client of `database`.
        static func withClient<T: Sendable>(
            database: String, _ body: @Sendable (PostgresClient) async throws -> T
        ) async throws -> T {
            let client = PostgresClient(configuration: try configuration(database: database), backgroundLogger: logger)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                return try await body(client)
            }
        }

        /// Runs `body` with `count` stores on one database, each on a client of its own (as instances
        /// on several machines are), listening for changes when `listening`; each client keeps at most
        /// `maximumConnections` (postgres-nio's default without it).
        static func withStores<T: Sendable>(
            _ count: Int,
            database: String? = nil,
            keys: SealingKeys? = nil,
            listening: Bool,
            maximumConnections: Int? = nil,
            configuration storeConfiguration: PostgresTokenStore.Configuration = .init(),
            _ body: @Sendable ([PostgresTokenStore]) async throws -> T
        ) async throws -> T {
            let database = if let database { database } else { try await create() }
            let keys = try keys ?? Self.keys()
            let clients = try (0..<count).map { _ in
                var configuration = try configuration(database: database)
                if let maximumConnections { configuration.options.maximumConnections = maximumConnections }
                return PostgresClient(configuration: configuration, backgroundLogger: logger)
            }
            let stores = clients.map {
                PostgresTokenStore(client: $0, keys: keys, configuration: storeConfiguration, logger: logger)
            }
            return try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients { group.addTask { await client.run() } }
                defer { group.cancelAll() }
                if listening {
                    // Migrated first, so that the listeners start at once.
                    try await stores[0].migrate()
                    for store in stores { group.addTask { await store.run() } }
                    let deadline = ContinuousClock.now + .seconds(20)
                    while !stores.allSatisfy(\.isListening) {
                        guard ContinuousClock.now < deadline else {
                            throw AuthError(.tokenStoreFailed, "the stores did not start listening within 20 s")
                        }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                return try await body(stores)
            }
        }

        /// One fixed key per test run is enough; tests of keys make their own.
        static func keys(id: String = "k1") throws -> SealingKeys {
            try SealingKeys(current: SealingKey(id: id, key: SymmetricKey(size: .bits256)))
        }
    }
#endif
