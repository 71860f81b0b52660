import Foundation
import HTTPTypes
import Logging
import NativeAuth
import NativeAuthServices
import NativeAuthTesting
import ServiceLifecycle
import TestSupport
import Testing

/// `TokenRenewal` in a swift-service-lifecycle `ServiceGroup`, against the in-process sandbox with
/// a client-credentials client. The sandbox, the authenticator and the renewal share a `TestClock`
/// whose sleeps pass at once, so that hours of renewals happen in a second of real time; the
/// sandbox answers each token request a second late (real time), so that a request that waited on
/// a renewal would show it in its latency.
@Suite(.testLogging) struct TokenRenewalTests {
    static let clientID = "renewal-service"
    static let secret = "renewal-service-secret-0123456789"

    func signedIn(_ clock: TestClock) async throws -> (SandboxAuthorizationServer, Authenticator) {
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(
                clients: [.init(id: Self.clientID, secret: Self.secret)], accessTokenLifetime: .seconds(600),
                clock: clock.clock),
            mode: .inMemory)
        let authenticator = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: Self.clientID, clientSecret: Self.secret, scopes: ["api"])),
            store: MemoryTokenStore(), transport: sandbox.transport, clock: clock.clock)
        try await authenticator.login(.clientCredentials)
        return (sandbox, authenticator)
    }

    /// Requests for as long as the group runs, each timed in real time.
    struct Requests: Service {
        let authenticator: Authenticator
        let url: URL
        let latencies = Shared<[Duration]>([])

        func run() async throws {
            do {
                try await cancelWhenGracefulShutdown {
                    while true {
                        let start = ContinuousClock.now
                        let (response, _) = try await authenticator.send(HTTPRequest(method: .get, url: url))
                        guard response.status.code == 200 else {
                            throw AuthError(.requestFailed, "\(response.status)")
                        }
                        latencies.update { $0.append(ContinuousClock.now - start) }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            } catch is CancellationError {
                return
            } catch let error as AuthError where error.code == .cancelled {
                return  // a request in flight when the group stopped
            }
        }
    }

    @Test func renewalsComeAheadOfExpiryAndNoRequestWaitsOnOne() async throws {
        let clock = TestClock()
        let (sandbox, authenticator) = try await signedIn(clock)
        sandbox.failNext(1000, .token, with: .delay(.seconds(1)))
        sandbox.resetCounts()
        let requests = Requests(authenticator: authenticator, url: sandbox.url(.resource))
        let renewal = TokenRenewal(authenticator: authenticator, ahead: .seconds(300), clock: clock.clock)
        let group = ServiceGroup(services: [renewal, requests], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        // Two renewals, each made when the token had five minutes left (600 s tokens), and requests
        // meanwhile.
        for _ in 0..<6000 where sandbox.requestCount(.token) < 2 || requests.latencies.value.count < 10 {
            try await Task.sleep(for: .milliseconds(10))
        }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(sandbox.requestCount(.token) >= 2)
        let latencies = requests.latencies.value
        #expect(latencies.count >= 10)
        #expect(latencies.allSatisfy { $0 < .seconds(1) }, "slowest: \(latencies.max() ?? .zero)")
        let tokens = try #require(try await authenticator.currentTokens())
        #expect(try #require(tokens.expiresAt).timeIntervalSince(clock.now) > 250)
    }

    /// Graceful shutdown ends the renewal at once, mid-wait; a sign-in that is missing, or whose
    /// client is refused, ends it with the error.
    @Test func shutdownEndsItAndARefusalIsAnError() async throws {
        let clock = TestClock()
        let (sandbox, authenticator) = try await signedIn(clock)
        let renewal = TokenRenewal(authenticator: authenticator, clock: .system)
        let group = ServiceGroup(services: [renewal], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await running.value
        // The renewal waits five minutes (600 s tokens, 300 s ahead, the system clock): shutdown
        // ends that wait. The bound is for a test machine running every suite at once.
        #expect(ContinuousClock.now - start < .seconds(60))

        sandbox.failNext(1, .token, with: .oauthError("invalid_client", status: 401, description: "revoked"))
        try await authenticator.expireAccessToken()
        let refused = TokenRenewal(authenticator: authenticator, clock: clock.clock)
        let error = await #expect(throws: AuthError.self) { try await refused.run() }
        #expect(error?.isRetryable == false)

        try await authenticator.logout()
        let nobody = TokenRenewal(authenticator: authenticator, clock: clock.clock)
        let missing = await #expect(throws: AuthError.self) { try await nobody.run() }
        #expect(missing?.code == .loginRequired)
    }
}
