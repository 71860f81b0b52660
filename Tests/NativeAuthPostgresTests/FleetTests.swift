// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Crypto
    import Foundation
    import NativeAuth
    import NativeAuthPostgres
    import NativeAuthTesting
    import PostgresNIO
    import TestSupport
    import Testing

    /// The fleet sample (`fleet-worker`) as separate processes against one real PostgreSQL and the
    /// sandbox on loopback: what the single-refresh promise means across machines.
    @Suite(.testLogging, .enabled(if: TestDatabase.isAvailable, "needs NATIVEAUTH_POSTGRES_URL (scripts/postgres)"))
    struct FleetTests {
        /// A fleet's shared settings: a database of its own, one sealing key, the sandbox.
        struct Fleet {
            let sandbox: SandboxAuthorizationServer
            let database: String
            let sealingKey: String
            var clientID = SandboxAuthorizationServer.Client.defaultID
            /// The client's secret, for a confidential client (the workers read it from the environment).
            var clientSecret: String?
            let worker = cliPath("fleet-worker")

            var environment: [String: String] {
                get throws {
                    guard let url = TestDatabase.url,
                        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                    else { throw AuthError(.configurationInvalid, "NATIVEAUTH_POSTGRES_URL is not set") }
                    components.path = "/" + database
                    components.query = "sslmode=disable"
                    var environment = ["FLEET_DATABASE_URL": components.string ?? "", "FLEET_SEALING_KEY": sealingKey]
                    environment["FLEET_CLIENT_SECRET"] = clientSecret
                    return environment
                }
            }

            var connection: [String] {
                ["--issuer", sandbox.issuer.absoluteString, "--client-id", clientID]
            }

            /// A fleet of the sandbox's default client, or of `client` (registered at the sandbox).
            static func start(client: SandboxAuthorizationServer.Client? = nil) async throws -> Fleet {
                let sandbox = try await SandboxAuthorizationServer.start(
                    .init(
                        clients: [.init(id: SandboxAuthorizationServer.Client.defaultID)] + (client.map { [$0] } ?? []),
                        autoApprove: true),
                    mode: .live)
                let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
                var fleet = Fleet(sandbox: sandbox, database: try await TestDatabase.create(), sealingKey: key)
                if let client {
                    fleet.clientID = client.id
                    fleet.clientSecret = client.secret
                }
                return fleet
            }

            /// `fleet-worker login`, through a browser that follows the sandbox's approval.
            func login() async throws {
                let result = try await run(
                    worker, ["login"] + connection,
                    environment: try environment.merging(["BROWSER": redirectFollowingBrowser]) { $1 })
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.contains("Signed in"))
            }

            /// `fleet-worker run` in `count` processes whose callers all start `seconds` from now; what
            /// each printed once it ended.
            func runTogether(_ count: Int, callers: Int, calls: Int, startingIn seconds: Double) async throws
                -> [CommandResult]
            {
                let startAt = Int64((Date().timeIntervalSince1970 + seconds) * 1000)
                let arguments =
                    ["run"] + connection + [
                        "--api", sandbox.url(.resource).absoluteString, "--callers", String(callers),
                        "--calls", String(calls), "--start-at", String(startAt),
                    ]
                let environment = try environment
                let workers = try (0..<count).map { _ in try RunningCommand(worker, arguments, environment: environment)
                }
                var results: [CommandResult] = []
                for worker in workers { results.append(await worker.finish(closeInput: true)) }
                return results
            }

            /// Runs `body` with a store of the fleet's database and key, and an authenticator on it.
            func withAuthenticator<T: Sendable>(_ body: @Sendable (Authenticator, PostgresTokenStore) async throws -> T)
                async throws -> T
            {
                let keys = try SealingKeys(current: SealingKey(id: "k1", base64: sealingKey))
                return try await TestDatabase.withStores(1, database: database, keys: keys, listening: false) {
                    stores in
                    let provider = try GenericOIDCProvider(
                        configuration: ProviderConfiguration(
                            issuer: sandbox.issuer, clientID: clientID, clientSecret: clientSecret,
                            scopes: ["openid", "offline_access"]))
                    return try await body(Authenticator(provider: provider, store: stores[0]), stores[0])
                }
            }
        }

        /// One worker's summary line.
        struct Summary {
            let succeeded: Int
            let failed: [String: Int]
            let signedOut: Bool
            let locksTaken: Int

            init(_ result: CommandResult) throws {
                let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    throw AuthError(.tokenStoreFailed, "no summary: \(result.stdout) \(result.stderr)")
                }
                succeeded = object["succeeded"] as? Int ?? -1
                failed = object["failed"] as? [String: Int] ?? [:]
                signedOut = object["signed_out"] as? Bool ?? false
                locksTaken = object["locks_taken"] as? Int ?? 0
            }
        }

        /// 16 worker processes × 50 concurrent callers, started together, with one expired access
        /// token and rotating refresh tokens: exactly one refresh request, no `invalid_grant`, every
        /// caller served; then a logout from one more process ends every running worker's calls.
        @Test func sixteenWorkersTimesFiftyCallersRefreshOnceAndALogoutReachesThemAll() async throws {
            let fleet = try await Fleet.start()
            try await fleet.login()
            try await fleet.withAuthenticator { authenticator, _ in try await authenticator.expireAccessToken() }
            fleet.sandbox.resetCounts()

            let api = fleet.sandbox.url(.resource).absoluteString
            let environment = try fleet.environment
            let results = try await fleet.runTogether(16, callers: 50, calls: 1, startingIn: 5)
            for result in results {
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                let summary = try Summary(result)
                #expect(summary.succeeded == 50 && summary.failed.isEmpty, "\(result.stdout)")
            }
            #expect(fleet.sandbox.grantCount(.refreshToken) == 1, "one refresh for 800 callers on 16 processes")
            #expect(fleet.sandbox.errorCount("invalid_grant") == 0)

            // Four workers calling until signed out; a logout elsewhere ends them all.
            let running = try (0..<4).map { _ in
                try RunningCommand(
                    fleet.worker,
                    ["run"] + fleet.connection + [
                        "--api", api, "--callers", "2", "--calls", "0", "--interval-ms", "20", "--until-signed-out",
                    ],
                    environment: environment)
            }
            try await Task.sleep(for: .seconds(2))
            let logout = try await run(fleet.worker, ["logout"] + fleet.connection, environment: environment)
            #expect(logout.status == 0 && logout.stdout.contains("Signed out on every instance"), "\(logout.stderr)")
            let loggedOut = ContinuousClock.now
            for worker in running {
                let result = await worker.finish(closeInput: true)
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                let summary = try Summary(result)
                #expect(summary.signedOut && summary.succeeded > 0, "\(result.stdout)")
                #expect(Set(summary.failed.keys).isSubset(of: ["login_required"]), "\(result.stdout)")
            }
            #expect(ContinuousClock.now - loggedOut < .seconds(10), "every worker stopped soon after the logout")
            try await fleet.withAuthenticator { _, store in
                let keys = try await store.keys()
                #expect(keys.isEmpty, "the account was not written back by a worker's copy in memory")
            }
            #expect(fleet.sandbox.grantCount(.refreshToken) == 1)
            await fleet.sandbox.stop()
        }

        /// A worker is killed (SIGKILL) while it holds the key's lock in the middle of its refresh (its
        /// discovery request held by the sandbox, before its refresh token was sent): its session ends,
        /// the lock is free, another worker refreshes, and the stored set is the new one: nothing lost.
        @Test func aWorkerKilledHoldingTheLockMidRefreshLosesNothing() async throws {
            let fleet = try await Fleet.start()
            try await fleet.login()
            let before = try await fleet.withAuthenticator { authenticator, _ in
                try await authenticator.expireAccessToken()
                return try await authenticator.currentTokens()
            }
            fleet.sandbox.resetCounts()
            fleet.sandbox.failNext(1, .discovery, with: .delay(.seconds(60)))
            let api = fleet.sandbox.url(.resource).absoluteString
            let environment = try fleet.environment
            let holder = try RunningCommand(
                fleet.worker, ["run"] + fleet.connection + ["--api", api, "--callers", "1", "--calls", "1"],
                environment: environment)
            // Wait until it holds the advisory lock (a granted advisory lock in pg_locks) and waits on
            // the sandbox.
            let deadline = ContinuousClock.now + .seconds(30)
            var held = false
            while !held && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                held =
                    try await TestDatabase.withClient(database: fleet.database) { client in
                        var count = 0
                        for try await granted in try await client.query(
                            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
                            logger: TestDatabase.logger
                        ).decode(Int.self) {
                            count = granted
                        }
                        return count
                    } > 0 && fleet.sandbox.requestCount(.discovery) > 0
            }
            #expect(held, "the worker holds the lock while its refresh waits: \(holder.stderr)")
            holder.stop()
            let killed = await holder.finish(closeInput: true)
            #expect(killed.status != 0)

            let next = try await run(
                fleet.worker, ["run"] + fleet.connection + ["--api", api, "--callers", "5", "--calls", "1"],
                environment: environment)
            #expect(next.status == 0, "\(next.stdout) \(next.stderr)")
            #expect(try Summary(next).succeeded == 5)
            #expect(fleet.sandbox.grantCount(.refreshToken) == 1, "the killed worker never sent its refresh token")
            #expect(fleet.sandbox.errorCount("invalid_grant") == 0)
            let after = try await fleet.withAuthenticator { authenticator, _ in try await authenticator.currentTokens()
            }
            #expect(after != nil && after?.refreshToken != before?.refreshToken, "the new set is stored")
            #expect(after?.accessToken != before?.accessToken)
            await fleet.sandbox.stop()
        }

        /// A client-credentials token (a service acting as itself) shared by 8 workers × 20 callers:
        /// once it expired, exactly one token request renews it for all of them; the secret comes from
        /// the environment, never the command line.
        @Test func workersShareOneClientCredentialsTokenAndRenewItOnce() async throws {
            let fleet = try await Fleet.start(
                client: .init(id: "fleet-service", secret: "fleet-service-secret-0123456789abcdef"))
            let environment = try fleet.environment
            let login = try await run(
                fleet.worker, ["login", "--client-credentials"] + fleet.connection, environment: environment)
            #expect(login.status == 0 && login.stdout.contains("Signed in as fleet-service"), "\(login.stderr)")
            #expect(fleet.sandbox.grantCount(.clientCredentials) == 1)
            try await fleet.withAuthenticator { authenticator, _ in try await authenticator.expireAccessToken() }
            fleet.sandbox.resetCounts()

            var locksTaken = 0
            for result in try await fleet.runTogether(8, callers: 20, calls: 2, startingIn: 4) {
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                let summary = try Summary(result)
                #expect(summary.succeeded == 40 && summary.failed.isEmpty, "\(result.stdout)")
                locksTaken += summary.locksTaken
            }
            #expect(fleet.sandbox.grantCount(.clientCredentials) == 1, "one renewal for 320 calls on 8 processes")
            #expect(fleet.sandbox.grantCount(.refreshToken) == 0)
            #expect(locksTaken >= 1, "the renewal ran under the shared lock")

            // Without the secret a worker cannot renew, and says what to set.
            let refused = try await run(
                fleet.worker, ["login", "--client-credentials"] + fleet.connection,
                environment: environment.filter { $0.key != "FLEET_CLIENT_SECRET" })
            #expect(refused.status != 0 && refused.stderr.contains("FLEET_CLIENT_SECRET"))
            await fleet.sandbox.stop()
        }
    }
#endif
