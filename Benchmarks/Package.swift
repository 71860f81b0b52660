// swift-tools-version: 6.1

import PackageDescription

// NativeAuth's benchmarks: `scripts/benchmarks` (from the repository root) runs them all and writes
// BENCHMARKS.md. A separate package, so that package-benchmark is never a dependency of NativeAuth.
//
// A path dependency is named by its folder's name, lowercased: "nativeauth" in a checkout named so,
// "main" or "ci-check" elsewhere.
let nativeAuth = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "nativeauth"

let package = Package(
    name: "NativeAuthBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "NativeAuthBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NativeAuth", package: nativeAuth),
                .product(name: "NativeAuthAsyncHTTPClient", package: nativeAuth),
                .product(name: "NativeAuthOpenAPI", package: nativeAuth),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "NativeAuthPresenters", package: nativeAuth),
                .product(name: "NativeAuthURLSession", package: nativeAuth),
                .product(name: "NativeAuthTesting", package: nativeAuth),
                .product(name: "NativeAuthKeyring", package: nativeAuth),
                .product(name: "NativeAuthPostgres", package: nativeAuth),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "LenientJSON", package: nativeAuth),
            ],
            path: "Benchmarks/NativeAuthBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
