import Benchmark

// Every benchmark talks to servers on 127.0.0.1 in this process (the sandbox authorization server,
// or a TestHTTPServer), or runs the sample CLIs as processes. `scripts/benchmarks` runs them all
// and turns the medians into BENCHMARKS.md; each group's file says what it compares.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 3,
        maxDuration: .seconds(5),
        maxIterations: 10_000
    )
    transportBenchmarks()
    overheadBenchmarks()
    tracingBenchmarks()
    refreshStormBenchmarks()
    resourceStormBenchmarks()
    crossProcessBenchmarks()
    loginBenchmarks()
    jsonBenchmarks()
    cliBenchmarks()
    keyringBenchmarks()
    postgresBenchmarks()
}
