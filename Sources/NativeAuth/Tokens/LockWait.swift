/// The wait for a store's lock, as a span and a timer (``Instruments/Metric/lockWait``): ended once,
/// when the lock is taken or the wait fails. `nil` when nothing is recorded.
final class LockWait: Sendable {
    private let instruments: Instruments
    private let span: TraceSpan
    private let started: ContinuousClock.Instant
    private let ended = Locked(false)

    init?(_ instruments: Instruments) {
        guard instruments.isRecording else { return nil }
        self.instruments = instruments
        span = instruments.startSpan("nativeauth.lock_wait")
        started = instruments.now
    }

    func taken() {
        end(outcome: "taken")
    }

    func ended(by error: any Error) {
        guard end(outcome: TracedFailure(error).code == AuthError.Code.cancelled.rawValue ? "cancelled" : "failed")
        else { return }
        span.failed(error)
        span.end()
    }

    /// Records the wait once; `true` for the call that did (a failure after the lock was taken is
    /// the body's, not the wait's).
    @discardableResult
    private func end(outcome: String) -> Bool {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return false }
        instruments.time(Instruments.Metric.lockWait, [("outcome", outcome)], ContinuousClock.now - started)
        span.set(TraceSpan.Attribute.lockOutcome, outcome)
        if outcome == "taken" { span.end() }
        return true
    }
}
