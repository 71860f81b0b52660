import Benchmark
import Foundation
import NativeAuth
import NativeAuthTesting

// Processes that share one file store, started together after the access token expired:
// `oidc-login token` in each (a release build; see `cliPath`). The store's lock must let exactly
// one of them refresh, and the others must pick up its tokens instead of sending the refresh
// token that was just rotated away (which the sandbox would answer with `invalid_grant`).

private struct CrossProcessState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var store: FileTokenStore
    var directory: String
    var cli: String
}

private let crossProcess = Fixture<CrossProcessState>()

let invalidGrants = BenchmarkMetric.custom("invalid_grant answers", useScalingFactor: false)

func crossProcessBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = {
        let cli = try cliPath("oidc-login")
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try temporaryDirectory()
        let store = FileTokenStore(directory: directory + "/store")
        _ = try await signedIn(sandbox, store: store)
        crossProcess.set(CrossProcessState(sandbox: sandbox, store: store, directory: directory, cli: cli))
    }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        if let state = try? crossProcess.get() {
            await state.sandbox.stop()
            try? FileManager.default.removeItem(atPath: state.directory)
        }
        crossProcess.set(nil)
    }
    for processes in [1, 8] {
        Benchmark(
            "cross-process: \(processes) process\(processes == 1 ? "" : "es"), one store",
            configuration: .init(
                metrics: [.wallClock, .throughput, refreshRequests, invalidGrants, stormMicroseconds],
                warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 40,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try crossProcess.get()
            // A new authenticator reads what the last iteration's processes stored.
            let auth = Authenticator(provider: try sandboxProvider(state.sandbox), store: state.store, logger: quiet)
            try await auth.expireAccessToken()
            let before = try await auth.currentTokens()?.accessToken
            state.sandbox.resetCounts()
            let arguments = [
                "token", "--issuer", state.sandbox.issuer.absoluteString,
                "--client-id", SandboxAuthorizationServer.Client.defaultID, "--store", state.directory + "/store",
            ]
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            let results = try await runTogether(processes) { _ in try spawn(state.cli, arguments) }
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            if let failed = results.first(where: { $0.status != 0 }) {
                throw BenchmarkFailure("oidc-login token exited with \(failed.status)")
            }
            guard let after = try state.store.load(auth.key)?.accessToken, after != before else {
                throw BenchmarkFailure("the processes did not store a refreshed access token")
            }
            benchmark.measurement(refreshRequests, state.sandbox.grantCount(.refreshToken))
            benchmark.measurement(invalidGrants, state.sandbox.errorCount("invalid_grant"))
            benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
        }
    }
}

/// Starts `count` processes at once (`start` gets each one's index) and waits for all of them, on
/// a thread of its own (waiting blocks).
func runTogether(_ count: Int, _ start: @escaping @Sendable (Int) throws -> pid_t) async throws -> [ChildResult] {
    try await onThread {
        let pids = try (0..<count).map { try start($0) }
        return try pids.map { try wait(for: $0) }
    }
}

/// Waits for every one of `pids`, on a thread of its own.
func waitForAll(_ pids: [pid_t]) async throws -> [ChildResult] {
    try await onThread { try pids.map { try wait(for: $0) } }
}

/// Runs blocking `work` on a thread of its own, off the cooperative pool.
private func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
