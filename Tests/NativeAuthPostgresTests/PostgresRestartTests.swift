// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Foundation
    import NativeAuth
    import NativeAuthPostgres
    import NativeAuthTesting
    import PostgresNIO
    import TestSupport
    import Testing

    /// A PostgreSQL of the test's own (scripts/postgres in a temporary directory), stopped and started
    /// again in the middle of a run.
    @Suite(.testLogging, .enabled(if: TestDatabase.isAvailable, "needs PostgreSQL (scripts/postgres)"))
    struct PostgresRestartTests {
        /// Runs scripts/postgres.
        static func postgres(_ command: String, _ directory: String) async throws -> CommandResult {
            let result = try await run(
                repositoryRoot.appendingPathComponent("scripts/postgres").path, [command, directory],
                environment: ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
            #expect(result.status == 0, "scripts/postgres \(command): \(result.stderr)")
            return result
        }

        /// While the database is down: a valid token in memory is still served, a refresh is a clear,
        /// retryable `token_store_failed` within the operation timeout, and nothing is lost; once it is
        /// back, the refresh succeeds, the listener returns, and the stored set is the refreshed one.
        @Test func aRestartMidRunGivesClearErrorsThenRecoversLosingNothing() async throws {
            let directory = try TemporaryDirectory()
            let started = try await Self.postgres("start", directory.path)
            let url = started.stdout.split(separator: "\n").first { $0.hasPrefix("url: ") }.map {
                String($0.dropFirst(5))
            }
            guard let url, let components = URLComponents(string: url), let host = components.host,
                let user = components.user
            else {
                Issue.record("no URL from scripts/postgres: \(started.stdout)")
                return
            }
            do {
                try await restartMidRun(host: host, components: components, user: user, directory: directory)
            } catch {
                _ = try? await Self.postgres("stop", directory.path)
                throw error
            }
            _ = try await Self.postgres("stop", directory.path)
        }

        func restartMidRun(
            host: String, components: URLComponents, user: String, directory: TemporaryDirectory
        ) async throws {
            let configuration = PostgresClient.Configuration(
                host: host, port: components.port ?? 5432, username: user, password: components.password,
                database: "postgres", tls: .disable)
            let client = PostgresClient(configuration: configuration, backgroundLogger: TestDatabase.logger)
            let store = PostgresTokenStore(
                client: client, keys: try TestDatabase.keys(),
                configuration: .init(operationTimeout: .seconds(3)), logger: TestDatabase.logger)
            let time = TestClock()
            let sandbox = try await SandboxAuthorizationServer.start(
                .init(autoApprove: true, clock: time.clock), mode: .inMemory)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                group.addTask { await store.run() }
                defer { group.cancelAll() }
                let authenticator = Authenticator(
                    provider: try PostgresTokenStoreTests.provider(sandbox), store: store, transport: sandbox.transport,
                    lockTimeout: .seconds(5), clock: time.clock)
                try await authenticator.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
                let signedIn = try await authenticator.currentTokens()
                try await Self.waitUntil("listening") { store.isListening }

                _ = try await Self.postgres("stop", directory.path)
                try await Self.waitUntil("the listener notices") { !store.isListening }
                let served = try await authenticator.accessToken()
                #expect(served == signedIn?.accessToken, "a valid token in memory is served while the database is down")

                time.advance(by: .seconds(7200))
                let began = ContinuousClock.now
                let error = await #expect(throws: AuthError.self) { try await authenticator.accessToken() }
                #expect(error?.code == .tokenStoreFailed && error?.isRetryable == true, "\(String(describing: error))")
                #expect(error?.message.contains("PostgreSQL") == true, "\(String(describing: error))")
                #expect(ContinuousClock.now - began < .seconds(20), "the error comes within the timeouts")
                #expect(sandbox.grantCount(.refreshToken) == 0, "no refresh without the lock")

                _ = try await Self.postgres("start", directory.path)
                // The pool reconnects on its own schedule (a back-off of a few seconds after a short outage).
                var refreshed: String?
                let back = ContinuousClock.now
                while refreshed == nil && ContinuousClock.now - back < .seconds(60) {
                    do {
                        refreshed = try await authenticator.accessToken()
                    } catch let error as AuthError where error.code == .tokenStoreFailed && error.isRetryable {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
                #expect(refreshed != signedIn?.accessToken)
                #expect(sandbox.grantCount(.refreshToken) == 1)
                let stored = try await store.load(authenticator.key)
                #expect(stored?.accessToken == refreshed, "the refreshed set is stored: nothing lost")
                try await Self.waitUntil("listening again") { store.isListening }
            }
            await sandbox.stop()
        }

        static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    Issue.record("not \(what) after 30 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
#endif
