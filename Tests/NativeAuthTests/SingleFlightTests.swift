import NIOConcurrencyHelpers
import NativeAuth
import TestSupport
import Testing

/// The one single-flight helper behind the metadata, the JWKS and refreshing.
@Suite(.testLogging) struct SingleFlightTests {
    private struct Failed: Error {}

    /// Counts runs; each run waits until `gate` opens, so callers pile up on it.
    private final class Operation: Sendable {
        let runs = NIOLockedValueBox(0)
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)

        func run() async throws -> Int {
            let run = runs.withLockedValue { runs in
                runs += 1
                return runs
            }
            for await _ in gate { break }
            return run
        }
    }

    @Test func concurrentCallersShareOneRun() async throws {
        let flight = SingleFlight<Int>()
        let operation = Operation()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await flight.value { try await operation.run() } } }
            while operation.runs.withLockedValue({ $0 }) == 0 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(20))  // the others join meanwhile
            operation.opener.finish()
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(Set(results) == [1])
        #expect(operation.runs.withLockedValue { $0 } == 1)
    }

    /// An operation that returns how many times it ran, and the count.
    private static func counting() -> (operation: @Sendable () async throws -> Int, runs: NIOLockedValueBox<Int>) {
        let runs = NIOLockedValueBox(0)
        let operation: @Sendable () async throws -> Int = {
            runs.withLockedValue {
                $0 += 1
                return $0
            }
        }
        return (operation, runs)
    }

    @Test func withoutKeepingTheNextCallerAfterAFlightStartsAgain() async throws {
        let flight = SingleFlight<Int>()
        let (operation, _) = Self.counting()
        #expect(try await flight.value(operation) == 1)
        #expect(try await flight.value(operation) == 2)
    }

    @Test func aKeptValueIsHandedOutUntilReset() async throws {
        let flight = SingleFlight<Int>(keepsValue: true)
        let (operation, _) = Self.counting()
        #expect(try await flight.value(operation) == 1)
        #expect(try await flight.value(operation) == 1)
        flight.reset()
        #expect(try await flight.value(operation) == 2)
    }

    @Test func aFailureIsNotKept() async throws {
        let flight = SingleFlight<Int>(keepsValue: true)
        let attempts = NIOLockedValueBox(0)
        let operation: @Sendable () async throws -> Int = {
            let attempt = attempts.withLockedValue {
                $0 += 1
                return $0
            }
            if attempt == 1 { throw Failed() }
            return attempt
        }
        await #expect(throws: Failed.self) { try await flight.value(operation) }
        #expect(try await flight.value(operation) == 2)
        #expect(try await flight.value(operation) == 2, "the success is kept")
    }

    @Test func callersThatSawTheSameGenerationShareOneReload() async throws {
        let flight = SingleFlight<Int>(keepsValue: true)
        let (operation, runs) = Self.counting()
        let (first, generation) = try await flight.valueAndGeneration(operation)
        #expect(first == 1)
        let reloaded = try await flight.reload(after: generation, operation)
        #expect(reloaded.value == 2)
        // A second caller that saw the old generation gets the reload that already happened.
        let again = try await flight.reload(after: generation, operation)
        #expect(again.value == 2)
        #expect(again.generation == reloaded.generation)
        #expect(runs.withLockedValue { $0 } == 2)
    }
}
