#if canImport(CNativeAuthSecret)
    internal import CNativeAuthSecret
    internal import Dispatch
    internal import Foundation
    internal import NativeAuth

    /// One connection to a Secret Service, opened on first use and reopened after a failure; every
    /// call runs on its own serial queue (libsecret's calls block), never on Swift's cooperative
    /// threads, and is cancelled when its time is up or its task is cancelled.
    final class SecretServiceConnection: @unchecked Sendable {
        /// How long one call (connecting included) may take.
        let timeout: Duration
        private let queue = DispatchQueue(label: "NativeAuthKeyring.SecretService")
        /// Only touched on `queue`.
        private var service: OpaquePointer?

        init(timeout: Duration) {
            self.timeout = timeout
        }

        deinit {
            if let service { nativeauth_secret_close(service) }
        }

        /// What a call in C returned: its status, its message, and its value when it succeeded.
        struct Outcome<Value: Sendable>: Sendable {
            var status: Int32
            var message: String?
            var value: Value?
        }

        /// Runs `body` with the open service and a cancel handle, on the connection's queue.
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
                    queue.async {
                        continuation.resume(returning: self.run(body, cancel: cancel, timeout: timeout))
                    }
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

        /// On `queue`: opens the service when needed, runs `body`, and drops the connection after
        /// a failure that may have left it unusable.
        private func run<Value>(
            _ body: (OpaquePointer, OpaquePointer) -> Outcome<Value>,
            cancel: CancelHandle,
            timeout: Duration
        ) -> Outcome<Value> {
            let timer = DispatchWorkItem { [cancel] in cancel.timeUp() }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: timer)
            defer { timer.cancel() }
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
