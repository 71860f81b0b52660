internal import Foundation
internal import NativeAuth

/// Waits for the first of several callback sources (the loopback receiver, a paste prompt) or the
/// timeout, then cancels the others and waits until they have stopped: nothing is left running.
enum CallbackRace {
    typealias Outcome = Result<AuthorizationResponse, AuthError>

    /// The first non-`nil` outcome of `sources`, a timeout failure after `timeout`, or `nil` when
    /// the task is cancelled or every source ends without an outcome.
    static func first(
        timeout: Duration,
        _ sources: [@Sendable () async -> Outcome?]
    ) async -> Outcome? {
        await withTaskGroup(of: Outcome?.self) { group in
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

    /// The response of `outcome`, or the error that ends the sign-in.
    static func finish(_ outcome: Outcome?) throws -> AuthorizationResponse {
        guard !Task.isCancelled, let outcome else {
            throw AuthError(.loginCancelled, "sign-in was cancelled", operation: .authorization)
        }
        return try outcome.get()
    }
}
