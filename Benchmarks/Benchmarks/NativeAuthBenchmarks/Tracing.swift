import Benchmark
import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthTesting

// What spans and metrics cost. Two authenticators signed in to the same sandbox over the same
// transport: one with nothing bootstrapped (the default: tracing off), one recording every span
// and metric (swift-distributed-tracing's InMemoryTracer, swift-metrics' TestMetrics).
// - `send` with the token in memory: the path every API call takes, where NativeAuth records
//   nothing, on or off.
// - `send` after the token expired: a refresh (its span, the lock wait's, the token request's, and
//   their metrics) and the GET.
// The two alternate in each iteration; the ratios compare medians of the same run.

private struct TracingState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var off: Authenticator
    var on: Authenticator
    var tracer: InMemoryTracer
}

private let tracing = Fixture<TracingState>()

let tracingOffNanoseconds = BenchmarkMetric.custom("send, tracing off (ns)", useScalingFactor: false)
let tracingOnNanoseconds = BenchmarkMetric.custom("send, tracing and metrics on (ns)", useScalingFactor: false)
let refreshOffNanoseconds = BenchmarkMetric.custom("refresh and send, tracing off (ns)", useScalingFactor: false)
let refreshOnNanoseconds = BenchmarkMetric.custom(
    "refresh and send, tracing and metrics on (ns)", useScalingFactor: false)

func tracingBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let transport = StandardTransport.platformDefault()
        let tracer = InMemoryTracer()
        let off = try await signedIn(sandbox, transport: transport)
        let on = try await signedIn(
            sandbox, transport: transport, observability: Observability(tracer: tracer, metrics: TestMetrics()))
        tracing.set(TracingState(sandbox: sandbox, off: off, on: on, tracer: tracer))
    }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        await (try? tracing.get())?.sandbox.stop()
        tracing.set(nil)
    }

    for refreshing in [false, true] {
        let (offMetric, onMetric) =
            refreshing ? (refreshOffNanoseconds, refreshOnNanoseconds) : (tracingOffNanoseconds, tracingOnNanoseconds)
        Benchmark(
            refreshing ? "tracing: refresh and send, off vs on" : "tracing: send, off vs on",
            configuration: .init(
                metrics: [.wallClock, .throughput, offMetric, onMetric],
                maxDuration: .seconds(10), maxIterations: refreshing ? 1_000 : 5_000, setup: setUp,
                teardown: tearDown)
        ) { benchmark in
            let state = try tracing.get()
            let request = HTTPRequest(method: .get, url: state.sandbox.url(.resource))
            func send(_ auth: Authenticator) async throws -> Duration {
                if refreshing { try await auth.expireAccessToken() }
                return try await timedSend(auth, request)
            }
            let (offTime, onTime) = try await alternately(
                benchmark.currentIteration, { try await send(state.off) }, { try await send(state.on) })
            // The spans are kept in memory; dropped so that the tracer does not grow for the run.
            state.tracer.clearAll()
            benchmark.measurement(offMetric, offTime.nanoseconds)
            benchmark.measurement(onMetric, onTime.nanoseconds)
        }
    }
}
