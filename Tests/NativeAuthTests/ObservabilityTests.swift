import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing
import Tracing

/// Spans (swift-distributed-tracing) and metrics (swift-metrics) of one sign-in, one refresh storm
/// across two "processes" (two authenticators on one store, whose lock the test holds until both
/// wait), a DPoP nonce retry at the token endpoint and at the resource, and a step-up, recorded
/// by the libraries' own test utilities (InMemoryTracer, TestMetrics); and none of them carries a
/// token, code, key or secret.
@Suite(.testLogging) struct ObservabilityTests {
    struct Recorded {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        var observability: Observability { Observability(tracer: tracer, metrics: metrics) }

        var spans: [FinishedInMemorySpan] { tracer.finishedSpans }

        func spans(_ name: String) -> [FinishedInMemorySpan] { spans.filter { $0.operationName == name } }

        func counter(_ label: String, _ dimensions: [(String, String)]) -> Int64 {
            metrics.counterTotal(label: label, dimensions: dimensions)
        }

        /// Everything a trace or metrics exporter would send, as text.
        var exported: String {
            var lines: [String] = []
            for span in spans {
                var line = "span \(span.operationName) kind=\(span.kind) status=\(String(describing: span.status))"
                // SpanAttributes is no Sequence: its own forEach is the way through it.
                // swift-format-ignore: ReplaceForEachWithForLoop
                span.attributes.forEach { key, value in line += " \(key)=\(value)" }
                for event in span.events { line += " event=\(event.name)" }
                for error in span.errors { line += " error=\(error.error)" }
                lines.append(line)
            }
            for counter in metrics.counters {
                lines.append("counter \(counter.label) \(counter.dimensions) \(counter.values)")
            }
            for timer in metrics.timers { lines.append("timer \(timer.label) \(timer.dimensions)") }
            for recorder in metrics.recorders {
                lines.append("recorder \(recorder.label) \(recorder.dimensions) \(recorder.values)")
            }
            return lines.joined(separator: "\n")
        }

        /// Fails when any of `secrets` shows in what would be exported; leaves it for the suite's
        /// redaction check too.
        func expectNoSecret(_ secrets: [String], _ name: String) {
            let text = exported
            recordForRedactionCheck(text, name: name)
            let shown = secrets.filter { $0.count >= 8 && text.contains($0) }
            #expect(shown.isEmpty, "\(shown.count) secrets in the spans or metrics")
        }
    }

    func authenticator(
        _ sandbox: SandboxAuthorizationServer, store: any TokenStore, _ observability: Observability,
        scopes: [String] = ["openid", "profile", "offline_access"]
    ) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: scopes)),
            store: store, transport: sandbox.transport, observability: observability)
    }

    func secrets(_ tokens: [TokenSet?]) -> [String] {
        tokens.compactMap { $0 }.flatMap { [$0.accessToken, $0.refreshToken, $0.idToken].compactMap { $0 } }
    }

    @Test func aSignInIsADiscoveryATokenRequestAndAValidatedIDToken() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let recorded = Recorded()
        let auth = try authenticator(sandbox, store: MemoryTokenStore(), recorded.observability)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))

        #expect(recorded.spans("nativeauth.discovery").count == 1)
        let request = try #require(recorded.spans("nativeauth.token_request").only)
        #expect(request.attributes.get(TraceSpan.Attribute.grantType) == .string("authorization_code"))
        #expect(request.kind == .client)
        #expect(request.status == nil, "a success")
        let validation = try #require(recorded.spans("nativeauth.id_token_validation").only)
        #expect(validation.attributes.get(TraceSpan.Attribute.algorithm) != nil)
        #expect(
            recorded.counter(
                "nativeauth_token_requests_total", [("grant_type", "authorization_code"), ("outcome", "success")]) == 1)
        #expect(
            try recorded.metrics.expectTimer(
                "nativeauth_token_request_duration", [("grant_type", "authorization_code")]
            ).values.count == 1)
        let lifetime = try recorded.metrics.expectRecorder(
            "nativeauth_token_lifetime_seconds", [("grant_type", "authorization_code")])
        #expect(lifetime.values.count == 1 && lifetime.values[0] > 0)
        recorded.expectNoSecret(secrets([tokens]), "telemetry-sign-in")
        await sandbox.stop()
    }

    @Test func aRefreshStormAcrossTwoProcessesIsOneRefreshTheOthersWaitedOn() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let recorded = Recorded()
        let first = try authenticator(sandbox, store: store, recorded.observability)
        let second = try authenticator(sandbox, store: store, recorded.observability)
        let signedIn = try await first.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        _ = try await second.accessToken()  // both hold the set in memory
        try await first.expireAccessToken()
        recorded.tracer.clearAll()
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))

        // The test holds the store's lock until both authenticators' refreshes wait for it: one
        // then refreshes, the other finds its tokens under the lock.
        let statuses = try await store.lock.withLock(first.key, timeout: .seconds(30)) {
            let storm = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<40 {
                        let auth = index.isMultiple(of: 2) ? first : second
                        group.addTask { Int(try await auth.send(request).0.status.code) }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            while recorded.tracer.activeSpans.filter({ $0.operationName == "nativeauth.lock_wait" }).count < 2 {
                try await Task.sleep(for: .milliseconds(10))
            }
            return storm
        }.value
        #expect(statuses == Array(repeating: 200, count: 40))
        #expect(sandbox.grantCount(.refreshToken) == 1)

        let refreshes = recorded.spans("nativeauth.refresh")
        func outcome(_ span: FinishedInMemorySpan) -> SpanAttribute? {
            span.attributes.get(TraceSpan.Attribute.refreshOutcome)
        }
        let refreshed = try #require(refreshes.filter { outcome($0) == .string("refreshed") }.only)
        #expect(refreshes.filter { outcome($0) == .string("other_process") }.count == 1)
        #expect(refreshed.attributes.get(TraceSpan.Attribute.waited) == .bool(false))
        for span in refreshes where outcome(span) != .string("refreshed") {
            #expect(span.attributes.get(TraceSpan.Attribute.waited) == .bool(true))
        }
        // The token request is the refresh's child, in the refresh's trace.
        let tokenRequest = try #require(recorded.spans("nativeauth.token_request").only)
        #expect(tokenRequest.attributes.get(TraceSpan.Attribute.grantType) == .string("refresh_token"))
        #expect(tokenRequest.parentSpanID == refreshed.spanID)
        let waits = recorded.spans("nativeauth.lock_wait")
        #expect(waits.count == 2)
        #expect(waits.allSatisfy { $0.attributes.get(TraceSpan.Attribute.lockOutcome) == .string("taken") })

        #expect(recorded.counter("nativeauth_refreshes_total", [("outcome", "refreshed")]) == 1)
        #expect(recorded.counter("nativeauth_refreshes_total", [("outcome", "other_process")]) == 1)
        #expect(
            recorded.counter("nativeauth_refreshes_total", [("outcome", "joined")]) == Int64(refreshes.count - 2))
        #expect(
            try recorded.metrics.expectTimer("nativeauth_lock_wait_duration", [("outcome", "taken")]).values.count >= 2)
        let left = try recorded.metrics.expectRecorder("nativeauth_token_lifetime_left_seconds")
        #expect(left.values.count == 1 && left.values[0] <= 0, "the token had expired")
        recorded.expectNoSecret(
            secrets([signedIn, try await first.currentTokens()]), "telemetry-refresh-storm")
        await sandbox.stop()
    }

    @Test func aRefusedRefreshIsAFailureByItsCode() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let recorded = Recorded()
        let auth = try authenticator(sandbox, store: MemoryTokenStore(), recorded.observability)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        try await auth.expireRefreshToken()
        try await auth.expireAccessToken()
        await #expect(throws: AuthError.self) { try await auth.accessToken() }
        let request = try #require(recorded.spans("nativeauth.token_request").last)
        #expect(request.status?.code == .error)
        #expect(request.attributes.get(TraceSpan.Attribute.oauthError) == .string("invalid_grant"))
        guard case .string(let code) = request.attributes.get(TraceSpan.Attribute.errorCode) else {
            Issue.record("the failed token request has no error code")
            return
        }
        #expect(
            code == AuthError.Code.loginRequired.rawValue || code == AuthError.Code.refreshFailed.rawValue, "\(code)")
        #expect(recorded.counter("nativeauth_failures_total", [("operation", "refresh"), ("code", code)]) == 1)
        #expect(recorded.counter("nativeauth_refreshes_total", [("outcome", "failed")]) == 1)
        recorded.expectNoSecret(secrets([tokens]), "telemetry-refused-refresh")
        await sandbox.stop()
    }

    @Test func aDPoPNonceRetryIsASpanAtTheServerAndAtTheResource() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.dpopSigningAlgorithms = ["ES256"]
        configuration.requiresDPoPNonce = true
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
        let recorded = Recorded()
        let auth = try authenticator(sandbox, store: MemoryTokenStore(), recorded.observability)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let atServer = try #require(recorded.spans("nativeauth.dpop_nonce_retry").only)
        #expect(atServer.attributes.get(TraceSpan.Attribute.server) == .string("authorization"))
        #expect(atServer.attributes.get(TraceSpan.Attribute.oauthError) == .string("use_dpop_nonce"))
        let request = try #require(recorded.spans("nativeauth.token_request").only)
        #expect(atServer.parentSpanID == request.spanID)
        #expect(request.attributes.get(TraceSpan.Attribute.dpop) == .bool(true))

        sandbox.rotateDPoPNonce()
        #expect(try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource))).0.status.code == 200)
        let retries = recorded.spans("nativeauth.dpop_nonce_retry")
        #expect(retries.count == 2)
        #expect(retries.last?.attributes.get(TraceSpan.Attribute.server) == .string("resource"))
        #expect(recorded.counter("nativeauth_dpop_nonce_retries_total", [("server", "authorization")]) == 1)
        #expect(recorded.counter("nativeauth_dpop_nonce_retries_total", [("server", "resource")]) == 1)
        recorded.expectNoSecret(secrets([tokens]) + sandbox.dpopProofs, "telemetry-dpop")
        await sandbox.stop()
    }

    @Test func aStepUpIsOneSpanAndOneSignInForEveryCallerThatMetTheChallenge() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.acrValuesSupported = ["urn:sandbox:mfa"]
        configuration.resourceACR = "urn:sandbox:mfa"
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
        let recorded = Recorded()
        let auth = try authenticator(sandbox, store: MemoryTokenStore(), recorded.observability)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        let presenter = RedirectFollowingPresenter(transport: sandbox.transport)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<5 {
                group.addTask { Int(try await auth.send(request, stepUpWith: presenter).0.status.code) }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 5))
        let stepUps = recorded.spans("nativeauth.step_up")
        #expect(stepUps.count == 5)
        #expect(stepUps.allSatisfy { $0.attributes.get(TraceSpan.Attribute.reason) == .string("step_up_required") })
        #expect(stepUps.filter { $0.attributes.get(TraceSpan.Attribute.waited) == .bool(false) }.count >= 1)
        #expect(recorded.counter("nativeauth_step_ups_total", [("reason", "step_up_required")]) == 1)
        #expect(recorded.spans("nativeauth.token_request").count == 2, "the first sign-in and the stronger one")
        recorded.expectNoSecret(secrets([tokens, try await auth.currentTokens()]), "telemetry-step-up")
        await sandbox.stop()
    }

    @Test func withNothingBootstrappedNothingIsRecorded() async throws {
        // The defaults: the global tracer and metrics factory, which no test bootstraps.
        #expect(!Instruments(Observability()).isRecording)
        #expect(!Instruments(.off).isRecording)
        let recorded = Recorded()
        #expect(Instruments(recorded.observability).isRecording)
        #expect(Instruments(Observability(tracer: NoOpTracer(), metrics: recorded.metrics)).isRecording)
    }

    @Test(arguments: [
        ("invalid_grant", "invalid_grant"), ("use_dpop_nonce", "use_dpop_nonce"),
        ("eyJhbGciOiJIUzI1NiJ9.e30.c2ln", "other"), ("Invalid Grant", "other"), ("", "other"),
        (String(repeating: "a", count: 49), "other"),
    ])
    func anOAuthErrorIsTracedOnlyWhenItIsAName(value: String, traced: String) {
        #expect(OAuthErrorName.traced(value) == traced)
    }
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
