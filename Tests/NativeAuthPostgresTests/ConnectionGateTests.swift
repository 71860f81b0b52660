// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import NIOConcurrencyHelpers
    import NativeAuth
    import TestSupport
    import Testing

    @testable import NativeAuthPostgres

    /// The bound on a store's lock connections, in memory (no database): slots are handed out first
    /// come first served, and a wait ends at its deadline or at its task's cancellation.
    @Suite(.testLogging)
    struct ConnectionGateTests {
        static let timedOut = AuthError(.tokenStoreFailed, "timed out waiting for a lock connection")

        /// Returns once the gate's one slot is taken (a slot that is free is taken and given back by
        /// the probe at once).
        static func untilTaken(_ gate: ConnectionGate) async throws {
            while (try? await gate.withSlot(deadline: .now, timedOut: timedOut) {}) != nil {
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        @Test func slotsAreHandedOutInTheOrderAsked() async throws {
            let gate = ConnectionGate(slots: 1)
            let order = NIOLockedValueBox<[Int]>([])
            let far = ContinuousClock.now + .seconds(60)
            let release = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await gate.withSlot(deadline: far, timedOut: Self.timedOut) {
                    for await _ in release.stream { break }
                }
            }
            try await Self.untilTaken(gate)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        try await gate.withSlot(deadline: far, timedOut: Self.timedOut) {
                            order.withLockedValue { $0.append(index) }
                        }
                    }
                    // Each waiter queued before the next asks.
                    let deadline = ContinuousClock.now + .seconds(30)
                    while gate.waiting < index + 1 && ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                #expect(order.withLockedValue { $0 }.isEmpty, "no waiter runs while the one slot is taken")
                release.continuation.yield()
                try await group.waitForAll()
            }
            try await holder.value
            #expect(order.withLockedValue { $0 } == [0, 1, 2, 3, 4])
        }

        @Test func aWaitEndsAtItsDeadlineAndOnCancellation() async throws {
            let gate = ConnectionGate(slots: 1)
            let release = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await gate.withSlot(deadline: .now + .seconds(60), timedOut: Self.timedOut) {
                    for await _ in release.stream { break }
                }
            }
            try await Self.untilTaken(gate)

            let started = ContinuousClock.now
            let error = await #expect(throws: AuthError.self) {
                try await gate.withSlot(deadline: .now + .milliseconds(200), timedOut: Self.timedOut) {}
            }
            #expect(error?.message == Self.timedOut.message)
            // The holder still holds: only the deadline ended this wait (a loaded machine may run the
            // timer late, so the bound is loose).
            #expect(ContinuousClock.now - started < .seconds(30))

            let waiter = Task {
                try await gate.withSlot(deadline: .now + .seconds(60), timedOut: Self.timedOut) {}
            }
            let queued = ContinuousClock.now + .seconds(30)
            while gate.waiting == 0 && ContinuousClock.now < queued { try await Task.sleep(for: .milliseconds(5)) }
            #expect(gate.waiting == 1, "the waiter is queued when it is cancelled")
            let cancelled = ContinuousClock.now
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            #expect(ContinuousClock.now - cancelled < .seconds(30), "the cancellation ended it, not its 60 s deadline")

            // Neither the timed-out nor the cancelled waiter kept a slot: the next one gets it.
            release.continuation.yield()
            try await holder.value
            let ran = try await gate.withSlot(deadline: .now + .seconds(5), timedOut: Self.timedOut) { true }
            #expect(ran)
        }
    }
#endif
