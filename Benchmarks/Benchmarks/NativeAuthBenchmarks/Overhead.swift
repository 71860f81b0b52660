import Benchmark
import Foundation
import HTTPTypes
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthOpenAPI
import NativeAuthTesting
import OpenAPIRuntime

// What NativeAuth adds to every API call: `Authenticator.send` against the bare transport (the
// platform's default, AsyncHTTPClient on Linux), for the same GET of the sandbox's protected
// resource (the bare one carries the header set by hand). The two run alternately in each
// iteration, so that both see the same machine; the ratio of their medians is the overhead.
// `accessToken()` served from memory is timed on its own.

private struct OverheadState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var auth: Authenticator
    var transport: any HTTPTransport
    var token: String
}

private let overhead = Fixture<OverheadState>()

let bareNanoseconds = BenchmarkMetric.custom("bare transport GET (ns)", useScalingFactor: false)
let sendNanoseconds = BenchmarkMetric.custom("Authenticator.send GET (ns)", useScalingFactor: false)
let accessTokenNanoseconds = BenchmarkMetric.custom("accessToken() (ns per call)", useScalingFactor: false)
let bearerSendNanoseconds = BenchmarkMetric.custom("send with a bearer token (ns)", useScalingFactor: false)
let dpopSendNanoseconds = BenchmarkMetric.custom("send with a DPoP token (ns)", useScalingFactor: false)
let proofNanoseconds = BenchmarkMetric.custom("one DPoP proof made (ns)", useScalingFactor: false)
let middlewareSendNanoseconds = BenchmarkMetric.custom("send through the middleware (ns)", useScalingFactor: false)
let directSendNanoseconds = BenchmarkMetric.custom("Authenticator.send beside it (ns)", useScalingFactor: false)

// What DPoP adds to an API call: `send` with a DPoP-bound token (one ES256 proof signed by the
// client, checked by the server) against `send` with a bearer token, to the same sandbox, which
// takes both. The two alternate in each iteration.
private struct DPoPState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var bearer: Authenticator
    var dpop: Authenticator
}

private let dpopOverhead = Fixture<DPoPState>()

func overheadBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let transport = StandardTransport.platformDefault()
        let auth = try await signedIn(sandbox, transport: transport)
        overhead.set(
            OverheadState(sandbox: sandbox, auth: auth, transport: transport, token: try await auth.accessToken()))
    }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        await (try? overhead.get())?.sandbox.stop()
        overhead.set(nil)
    }

    Benchmark(
        "overhead: send vs bare transport",
        configuration: .init(
            metrics: [.wallClock, .throughput, bareNanoseconds, sendNanoseconds],
            maxDuration: .seconds(10), maxIterations: 5_000, setup: setUp, teardown: tearDown)
    ) { benchmark in
        let state = try overhead.get()
        let request = HTTPRequest(method: .get, url: state.sandbox.url(.resource))
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer \(state.token)"
        let clock = ContinuousClock()
        func bare() async throws -> Duration {
            let start = clock.now
            let (response, body) = try await state.transport.send(authorized, body: nil)
            let elapsed = clock.now - start
            guard response.status.code == 200 else { throw BenchmarkFailure("bare GET: \(response.status)") }
            blackHole(body)
            return elapsed
        }
        let (bareTime, sendTime) = try await alternately(
            benchmark.currentIteration, { try await bare() }, { try await timedSend(state.auth, request) })
        benchmark.measurement(bareNanoseconds, bareTime.nanoseconds)
        benchmark.measurement(sendNanoseconds, sendTime.nanoseconds)
    }

    // What the OpenAPI middleware adds: an operation through `AuthenticationMiddleware`, whose
    // `next` hands the request to the same transport (as an OpenAPI transport would: the base URL
    // and the path joined, the answer's body wrapped), against `Authenticator.send` of the same GET.
    Benchmark(
        "overhead: OpenAPI middleware vs send",
        configuration: .init(
            metrics: [.wallClock, .throughput, directSendNanoseconds, middlewareSendNanoseconds],
            maxDuration: .seconds(10), maxIterations: 5_000, setup: setUp, teardown: tearDown)
    ) { benchmark in
        let state = try overhead.get()
        let url = state.sandbox.url(.resource)
        let request = HTTPRequest(method: .get, url: url)
        // The server URL without a trailing slash, as OpenAPI transports join it with "/resource".
        guard let base = URL(string: String(url.absoluteString.dropLast(url.lastPathComponent.count + 1))) else {
            throw BenchmarkFailure("no base URL for \(url)")
        }
        let middleware = AuthenticationMiddleware(authenticator: state.auth, api: base)
        let operation = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/" + url.lastPathComponent)
        let transport = state.transport
        // The transport's half of the join, done once: the middleware's own costs are measured.
        let scheme = request.scheme
        let authority = request.authority
        let basePath = base.path
        let clock = ContinuousClock()
        func throughMiddleware() async throws -> Duration {
            let start = clock.now
            let (response, body) = try await middleware.intercept(
                operation, body: nil, baseURL: base, operationID: "getResource"
            ) { request, _, _ in
                var absolute = request
                absolute.scheme = scheme
                absolute.authority = authority
                absolute.path = basePath + (request.path ?? "")
                let (response, data) = try await transport.send(absolute, body: nil)
                return (response, HTTPBody(data))
            }
            guard response.status.code == 200, let body else {
                throw BenchmarkFailure("middleware: \(response.status)")
            }
            // Not read: as the Data `send` returns is not; reading an HTTPBody is the runtime's cost.
            blackHole(body)
            return clock.now - start
        }
        let (directTime, middlewareTime) = try await alternately(
            benchmark.currentIteration, { try await timedSend(state.auth, request) }, { try await throughMiddleware() })
        benchmark.measurement(directSendNanoseconds, directTime.nanoseconds)
        benchmark.measurement(middlewareSendNanoseconds, middlewareTime.nanoseconds)
    }

    Benchmark(
        "overhead: accessToken() from memory",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal, accessTokenNanoseconds],
            scalingFactor: .kilo, maxDuration: .seconds(5), setup: setUp, teardown: tearDown)
    ) { benchmark in
        let auth = try overhead.get().auth
        let clock = ContinuousClock()
        let start = clock.now
        for _ in benchmark.scaledIterations {
            blackHole(try await auth.accessToken())
        }
        let elapsed = clock.now - start
        benchmark.measurement(accessTokenNanoseconds, elapsed.nanoseconds / benchmark.scaledIterations.count)
    }

    Benchmark(
        "overhead: send with DPoP vs bearer",
        configuration: .init(
            metrics: [.wallClock, .throughput, bearerSendNanoseconds, dpopSendNanoseconds, proofNanoseconds],
            maxDuration: .seconds(10), maxIterations: 5_000,
            setup: {
                var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
                configuration.dpopSigningAlgorithms = ["ES256"]
                let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
                let transport = StandardTransport.platformDefault()
                let bearer = try await signedIn(sandbox, transport: transport, dpop: .disabled)
                let dpop = try await signedIn(sandbox, transport: transport, dpop: .required)
                dpopOverhead.set(DPoPState(sandbox: sandbox, bearer: bearer, dpop: dpop))
            },
            teardown: {
                await (try? dpopOverhead.get())?.sandbox.stop()
                dpopOverhead.set(nil)
            })
    ) { benchmark in
        let state = try dpopOverhead.get()
        let request = HTTPRequest(method: .get, url: state.sandbox.url(.resource))
        let clock = ContinuousClock()
        let (bearerTime, dpopTime) = try await alternately(
            benchmark.currentIteration, { try await timedSend(state.bearer, request) },
            { try await timedSend(state.dpop, request) })
        benchmark.measurement(bearerSendNanoseconds, bearerTime.nanoseconds)
        benchmark.measurement(dpopSendNanoseconds, dpopTime.nanoseconds)
        // What the client adds alone: the proof NativeAuth makes for each call.
        guard let key = try await state.dpop.currentTokens()?.dpopKey else { throw BenchmarkFailure("no DPoP key") }
        let start = clock.now
        blackHole(try key.proof(method: "GET", url: request.url ?? state.sandbox.issuer, accessToken: "t"))
        benchmark.measurement(proofNanoseconds, (clock.now - start).nanoseconds)
    }
}
