/// One operation in flight for every caller that asks while it runs: they all await the same task
/// and get its result, success or error. The metadata, the JWKS and refreshing use it.
///
/// - A failure is never kept: the next caller starts again.
/// - With `keepsValue`, a success is kept and handed to every later caller (metadata, JWKS) until
///   ``reload(after:_:)`` replaces it; without, the next caller after the flight ends starts a new
///   one (a refresh).
/// - Each start gets a generation number, so that callers who saw the same stale value ask for one
///   reload between them, not one each (a burst of ID tokens signed by a new key).
/// - The operation runs in a task of its own: cancelling one caller does not cancel what the others
///   wait for.
package final class SingleFlight<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var task: Task<Value, any Error>?
        var generation = 0
    }

    private let keepsValue: Bool
    private let state = Locked(State())

    /// Creates an idle flight.
    ///
    /// - Parameter keepsValue: Whether a success is kept for later callers.
    package init(keepsValue: Bool = false) {
        self.keepsValue = keepsValue
    }

    /// The kept value, or the result of the operation in flight, or of `operation` started now.
    package func value(_ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await join(replacing: nil, operation).value
    }

    /// The value, and whether this caller started the operation (`false`: it joined one in
    /// flight, or got the kept value).
    package func valueReportingStart(
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, started: Bool) {
        let (value, _, started) = try await flight(replacing: nil, operation)
        return (value, started)
    }

    /// The value and its generation (see ``reload(after:_:)``).
    package func valueAndGeneration(
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, generation: Int) {
        try await join(replacing: nil, operation)
    }

    /// Runs `operation` again, unless a flight started after generation `seen` (then its result
    /// is the answer).
    package func reload(
        after seen: Int,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, generation: Int) {
        try await join(replacing: seen, operation)
    }

    /// Drops the kept value; the next caller starts again.
    package func reset() {
        state.withLock { $0.task = nil }
    }

    private func join(
        replacing seen: Int?,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, generation: Int) {
        let (value, generation, _) = try await flight(replacing: seen, operation)
        return (value, generation)
    }

    private func flight(
        replacing seen: Int?,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, generation: Int, started: Bool) {
        let (task, generation, started) = state.withLock { state -> (Task<Value, any Error>, Int, Bool) in
            if let task = state.task, seen.map({ state.generation > $0 }) ?? true {
                return (task, state.generation, false)
            }
            state.generation += 1
            let task = Task { try await operation() }
            state.task = task
            return (task, state.generation, true)
        }
        do {
            let value = try await task.value
            if !keepsValue { finish(generation) }
            return (value, generation, started)
        } catch {
            finish(generation)
            throw error
        }
    }

    /// Forgets the flight of `generation`, unless a newer one replaced it already.
    private func finish(_ generation: Int) {
        state.withLock { state in
            if state.generation == generation { state.task = nil }
        }
    }
}
