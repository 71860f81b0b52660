import Benchmark
import Foundation
import NativeAuth
import NativeAuthPostgres
import NativeAuthTesting
import PostgresNIO

// PostgresTokenStore against the PostgreSQL that scripts/benchmarks starts (NATIVEAUTH_POSTGRES_URL),
// in a database of this run's own:
//
// - `accessToken()` with a valid token: a listening store (revisions from memory), a store that
//   reads the row's generation on every call, and MemoryTokenStore, alternating in each iteration;
// - the 16 × 50 storm: 16 `fleet-worker run` processes of 50 callers each, started together after
//   the access token expired, on PostgreSQL and on one machine's file store (`--file-store`); the
//   refresh requests, the wall time, and each worker's wait for the lock;
// - `send()` throughput of 16 `fleet-worker` instances against one, with a valid token.

private struct PostgresState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var directory: String
    var databaseURL: String
    var sealingKey: String
    var postgres: Authenticator
    var memory: Authenticator
    var listening: Authenticator
    var reading: Authenticator
    var listeningStore: PostgresTokenStore
    var readingStore: PostgresTokenStore
    var files: Authenticator
    var tasks: [Task<Void, Never>]
    var worker: String

    /// `fleet-worker`'s options for the sandbox's client, on PostgreSQL or on the file store.
    func connection(fileStore: Bool) -> [String] {
        ["--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID]
            + (fileStore ? ["--file-store", directory + "/store"] : [])
    }

    var environment: [String: String] { ["FLEET_DATABASE_URL": databaseURL, "FLEET_SEALING_KEY": sealingKey] }
}

private let postgresFixture = Fixture<PostgresState>()

let memoryAccessNanoseconds = BenchmarkMetric.custom("MemoryTokenStore (ns per call)", useScalingFactor: false)
let listeningAccessNanoseconds = BenchmarkMetric.custom(
    "PostgreSQL, listening (ns per call)", useScalingFactor: false)
let readingAccessNanoseconds = BenchmarkMetric.custom(
    "PostgreSQL, a read per call (ns per call)", useScalingFactor: false)
let lockWaitMicroseconds = BenchmarkMetric.custom("lock wait (µs)", useScalingFactor: false)
let callsPerSecond = BenchmarkMetric.custom("calls per second", useScalingFactor: false)
let databaseReadsPerCall = BenchmarkMetric.custom("database reads per 1000 calls", useScalingFactor: false)

func postgresBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = { postgresFixture.set(try await startPostgresState()) }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        if let state = try? postgresFixture.get() {
            for task in state.tasks { task.cancel() }
            await state.sandbox.stop()
            try? FileManager.default.removeItem(atPath: state.directory)
        }
        postgresFixture.set(nil)
    }

    Benchmark(
        "postgres: accessToken() listening vs a read per call vs memory",
        configuration: .init(
            metrics: [
                .wallClock, .throughput, memoryAccessNanoseconds, listeningAccessNanoseconds,
                readingAccessNanoseconds, databaseReadsPerCall,
            ],
            maxDuration: .seconds(10), maxIterations: 500, setup: setUp, teardown: tearDown)
    ) { benchmark in
        let state = try postgresFixture.get()
        let clock = ContinuousClock()
        func perCall(_ auth: Authenticator, _ calls: Int) async throws -> Int {
            let start = clock.now
            for _ in 0..<calls { blackHole(try await auth.accessToken()) }
            return (clock.now - start).nanoseconds / calls
        }
        let readsBefore = state.listeningStore.statistics.databaseReads
        // Which goes first turns, so that none always meets a warmer cache.
        var timings: [Int: Int] = [:]
        for offset in 0..<3 {
            switch (benchmark.currentIteration + offset) % 3 {
            case 0: timings[0] = try await perCall(state.memory, 1000)
            case 1: timings[1] = try await perCall(state.listening, 1000)
            default: timings[2] = try await perCall(state.reading, 50)
            }
        }
        benchmark.measurement(memoryAccessNanoseconds, timings[0] ?? 0)
        benchmark.measurement(listeningAccessNanoseconds, timings[1] ?? 0)
        benchmark.measurement(readingAccessNanoseconds, timings[2] ?? 0)
        benchmark.measurement(databaseReadsPerCall, state.listeningStore.statistics.databaseReads - readsBefore)
    }

    for fileStore in [false, true] {
        let store = fileStore ? "file store" : "PostgreSQL"
        Benchmark(
            "postgres: storm of 16 workers x 50 callers, \(store)",
            configuration: .init(
                metrics: [
                    .wallClock, .throughput, refreshRequests, invalidGrants, stormMicroseconds, lockWaitMicroseconds,
                ],
                warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 15,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try postgresFixture.get()
            let auth = fileStore ? state.files : state.postgres
            try await auth.expireAccessToken()
            let before = try await auth.currentTokens()?.accessToken
            state.sandbox.resetCounts()
            let api = state.sandbox.url(.resource).absoluteString
            let arguments =
                ["run"] + state.connection(fileStore: fileStore) + ["--api", api, "--callers", "50", "--calls", "1"]
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            let summaries = try await runWorkers(16, state.worker, arguments, environment: state.environment)
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            guard summaries.allSatisfy({ $0.succeeded == 50 }) else {
                throw BenchmarkFailure("a worker's callers were not all served: \(summaries.map(\.line))")
            }
            guard let after = try await auth.currentTokens()?.accessToken, after != before else {
                throw BenchmarkFailure("the workers did not store a refreshed access token")
            }
            benchmark.measurement(refreshRequests, state.sandbox.grantCount(.refreshToken))
            benchmark.measurement(invalidGrants, state.sandbox.errorCount("invalid_grant"))
            benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
            for summary in summaries where summary.locksTaken > 0 {
                benchmark.measurement(lockWaitMicroseconds, summary.longestLockWaitMicroseconds)
            }
        }
    }

    for instances in [1, 16] {
        Benchmark(
            "postgres: send() throughput, \(instances) instance\(instances == 1 ? "" : "s")",
            configuration: .init(
                metrics: [.wallClock, .throughput, callsPerSecond],
                warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 10,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try postgresFixture.get()
            let api = state.sandbox.url(.resource).absoluteString
            // Every instance starts calling at the same moment, once all have started and listen;
            // the measurement runs from that moment until the last one ends.
            let startAt = Date().addingTimeInterval(3)
            let arguments =
                ["run"] + state.connection(fileStore: false) + [
                    "--api", api, "--callers", "4", "--calls", "50",
                    "--start-at", String(Int64(startAt.timeIntervalSince1970 * 1000)),
                ]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let paths = (0..<instances).map { directory + "/worker-\($0).out" }
            let pids = try paths.map { try spawn(state.worker, arguments, environment: state.environment, output: $0) }
            try await Task.sleep(for: .milliseconds(max(0, Int64(startAt.timeIntervalSinceNow * 1000))))
            benchmark.startMeasurement()
            let results = try await waitForAll(pids)
            benchmark.stopMeasurement()
            let workers = try summaries(results, paths)
            let calls = workers.reduce(0) { $0 + $1.succeeded }
            guard calls == instances * 200 else {
                throw BenchmarkFailure("not every call succeeded: \(workers.map(\.line))")
            }
            // All began at `startAt`; the last to finish ends the window.
            let window = workers.map(\.elapsedMicroseconds).max() ?? 1
            benchmark.measurement(callsPerSecond, calls * 1_000_000 / max(window, 1))
        }
    }
}

/// A database of this run's own in the PostgreSQL of NATIVEAUTH_POSTGRES_URL, the sandbox, and
/// the authenticators, all signed in to one account.
private func startPostgresState() async throws -> PostgresState {
    let environment = ProcessInfo.processInfo.environment
    guard let text = environment["NATIVEAUTH_POSTGRES_URL"], let url = URLComponents(string: text),
        let host = url.host, let user = url.user
    else {
        throw BenchmarkFailure("no PostgreSQL: run scripts/benchmarks, which starts one (NATIVEAUTH_POSTGRES_URL)")
    }
    let worker = try cliPath("fleet-worker")
    let database = "nativeauth_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    func configuration(_ database: String) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: database,
            tls: .disable)
        configuration.options.maximumConnections = 4
        return configuration
    }
    var tasks: [Task<Void, Never>] = []
    let admin = PostgresClient(configuration: configuration("postgres"), backgroundLogger: quiet)
    let adminTask = Task { await admin.run() }
    defer { adminTask.cancel() }
    try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"), logger: quiet)

    var random = SystemRandomNumberGenerator()
    let sealingKey = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }).base64EncodedString()
    let keys = try SealingKeys(current: SealingKey(id: "k1", base64: sealingKey))
    func store() -> PostgresTokenStore {
        let client = PostgresClient(configuration: configuration(database), backgroundLogger: quiet)
        tasks.append(Task { await client.run() })
        return PostgresTokenStore(
            client: client, keys: keys, configuration: .init(maximumLockConnections: 2), logger: quiet)
    }
    let listeningStore = store()
    let readingStore = store()
    try await listeningStore.migrate()
    tasks.append(Task { await listeningStore.run() })
    let deadline = ContinuousClock.now + .seconds(10)
    while !listeningStore.isListening {
        guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the store did not start listening") }
        try await Task.sleep(for: .milliseconds(10))
    }

    let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
    let directory = try temporaryDirectory()
    let provider = try GenericOIDCProvider(
        configuration: ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "offline_access"]))
    func authenticator(_ store: any TokenStore) -> Authenticator {
        Authenticator(provider: provider, store: store, logger: quiet)
    }
    let postgres = authenticator(listeningStore)
    try await postgres.login(.browser(scriptedBrowser()))
    let files = authenticator(FileTokenStore(directory: directory + "/store"))
    try await files.login(.browser(scriptedBrowser()))
    let memory = authenticator(MemoryTokenStore())
    try await memory.login(.browser(scriptedBrowser()))
    let listening = authenticator(listeningStore)
    let reading = authenticator(readingStore)
    _ = try await listening.accessToken()
    _ = try await reading.accessToken()

    var workerURL = url
    workerURL.path = "/" + database
    workerURL.query = "sslmode=disable"
    return PostgresState(
        sandbox: sandbox, directory: directory, databaseURL: workerURL.string ?? "", sealingKey: sealingKey,
        postgres: postgres, memory: memory, listening: listening, reading: reading, listeningStore: listeningStore,
        readingStore: readingStore, files: files, tasks: tasks, worker: worker)
}

/// One `fleet-worker run`'s summary line.
struct WorkerSummary {
    var line: String
    var succeeded: Int
    var elapsedMicroseconds: Int
    var locksTaken: Int
    var longestLockWaitMicroseconds: Int

    init(_ line: String) throws {
        self.line = line
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw BenchmarkFailure("fleet-worker printed no summary: \(line)")
        }
        succeeded = object["succeeded"] as? Int ?? 0
        elapsedMicroseconds = object["elapsed_us"] as? Int ?? 0
        locksTaken = object["locks_taken"] as? Int ?? 0
        longestLockWaitMicroseconds = object["longest_lock_wait_us"] as? Int ?? 0
    }
}

/// Starts `count` workers at once, waits for all, and reads each one's summary.
private func runWorkers(
    _ count: Int, _ worker: String, _ arguments: [String], environment: [String: String]
) async throws -> [WorkerSummary] {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let paths = (0..<count).map { directory + "/worker-\($0).out" }
    let results = try await runTogether(count) { index in
        try spawn(worker, arguments, environment: environment, output: paths[index])
    }
    return try summaries(results, paths)
}

/// The summary line each worker wrote to its file, once all exited 0.
private func summaries(_ results: [ChildResult], _ paths: [String]) throws -> [WorkerSummary] {
    if let failed = results.first(where: { $0.status != 0 }) {
        let outputs = paths.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        throw BenchmarkFailure("fleet-worker exited with \(failed.status): \(outputs)")
    }
    return try paths.map { path in
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try WorkerSummary(text.split(separator: "\n").last.map(String.init) ?? "")
    }
}
