// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    internal import NativeAuth

    /// Lets at most `slots` lock connections of one store be in use at once (waiting for a key's lock
    /// or holding it), first come first served: the reads and writes inside each lock then always find
    /// a connection of their own in the pool.
    ///
    /// Without it, as many keys locked at once as the pool has connections would leave every holder
    /// waiting for a connection for its body that only another holder's end could free.
    final class ConnectionGate: Sendable {
        private struct Waiter {
            let id: Int
            let continuation: CheckedContinuation<Void, any Error>
        }

        private struct State {
            var free: Int
            var waiters: [Waiter] = []
            var nextID = 0
        }

        private let state: Locked<State>

        init(slots: Int) {
            state = Locked(State(free: max(1, slots)))
        }

        /// How many wait for a slot now.
        var waiting: Int { state.withLock { $0.waiters.count } }

        /// Runs `body` in a slot, waiting for one until `deadline` (then throwing `timedOut`) or
        /// cancellation.
        func withSlot<T: Sendable>(
            deadline: ContinuousClock.Instant,
            timedOut: AuthError,
            _ body: () async throws -> T
        ) async throws -> T {
            try await acquire(deadline: deadline, timedOut: timedOut)
            defer { release() }
            return try await body()
        }

        private func acquire(deadline: ContinuousClock.Instant, timedOut: AuthError) async throws {
            try Task.checkCancellation()
            let id: Int? = state.withLock { state in
                if state.free > 0 && state.waiters.isEmpty {
                    state.free -= 1
                    return nil
                }
                state.nextID += 1
                return state.nextID
            }
            guard let id else { return }
            let timer = Task {
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self.fail(id, with: timedOut)
            }
            defer { timer.cancel() }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    // Decided under the lock that `fail` takes: a cancellation or deadline that came
                    // before this waiter was queued is seen here, one that comes after finds it queued.
                    let outcome = state.withLock { state -> Result<Bool, any Error> in
                        if Task.isCancelled { return .failure(CancellationError()) }
                        if ContinuousClock.now >= deadline { return .failure(timedOut) }
                        // A slot freed since the id was taken is this waiter's when no one is ahead.
                        if state.free > 0 && state.waiters.isEmpty {
                            state.free -= 1
                            return .success(true)
                        }
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return .success(false)
                    }
                    switch outcome {
                    case .success(true): continuation.resume()
                    case .success: break
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                fail(id, with: CancellationError())
            }
        }

        /// Ends waiter `id`'s wait with `error`, when it is still waiting.
        private func fail(_ id: Int, with error: any Error) {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: error)
        }

        /// Hands the slot to the first waiter, or frees it.
        private func release() {
            let next = state.withLock { state -> Waiter? in
                guard !state.waiters.isEmpty else {
                    state.free += 1
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.continuation.resume()
        }
    }
#endif
