import Benchmark
import Foundation
import NativeAuth
import NativeAuthTesting

// The cost of a sample CLI as a person sees it, as a new process each time (release builds; see
// `cliPath`): the cold start of `status` with an empty store (github-login, one provider; and
// oidc-login, which the sign-in below uses), and a whole `oidc-login login` through the loopback
// redirect with a scripted browser (scripts/lib/following_browser.py, a Python process that
// follows the sandbox's redirects; the sandbox approves by itself). Wall time and peak resident
// memory (`ru_maxrss`; the browser is a child the CLI waits for, and far smaller).

let cliMicroseconds = BenchmarkMetric.custom("wall time (µs)", useScalingFactor: false)
let cliPeakResident = BenchmarkMetric.custom("peak RSS (KiB)", useScalingFactor: false)

private struct SignInState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var directory: String
    var cli: String
    var browser: String
}

private let signIn = Fixture<SignInState>()

/// The scripted browser of the project's tests, found from this file's place in the repository.
private func followingBrowser() throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let script = root.appendingPathComponent("scripts/lib/following_browser.py").path
    guard FileManager.default.fileExists(atPath: script) else { throw BenchmarkFailure("\(script) is missing") }
    return script
}

func cliBenchmarks() {
    for tool in ["github-login", "oidc-login"] {
        Benchmark(
            "CLI: \(tool) status, cold start",
            configuration: .init(
                metrics: [.wallClock, .throughput, cliMicroseconds, cliPeakResident],
                warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 200)
        ) { benchmark in
            let cli = try cliPath(tool)
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let issuer = tool == "oidc-login" ? ["--issuer", "https://id.example.com"] : []
            let arguments = ["status", "--client-id", "benchmark", "--store", directory + "/store"] + issuer
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            let result = try wait(for: try spawn(cli, arguments))
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            guard result.status == 0 else { throw BenchmarkFailure("\(tool) status exited with \(result.status)") }
            benchmark.measurement(cliMicroseconds, elapsed.nanoseconds / 1_000)
            benchmark.measurement(cliPeakResident, result.peakResidentBytes / 1_024)
        }
    }

    Benchmark(
        "CLI: oidc-login login, loopback sign-in",
        configuration: .init(
            metrics: [.wallClock, .throughput, cliMicroseconds, cliPeakResident],
            warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 40,
            setup: {
                let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
                signIn.set(
                    SignInState(
                        sandbox: sandbox, directory: try temporaryDirectory(), cli: try cliPath("oidc-login"),
                        browser: try followingBrowser()))
            },
            teardown: {
                if let state = try? signIn.get() {
                    await state.sandbox.stop()
                    try? FileManager.default.removeItem(atPath: state.directory)
                }
                signIn.set(nil)
            })
    ) { benchmark in
        let state = try signIn.get()
        // A store of its own each time: every iteration signs in from nothing.
        let store = state.directory + "/" + UUID().uuidString
        let arguments = [
            "login", "--issuer", state.sandbox.issuer.absoluteString, "--client-id",
            SandboxAuthorizationServer.Client.defaultID, "--store", store,
        ]
        let clock = ContinuousClock()
        benchmark.startMeasurement()
        let start = clock.now
        let result = try wait(
            for: try spawn(state.cli, arguments, environment: ["BROWSER": "python3 " + state.browser]))
        let elapsed = clock.now - start
        benchmark.stopMeasurement()
        guard result.status == 0 else { throw BenchmarkFailure("oidc-login login exited with \(result.status)") }
        benchmark.measurement(cliMicroseconds, elapsed.nanoseconds / 1_000)
        benchmark.measurement(cliPeakResident, result.peakResidentBytes / 1_024)
    }
}
