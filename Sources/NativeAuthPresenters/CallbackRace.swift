internal import Foundation
internal import NativeAuth

/// Waits for the first of several callback sources (the loopback receiver, a paste prompt) or the
/// timeout, then cancels the others and waits until they have stopped: nothing is left running.
enum CallbackRace {
    /// The first non-`nil` outcome of `sources`, a timeout failure after `timeout`, or `nil` when
    /// the task is cancelled or every source ends without an outcome.
    static func first<Value: Sendable>(
        timeout: Duration,
        _ sources: [@Sendable () async -> Result<Value, AuthError>?]
    ) async -> Result<Value, AuthError>? {
        await withTaskGroup(of: Result<Value, AuthError>?.self) { group in
            for source in sources { group.addTask { await source() } }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return nil
                }
                return .failure(
                    AuthError(
                        .timeout,
                        "no sign-in callback arrived within \(timeout.seconds) seconds",
                        hint: "sign in again, and finish in the browser before the time runs out; if the"
                            + " provider's page refused the redirect URI, the server matches it exactly (not"
                            + " RFC 8252 §7.3): register http://127.0.0.1:PORT/callback and sign in on that `port`",
                        operation: .authorization
                    )
                )
            }
            defer { group.cancelAll() }
            // A source that ends without an outcome (a paste prompt at the end of its input)
            // leaves the others running; the timer always ends with one unless cancelled.
            while let outcome = await group.next() {
                if let outcome { return outcome }
                if Task.isCancelled { return nil }
            }
            return nil
        }
    }

    /// The value of `outcome`, or the error that ends the sign-in.
    static func finish<Value>(_ outcome: Result<Value, AuthError>?) throws -> Value {
        guard !Task.isCancelled, let outcome else {
            throw AuthError(.loginCancelled, "sign-in was cancelled", operation: .authorization)
        }
        return try outcome.get()
    }
}

/// The value of the first callback a handler completes with, kept for a receiver made before the
/// value's type was known (the loopback listener, bound in `beginSession()`): the receiver sees
/// only whether a callback completed, and how.
final class CompletedValue<Value: Sendable>: Sendable {
    private let value = Locked<Value?>(nil)

    /// `handler` as the receiver takes it: the value of a success stays here.
    func erasing(
        _ handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Value>
    ) -> @Sendable (AuthorizationCallback) -> CallbackDisposition<Void> {
        { callback in
            switch handler(callback) {
            case .ignore: return .ignore
            case .complete(.failure(let error)): return .complete(.failure(error))
            case .complete(.success(let completed)):
                self.value.withLock { if $0 == nil { $0 = completed } }
                return .complete(.success(()))
            }
        }
    }

    /// The receiver's outcome with the value put back.
    func typed(_ outcome: Result<Void, AuthError>?) -> Result<Value, AuthError>? {
        outcome.map { outcome in
            outcome.flatMap {
                value.withLock { $0 }.map { .success($0) }
                    ?? .failure(AuthError(.loginCancelled, "the callback's result was lost", operation: .authorization))
            }
        }
    }
}
