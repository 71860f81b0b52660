import Benchmark
import Foundation

// The cold start of a sample CLI: `github-login status` with an empty store, as a new process
// each time (a release build; see `cliPath`). Its wall time and its peak resident memory.

let cliMicroseconds = BenchmarkMetric.custom("wall time (µs)", useScalingFactor: false)
let cliPeakResident = BenchmarkMetric.custom("peak RSS (KiB)", useScalingFactor: false)

func cliBenchmarks() {
    Benchmark(
        "CLI: github-login status, cold start",
        configuration: .init(
            metrics: [.wallClock, .throughput, cliMicroseconds, cliPeakResident],
            warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 200)
    ) { benchmark in
        let cli = try cliPath("github-login")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["status", "--client-id", "Iv1.benchmark", "--store", directory + "/store"]
        let clock = ContinuousClock()
        benchmark.startMeasurement()
        let start = clock.now
        let result = try wait(for: try spawn(cli, arguments))
        let elapsed = clock.now - start
        benchmark.stopMeasurement()
        guard result.status == 0 else { throw BenchmarkFailure("github-login status exited with \(result.status)") }
        benchmark.measurement(cliMicroseconds, elapsed.nanoseconds / 1_000)
        benchmark.measurement(cliPeakResident, result.peakResidentBytes / 1_024)
    }
}
