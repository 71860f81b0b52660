import Benchmark
import Foundation
import HTTPTypes
import NativeAuth
import NativeAuthTesting

// 1,000 concurrent callers after the access token expired must cause exactly one refresh request,
// and cost little more than one caller's refresh. Each iteration expires the token (unmeasured),
// then measures the callers; the sandbox counts the refresh requests that reached it.

private struct StormState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var auth: Authenticator
}

private let storm = Fixture<StormState>()

let refreshRequests = BenchmarkMetric.custom("refresh requests", useScalingFactor: false)
let stormMicroseconds = BenchmarkMetric.custom("wall time (µs)", useScalingFactor: false)

func refreshStormBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        storm.set(StormState(sandbox: sandbox, auth: try await signedIn(sandbox)))
    }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        await (try? storm.get())?.sandbox.stop()
        storm.set(nil)
    }
    for (callers, call) in [(1, "accessToken()"), (1_000, "accessToken()"), (1, "send()"), (1_000, "send()")] {
        Benchmark(
            "refresh storm: \(callers) caller\(callers == 1 ? "" : "s"), \(call)",
            configuration: .init(
                metrics: [.wallClock, .throughput, refreshRequests, stormMicroseconds],
                warmupIterations: 1, maxDuration: .seconds(15), maxIterations: callers == 1 ? 200 : 25,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try storm.get()
            let resource = HTTPRequest(method: .get, url: state.sandbox.url(.resource))
            try await state.auth.expireAccessToken()
            state.sandbox.resetCounts()
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<callers {
                    group.addTask {
                        if call == "send()" {
                            let (response, _) = try await state.auth.send(resource)
                            guard response.status.code == 200 else {
                                throw BenchmarkFailure("send: \(response.status)")
                            }
                        } else {
                            blackHole(try await state.auth.accessToken())
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            benchmark.measurement(refreshRequests, state.sandbox.grantCount(.refreshToken))
            benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
        }
    }
}
