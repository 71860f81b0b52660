import Benchmark
import Foundation
import HTTPTypes
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthTesting
import Synchronization

// A whole loopback sign-in against the sandbox, with a scripted browser that follows the
// sandbox's redirects (it approves by itself). The phases are timed from the outside, through
// NativeAuth's own plug-in points: a transport, a token store and a presenter that note when
// each call starts and ends.

private struct LoginState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var directory: String
}

private let login = Fixture<LoginState>()

/// The phases of a sign-in, in order, with their metric.
let loginPhases: [(name: String, metric: BenchmarkMetric)] = [
    "discovery", "listener", "browser round trip", "token exchange", "ID-token validation",
    "of which JWKS fetch", "store", "total",
].map { ($0, BenchmarkMetric.custom("\($0) (µs)", useScalingFactor: false)) }

func loginBenchmarks() {
    Benchmark(
        "login: loopback sign-in, scripted browser",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal] + loginPhases.map(\.metric),
            warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 300,
            setup: {
                let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
                login.set(LoginState(sandbox: sandbox, directory: try temporaryDirectory()))
            },
            teardown: {
                if let state = try? login.get() {
                    await state.sandbox.stop()
                    try? FileManager.default.removeItem(atPath: state.directory)
                }
                login.set(nil)
            })
    ) { benchmark in
        let state = try login.get()
        let timeline = Timeline()
        let auth = Authenticator(
            provider: try sandboxProvider(state.sandbox),
            store: TimedStore(FileTokenStore(directory: state.directory + "/store"), timeline),
            transport: TimedTransport(StandardTransport.platformDefault(), timeline), logger: quiet)
        let presenter = TimedPresenter(scriptedBrowser(), timeline)
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await auth.metadata()
        let discovered = clock.now
        _ = try await auth.login(.browser(presenter))
        let end = clock.now
        benchmark.stopMeasurement()

        let tokenCall = try timeline.span("POST /token")
        let saved = try timeline.span("save")
        let phases: [Duration] = [
            discovered - start,
            try timeline.span("listener").duration,
            try timeline.span("browser").duration,
            tokenCall.duration,
            saved.start - tokenCall.end,
            try timeline.span("GET /jwks").duration,
            saved.duration,
            end - start,
        ]
        for (phase, duration) in zip(loginPhases, phases) {
            benchmark.measurement(phase.metric, duration.nanoseconds / 1_000)
        }
    }
}

/// When each noted call started and ended (the first call of each name).
final class Timeline: Sendable {
    struct Span {
        var start: ContinuousClock.Instant
        var end: ContinuousClock.Instant
        var duration: Duration { end - start }
    }

    private let spans = Mutex<[String: Span]>([:])

    func note<T: Sendable>(_ name: String, _ body: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        let result = try await body()
        let span = Span(start: start, end: ContinuousClock.now)
        spans.withLock { spans in
            if spans[name] == nil { spans[name] = span }
        }
        return result
    }

    func span(_ name: String) throws -> Span {
        guard let span = spans.withLock({ $0[name] }) else { throw BenchmarkFailure("no \(name) call was seen") }
        return span
    }
}

/// A transport that notes each request as "METHOD /path".
struct TimedTransport: HTTPTransport {
    let base: any HTTPTransport
    let timeline: Timeline

    init(_ base: any HTTPTransport, _ timeline: Timeline) {
        self.base = base
        self.timeline = timeline
    }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        let name = "\(request.method.rawValue) \(request.url?.path ?? "?")"
        return try await timeline.note(name) { try await base.send(request, body: body) }
    }
}

/// A token store that notes its first save.
struct TimedStore: TokenStore {
    let base: any TokenStore
    let timeline: Timeline

    init(_ base: any TokenStore, _ timeline: Timeline) {
        self.base = base
        self.timeline = timeline
    }

    func load(_ key: TokenKey) async throws -> TokenSet? { try await base.load(key) }
    func save(_ tokens: TokenSet, for key: TokenKey) async throws {
        try await timeline.note("save") { try await base.save(tokens, for: key) }
    }
    func remove(_ key: TokenKey) async throws { try await base.remove(key) }
    func keys() async throws -> [TokenKey] { try await base.keys() }
    var lock: AnyTokenLock { AnyTokenLock(base.lock) }
}

/// A presenter that notes how long its listener takes to start ("listener") and how long the
/// browser takes to come back to it ("browser").
struct TimedPresenter: UserAgentPresenter {
    let base: any UserAgentPresenter
    let timeline: Timeline

    init(_ base: any UserAgentPresenter, _ timeline: Timeline) {
        self.base = base
        self.timeline = timeline
    }

    func beginSession() async throws -> any UserAgentSession {
        Session(base: try await timeline.note("listener") { try await base.beginSession() }, timeline: timeline)
    }

    struct Session: UserAgentSession {
        let base: any UserAgentSession
        let timeline: Timeline
        var redirectURI: URL { base.redirectURI }

        func authorize<Outcome: Sendable>(
            _ authorizationURL: URL,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
        ) async throws -> Outcome {
            try await timeline.note("browser") { try await base.authorize(authorizationURL, handler: handler) }
        }

        func close() async { await base.close() }
    }
}
