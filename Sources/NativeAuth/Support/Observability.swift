public import CoreMetrics
public import Tracing

/// Where NativeAuth's spans and metrics go: swift-distributed-tracing and swift-metrics.
///
/// By default, wherever the program bootstrapped them (`InstrumentationSystem.bootstrap`,
/// `MetricsSystem.bootstrap`, for example with swift-otel). With neither bootstrapped, NativeAuth
/// starts no span and makes no metric: the instrumented paths (discovery, token requests,
/// refreshes, lock waits, ID token validation, DPoP nonce retries, step-up) check one flag, and a
/// request sent with a token held in memory touches nothing.
///
/// Spans and metrics never carry a token, code, secret, key or a URL's query: their attributes
/// are grant types, error codes, outcomes and scrubbed URLs (see "Tracing and metrics" in the
/// documentation for the full list).
public struct Observability: Sendable {
    /// The tracer spans are started with.
    public var tracer: any Tracer
    /// The factory metrics are made with.
    public var metrics: any MetricsFactory

    /// Where spans and metrics go.
    ///
    /// - Parameters:
    ///   - tracer: Default: the tracer bootstrapped in `InstrumentationSystem`, if any.
    ///   - metrics: Default: the factory bootstrapped in `MetricsSystem`, if any.
    public init(
        tracer: any Tracer = InstrumentationSystem.tracer, metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        self.tracer = tracer
        self.metrics = metrics
    }

    /// Neither spans nor metrics, whatever the program bootstrapped.
    public static var off: Observability { Observability(tracer: NoOpTracer(), metrics: NOOPMetricsHandler.instance) }
}

/// The spans and metrics of one authenticator (``Observability`` resolved once): each helper
/// checks a flag first, so that with nothing bootstrapped the instrumented paths cost a branch.
///
/// Names: spans `nativeauth.<what>`; metrics `nativeauth_<what>` with low-cardinality dimensions
/// (grant types, operations, error codes, outcomes), never an issuer, a URL or a subject.
package struct Instruments: Sendable {
    private let tracer: (any Tracer)?
    private let metrics: (any MetricsFactory)?

    package init(_ observability: Observability) {
        tracer = observability.tracer is NoOpTracer ? nil : observability.tracer
        metrics = observability.metrics is NOOPMetricsHandler ? nil : observability.metrics
    }

    /// No spans, no metrics.
    package static let off = Instruments(.off)

    /// Whether anything is recorded (a tracer or a metrics backend).
    package var isRecording: Bool { tracer != nil || metrics != nil }

    // MARK: - Spans

    /// Runs `body` in a span named `name`, the current span's child; an error thrown ends the
    /// span with an error status and the error's code (never its message: see ``TracedFailure``).
    package func span<T, E: Error>(
        _ name: String,
        kind: SpanKind = .internal,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (TraceSpan) async throws(E) -> T
    ) async throws(E) -> T {
        guard let tracer else { return try await body(TraceSpan(nil)) }
        let span: any Span = tracer.startSpan(
            name, context: ServiceContext.current ?? .topLevel, ofKind: kind, at: DefaultTracerClock.now)
        defer { span.end() }
        let traced = TraceSpan(span)
        let result: Result<T, E> = await ServiceContext.$current.withValue(span.context) {
            do throws(E) {
                return .success(try await body(traced))
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = result { traced.failed(error) }
        return try result.get()
    }

    /// A span started now and ended by the caller (a lock wait, which ends when the lock is taken).
    package func startSpan(_ name: String, kind: SpanKind = .internal) -> TraceSpan {
        guard let tracer else { return TraceSpan(nil) }
        return TraceSpan(
            tracer.startSpan(
                name, context: ServiceContext.current ?? .topLevel, ofKind: kind, at: DefaultTracerClock.now))
    }

    // MARK: - Metrics

    /// Adds one to the counter `label` with `dimensions`.
    package func count(_ label: String, _ dimensions: [(String, String)] = []) {
        guard let metrics else { return }
        Counter(label: label, dimensions: dimensions, factory: metrics).increment()
    }

    /// Records `duration` in the timer `label`.
    package func time(_ label: String, _ dimensions: [(String, String)] = [], _ duration: Duration) {
        guard let metrics else { return }
        let (seconds, attoseconds) = duration.components
        Timer(label: label, dimensions: dimensions, factory: metrics)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Records `value` in the recorder `label` (aggregated: a histogram where the backend has one).
    package func record(_ label: String, _ dimensions: [(String, String)] = [], _ value: Double) {
        guard let metrics else { return }
        Recorder(label: label, dimensions: dimensions, aggregate: true, factory: metrics).record(value)
    }

    /// Counts a failure by its code and operation (`nativeauth_failures_total`).
    package func countFailure(_ error: any Error, operation: AuthOperation) {
        guard metrics != nil else { return }
        count(
            Metric.failures,
            [("operation", operation.rawValue), ("code", TracedFailure(error).code)])
    }

    /// When timing matters: the start of a wait whose length becomes a metric.
    package var now: ContinuousClock.Instant { ContinuousClock.now }

    /// The names of NativeAuth's metrics.
    package enum Metric {
        /// Counter: refreshes, by `outcome` (`refreshed`, `joined` another caller's, `other_process`
        /// found the set another process refreshed, `failed`).
        package static let refreshes = "nativeauth_refreshes_total"
        /// Counter: token requests, by `grant_type` and `outcome` (`success`, `failure`).
        package static let tokenRequests = "nativeauth_token_requests_total"
        /// Timer: how long token requests took, by `grant_type`.
        package static let tokenRequestDuration = "nativeauth_token_request_duration"
        /// Timer: how long callers waited for the store's lock.
        package static let lockWait = "nativeauth_lock_wait_duration"
        /// Counter: failures, by `operation` and `code`.
        package static let failures = "nativeauth_failures_total"
        /// Counter: DPoP proofs sent again after a refusal, by `server` (`authorization`, `resource`).
        package static let dpopRetries = "nativeauth_dpop_nonce_retries_total"
        /// Recorder: seconds the access token had left when a refresh replaced it (negative: expired).
        package static let lifetimeLeft = "nativeauth_token_lifetime_left_seconds"
        /// Recorder: seconds a newly issued access token is valid for, by `grant_type`.
        package static let lifetimeIssued = "nativeauth_token_lifetime_seconds"
        /// Counter: step-up sign-ins, by `reason` (`step_up_required`, `insufficient_scope`).
        package static let stepUps = "nativeauth_step_ups_total"
    }
}

/// A span NativeAuth started, or none when tracing is off: setting an attribute costs nothing then.
package struct TraceSpan: Sendable {
    private let span: (any Span)?

    init(_ span: (any Span)?) { self.span = span }

    /// Sets the attribute `key` (a name from ``Attribute``) to a value that is never a secret.
    package func set(_ key: String, _ value: String) {
        span?.attributes[key] = value
    }

    package func set(_ key: String, _ value: Bool) {
        span?.attributes[key] = value
    }

    /// Marks the span failed with `error`'s code.
    package func failed(_ error: any Error) {
        guard let span else { return }
        let failure = TracedFailure(error)
        span.attributes[Attribute.errorCode] = failure.code
        span.recordError(failure)
        span.setStatus(SpanStatus(code: .error, message: failure.code))
    }

    /// Ends a span from ``Instruments/startSpan(_:kind:)``.
    package func end() {
        span?.end()
    }

    /// The attribute names NativeAuth sets.
    package enum Attribute {
        package static let grantType = "oauth.grant_type"
        package static let operation = "nativeauth.operation"
        package static let issuer = "nativeauth.issuer"
        package static let dpop = "nativeauth.dpop"
        package static let oauthError = "oauth.error"
        package static let errorCode = "nativeauth.error.code"
        /// How a refresh ended for this caller: `refreshed`, `joined`, `other_process`.
        package static let refreshOutcome = "nativeauth.refresh.outcome"
        /// Whether the caller waited on another caller's or process's refresh (or step-up).
        package static let waited = "nativeauth.waited"
        package static let algorithm = "nativeauth.id_token.alg"
        package static let server = "nativeauth.dpop.server"
        package static let reason = "nativeauth.step_up.reason"
        /// How a lock wait ended: `taken`, `failed` (timed out, the store failed), `cancelled`.
        package static let lockOutcome = "nativeauth.lock.outcome"
    }
}

/// What a span records of a failure: its code (an ``AuthError/Code``, `cancelled`, or the error's
/// type), never its message, which may quote a server's answer.
package struct TracedFailure: Error, CustomStringConvertible {
    package let code: String

    package init(_ error: any Error) {
        switch error {
        case let error as AuthError: code = error.code.rawValue
        case is CancellationError: code = AuthError.Code.cancelled.rawValue
        default: code = String(describing: type(of: error))
        }
    }

    package var description: String { code }
}

/// An OAuth `error` value as a span shows it: the name when it is one (RFC 6749 §5.2 allows
/// printable ASCII; standard names are lowercase words joined by `_`), else `other`, so that a
/// server that puts something else there (a token it echoes) does not reach the trace.
package enum OAuthErrorName {
    package static func traced(_ name: String) -> String {
        guard (1...48).contains(name.utf8.count), name.utf8.allSatisfy({ (0x61...0x7a).contains($0) || $0 == 0x5f })
        else { return "other" }
        return name
    }
}

/// A JWS `alg` as a span shows it: the name when it looks like one (`RS256`, `EdDSA`), else `other`.
package enum JOSEAlgorithmName {
    package static func traced(_ name: String) -> String {
        guard (1...16).contains(name.utf8.count),
            name.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0)
            })
        else { return "other" }
        return name
    }
}
