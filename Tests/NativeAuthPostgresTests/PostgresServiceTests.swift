// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Foundation
    import Logging
    import NativeAuth
    import NativeAuthPostgres
    import PostgresNIO
    import ServiceLifecycle
    import TestSupport
    import Testing

    /// `PostgresTokenStore` as a swift-service-lifecycle `Service`, beside postgres-nio's client (a
    /// `Service` too), in one `ServiceGroup`: the store listens while the group runs, and graceful
    /// shutdown stops both, the store first.
    @Suite(.testLogging, .enabled(if: TestDatabase.isAvailable, "needs NATIVEAUTH_POSTGRES_URL (scripts/postgres)"))
    struct PostgresServiceTests {
        @Test func theStoreListensInTheGroupAndStopsWithIt() async throws {
            let database = try await TestDatabase.create()
            let client = PostgresClient(
                configuration: try TestDatabase.configuration(database: database), backgroundLogger: TestDatabase.logger
            )
            let store = PostgresTokenStore(client: client, keys: try TestDatabase.keys(), logger: TestDatabase.logger)
            let group = ServiceGroup(services: [client, store], logger: TestDatabase.logger)
            let running = Task { try await group.run() }
            try await store.migrate()
            let deadline = ContinuousClock.now + .seconds(20)
            while !store.isListening, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(store.isListening)

            let start = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(!store.isListening)
        }
    }
#endif
