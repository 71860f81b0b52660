import Benchmark
import Foundation
import HTTPTypes
import Logging
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthPresenters
import NativeAuthTesting
import Synchronization

/// What a benchmark's setup hook makes and its closure uses (the hooks and the closure share
/// nothing else).
final class Fixture<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)

    func set(_ value: Value?) { storage.withLock { $0 = value } }

    /// The value set up, or an error naming the benchmark whose setup did not run.
    func get(_ name: String = #function) throws -> Value {
        guard let value = storage.withLock({ $0 }) else { throw BenchmarkFailure("\(name): the setup did not run") }
        return value
    }
}

/// A benchmark that cannot measure what it claims to.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The sandbox's public client asking for an ID token, a profile and an email.
func sandboxProvider(_ sandbox: SandboxAuthorizationServer, dpop: FeaturePolicy = .automatic) throws
    -> GenericOIDCProvider
{
    var configuration = ProviderConfiguration(
        issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
        scopes: ["openid", "profile", "email"])
    configuration.dpop = dpop
    return try GenericOIDCProvider(configuration: configuration)
}

/// A loopback presenter whose browser follows the sandbox's redirects (the sandbox approves by itself).
func scriptedBrowser() -> LoopbackPresenter {
    LoopbackPresenter(
        configuration: .init(timeout: .seconds(30), opener: RedirectFollowingBrowser(), output: ConsoleOutput { _ in }))
}

/// An authenticator signed in at the sandbox through a loopback login.
func signedIn(
    _ sandbox: SandboxAuthorizationServer,
    store: any TokenStore = MemoryTokenStore(),
    transport: any HTTPTransport = StandardTransport.platformDefault(),
    dpop: FeaturePolicy = .automatic,
    observability: Observability = Observability()
) async throws -> Authenticator {
    let auth = Authenticator(
        provider: try sandboxProvider(sandbox, dpop: dpop), store: store, transport: transport, logger: quiet,
        observability: observability)
    try await auth.login(.browser(scriptedBrowser()))
    return auth
}

/// NativeAuth's logger, silent: an info line per sign-in would only clutter the console.
let quiet = Logger(label: "NativeAuth") { _ in SwiftLogNoOpLogHandler() }

/// Times `first` and `second`, in an order that alternates with `iteration`, so that neither always
/// meets a warmer connection; the times come back in the order of the arguments.
func alternately(
    _ iteration: Int, _ first: () async throws -> Duration, _ second: () async throws -> Duration
) async throws -> (Duration, Duration) {
    if iteration.isMultiple(of: 2) {
        let one = try await first()
        return (one, try await second())
    }
    let two = try await second()
    return (try await first(), two)
}

/// How long `auth.send(request)` took, failing unless it answered 200.
func timedSend(_ auth: Authenticator, _ request: HTTPRequest) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    let (response, body) = try await auth.send(request)
    let elapsed = clock.now - start
    guard response.status.code == 200 else { throw BenchmarkFailure("send: \(response.status)") }
    blackHole(body)
    return elapsed
}

/// Nanoseconds in a duration, for custom metrics.
extension Duration {
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}

/// Where the release builds of the sample CLIs are: `NATIVEAUTH_BIN_DIR` (set by
/// `scripts/benchmarks`), else the root package's `.build/release`.
func cliPath(_ name: String) throws -> String {
    let environment = ProcessInfo.processInfo.environment
    let directory =
        environment["NATIVEAUTH_BIN_DIR"] ?? (FileManager.default.currentDirectoryPath + "/../.build/release")
    let path = directory + "/" + name
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchmarkFailure("\(path) is missing: build it with `swift build -c release --product \(name)`")
    }
    return path
}

/// A fresh directory under the system's temporary directory.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "nativeauth-bench-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
