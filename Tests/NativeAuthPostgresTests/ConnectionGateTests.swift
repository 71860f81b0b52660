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
        try await Task.sleep(for: .milliseconds(50))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<5 {
                group.addTask {
                    try await gate.withSlot(deadline: far, timedOut: Self.timedOut) {
                        order.withLockedValue { $0.append(index) }
                    }
                }
                // Each waiter queued before the next asks.
                try await Task.sleep(for: .milliseconds(30))
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
        try await Task.sleep(for: .milliseconds(50))

        let started = ContinuousClock.now
        let error = await #expect(throws: AuthError.self) {
            try await gate.withSlot(deadline: .now + .milliseconds(200), timedOut: Self.timedOut) {}
        }
        #expect(error?.message == Self.timedOut.message)
        #expect(ContinuousClock.now - started < .seconds(5))

        let waiter = Task {
            try await gate.withSlot(deadline: .now + .seconds(60), timedOut: Self.timedOut) {}
        }
        try await Task.sleep(for: .milliseconds(50))
        let cancelled = ContinuousClock.now
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(ContinuousClock.now - cancelled < .seconds(5), "a cancelled wait ends at once")

        // Neither the timed-out nor the cancelled waiter kept a slot: the next one gets it.
        release.continuation.yield()
        try await holder.value
        let ran = try await gate.withSlot(deadline: .now + .seconds(5), timedOut: Self.timedOut) { true }
        #expect(ran)
    }
}
