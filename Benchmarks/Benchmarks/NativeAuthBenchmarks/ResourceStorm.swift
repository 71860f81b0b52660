import Benchmark
import Foundation
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthTesting

// Tokens per resource (RFC 8707) and client credentials, after expiry: 1,000 concurrent callers
// across 4 resources must cause exactly 4 token requests (one per resource), and 1,000 callers of
// a client-credentials sign-in exactly 1. Each iteration expires the tokens (unmeasured), then
// measures the callers; the sandbox counts the token requests that reached it.

private struct ResourceState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var auth: Authenticator
    var resources: [URL]
}

private let resourceStorm = Fixture<ResourceState>()
private let clientStorm = Fixture<ResourceState>()

let tokenRequests = BenchmarkMetric.custom("token requests", useScalingFactor: false)

func resourceStormBenchmarks() {
    let names = ["mail", "calendar", "files", "search"]
    Benchmark(
        "resource storm: 1000 callers across 4 resources",
        configuration: .init(
            metrics: [.wallClock, .throughput, tokenRequests, stormMicroseconds],
            warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 25,
            setup: {
                var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
                configuration.protectedResources = names
                let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
                let auth = try await signedIn(sandbox)
                let resources = names.map { sandbox.resourceURL($0) }
                for resource in resources { blackHole(try await auth.accessToken(for: resource)) }
                resourceStorm.set(ResourceState(sandbox: sandbox, auth: auth, resources: resources))
            },
            teardown: {
                await (try? resourceStorm.get())?.sandbox.stop()
                resourceStorm.set(nil)
            })
    ) { benchmark in
        let state = try resourceStorm.get()
        try await state.auth.expireResourceTokens()
        state.sandbox.resetCounts()
        let clock = ContinuousClock()
        benchmark.startMeasurement()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1_000 {
                let resource = state.resources[index % state.resources.count]
                group.addTask { blackHole(try await state.auth.accessToken(for: resource)) }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        benchmark.stopMeasurement()
        benchmark.measurement(tokenRequests, state.sandbox.grantCount(.refreshToken))
        benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
    }

    let secret = "benchmark-service-secret-0123456789"
    Benchmark(
        "client credentials storm: 1000 callers",
        configuration: .init(
            metrics: [.wallClock, .throughput, tokenRequests, stormMicroseconds],
            warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 25,
            setup: {
                let sandbox = try await SandboxAuthorizationServer.start(
                    .init(clients: [.init(id: "service", secret: secret)]), mode: .live)
                let auth = Authenticator(
                    provider: try GenericOIDCProvider(
                        configuration: ProviderConfiguration(
                            issuer: sandbox.issuer, clientID: "service", clientSecret: secret, scopes: ["api"])),
                    store: MemoryTokenStore(), transport: StandardTransport.platformDefault(), logger: quiet)
                try await auth.login(.clientCredentials)
                clientStorm.set(ResourceState(sandbox: sandbox, auth: auth, resources: []))
            },
            teardown: {
                await (try? clientStorm.get())?.sandbox.stop()
                clientStorm.set(nil)
            })
    ) { benchmark in
        let state = try clientStorm.get()
        try await state.auth.expireAccessToken()
        state.sandbox.resetCounts()
        let clock = ContinuousClock()
        benchmark.startMeasurement()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 { group.addTask { blackHole(try await state.auth.accessToken()) } }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        benchmark.stopMeasurement()
        benchmark.measurement(tokenRequests, state.sandbox.grantCount(.clientCredentials))
        benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
    }
}
