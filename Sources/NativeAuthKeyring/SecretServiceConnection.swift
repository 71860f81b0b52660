#if canImport(CNativeAuthSecret)
    internal import CNativeAuthSecret
    internal import Foundation
    internal import NativeAuth

    /// One connection to a Secret Service, opened on first use and reopened after a failure.
    ///
    /// libsecret's calls block, so each runs on a thread of its own: neither Swift's cooperative
    /// threads nor libdispatch's (which back them on Linux, and grow only slowly when blocked) are
    /// ever held by a D-Bus round trip, and a busy process cannot delay one either. Calls run one at
    /// a time in the whole process (they share GLib's session bus connection), and each is
    /// cancelled by a watchdog thread when its time is up, or when its task is cancelled.
    final class SecretServiceConnection: @unchecked Sendable {
        /// How long one call (connecting included) may take.
        let timeout: Duration
        /// One libsecret call at a time, in the whole process.
        private static let calls = NSLock()
        /// Only touched while holding `calls`.
        private var service: OpaquePointer?

        init(timeout: Duration) {
            self.timeout = timeout
        }

        deinit {
            guard let service else { return }
            Self.calls.lock()
            nativeauth_secret_close(service)
            Self.calls.unlock()
        }

        /// What a call in C returned: its status, its message, and its value when it succeeded.
        struct Outcome<Value: Sendable>: Sendable {
            var status: Int32
            var message: String?
            var value: Value?
        }

        /// Runs `body` with the open service and a cancel handle, on a thread of its own.
        ///
        /// - Throws: `AuthError` (`token_store_failed`) for any status but OK and NOT_FOUND;
        ///   `CancellationError` when the task was cancelled.
        func call<Value: Sendable>(
            timeout: Duration? = nil,
            _ body: @escaping @Sendable (OpaquePointer, OpaquePointer) -> Outcome<Value>
        ) async throws -> Outcome<Value> {
            let timeout = timeout ?? self.timeout
            let cancel = CancelHandle()
            let outcome = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<Outcome<Value>, any Error>) in
                    let thread = Thread {
                        Self.calls.lock()
                        let outcome = self.run(body, cancel: cancel, timeout: timeout)
                        Self.calls.unlock()
                        continuation.resume(returning: outcome)
                    }
                    thread.start()
                }
            } onCancel: {
                cancel.fire()
            }
            switch outcome.status {
            case Int32(NATIVEAUTH_SECRET_OK), Int32(NATIVEAUTH_SECRET_NOT_FOUND): return outcome
            case Int32(NATIVEAUTH_SECRET_CANCELLED) where !cancel.timedOut: throw CancellationError()
            default: throw Self.error(outcome, timeout: timeout)
            }
        }

        /// Holding `calls`: opens the service when needed, runs `body`, and drops the connection
        /// after a failure that may have left it unusable.
        private func run<Value>(
            _ body: (OpaquePointer, OpaquePointer) -> Outcome<Value>,
            cancel: CancelHandle,
            timeout: Duration
        ) -> Outcome<Value> {
            let watchdog = Watchdog(cancel: cancel, deadline: Date().addingTimeInterval(timeout.timeInterval))
            defer { watchdog.finish() }
            if service == nil {
                var opened: OpaquePointer?
                var message: UnsafeMutablePointer<CChar>?
                let status = nativeauth_secret_open(cancel.pointer, &opened, &message)
                guard status == NATIVEAUTH_SECRET_OK, let opened else {
                    return Outcome(status: status, message: Self.take(message), value: nil)
                }
                service = opened
            }
            guard let service else { return Outcome(status: Int32(NATIVEAUTH_SECRET_FAILED), message: nil, value: nil) }
            let outcome = body(service, cancel.pointer)
            if outcome.status == NATIVEAUTH_SECRET_UNAVAILABLE || outcome.status == NATIVEAUTH_SECRET_CANCELLED {
                nativeauth_secret_close(service)
                self.service = nil
            }
            return outcome
        }

        /// The string libsecret's layer returned, freed.
        static func take(_ message: UnsafeMutablePointer<CChar>?) -> String? {
            guard let message else { return nil }
            defer { nativeauth_secret_free_string(message) }
            return String(cString: message)
        }

        static func error<Value>(_ outcome: Outcome<Value>, timeout: Duration) -> AuthError {
            let detail = outcome.message.map { " (\($0))" } ?? ""
            let files = "or keep tokens in files: --token-storage file"
            switch outcome.status {
            case Int32(NATIVEAUTH_SECRET_LOCKED):
                return AuthError(
                    .tokenStoreFailed, "the login keyring is locked: unlock it, or use --token-storage file",
                    hint: "unlock it in your desktop session (Seahorse, or log in again), \(files)")
            case Int32(NATIVEAUTH_SECRET_NO_COLLECTION):
                return AuthError(
                    .tokenStoreFailed, "the Secret Service has no default keyring to keep the tokens in",
                    hint: "create a login keyring (Seahorse), \(files)")
            case Int32(NATIVEAUTH_SECRET_CANCELLED):
                return AuthError(
                    .tokenStoreFailed,
                    "the Secret Service did not answer within \(timeout.timeInterval.formatted()) s",
                    hint: "check the keyring daemon (gnome-keyring, KeePassXC), \(files)")
            case Int32(NATIVEAUTH_SECRET_UNAVAILABLE):
                return AuthError(
                    .tokenStoreFailed, "no Secret Service answered on the session bus\(detail)",
                    hint: "start a keyring daemon (gnome-keyring, KeePassXC), \(files)")
            default:
                return AuthError(.tokenStoreFailed, "the Secret Service refused the request\(detail)")
            }
        }
    }

    /// A thread that cancels a call when its deadline passes, unless the call finished first.
    final class Watchdog: @unchecked Sendable {
        private let condition = NSCondition()
        /// Guarded by `condition`.
        private var finished = false

        init(cancel: CancelHandle, deadline: Date) {
            let thread = Thread { [self] in
                condition.lock()
                while !finished, condition.wait(until: deadline) {}
                let late = !finished
                condition.unlock()
                if late { cancel.timeUp() }
            }
            thread.start()
        }

        /// The call finished: the watchdog stops without cancelling.
        func finish() {
            condition.lock()
            finished = true
            condition.signal()
            condition.unlock()
        }
    }

    /// A libsecret cancel handle that the timer, the task's cancellation and the call share; freed
    /// when the last of them lets go.
    final class CancelHandle: @unchecked Sendable {
        let pointer: OpaquePointer
        private let state = NSLock()
        private var expired = false

        init() {
            pointer = nativeauth_secret_cancel_new()
        }

        deinit { nativeauth_secret_cancel_free(pointer) }

        /// Whether the call was cancelled because its time was up (not by its task).
        var timedOut: Bool { state.withLock { expired } }

        func timeUp() {
            state.withLock { expired = true }
            nativeauth_secret_cancel_fire(pointer)
        }

        func fire() { nativeauth_secret_cancel_fire(pointer) }
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings.
    func withCStringArray<Result>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { preconditionFailure("a non-empty array has storage") }
            return body(base)
        }
    }
#endif
