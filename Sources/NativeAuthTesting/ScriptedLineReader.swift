internal import NativeAuth
public import NativeAuthPresenters

/// A `LineReader` fed by the test, for `ManualPastePresenter` and `LoopbackAndPastePresenter`:
/// lines (or the end of the input) are queued with ``feed(_:)``, and a read waits until one
/// arrives. It counts reads that were cancelled while waiting, so tests can prove that a race
/// cancelled the paste side.
///
/// ```swift
/// let reader = ScriptedLineReader()
/// let presenter = ManualPastePresenter(configuration: .init(reader: reader, output: ConsoleOutput { _ in }))
/// reader.feed("http://127.0.0.1:8400/callback?code=…&state=…")   // what the person pastes
/// ```
public final class ScriptedLineReader: LineReader {
    private struct State {
        var queue: [String?] = []
        var waiter: CheckedContinuation<String?, any Error>?
        var cancellations = 0
        var reads = 0
    }

    private let state = Locked(State())

    /// Creates a reader with `lines` queued; `nil` is the end of the input.
    ///
    /// - Parameter lines: The lines to read first.
    public init(_ lines: [String?] = []) {
        state.withLock { $0.queue = lines }
    }

    /// Queues a line, or the end of the input (`nil`), waking a waiting read.
    ///
    /// - Parameter line: The line, without its line ending.
    public func feed(_ line: String?) {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(returning: line)
                if line == nil { state.queue.append(nil) }
            } else {
                state.queue.append(line)
            }
        }
    }

    /// How many reads were cancelled while waiting.
    public var cancellations: Int { state.withLock { $0.cancellations } }
    /// How many reads were made.
    public var reads: Int { state.withLock { $0.reads } }
    /// Whether a read is waiting now.
    public var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// The next queued line, waiting for one; `nil` at the end of the input.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    public func readLine() async throws -> String? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { state in
                    state.reads += 1
                    if let first = state.queue.first {
                        // The end of the input stays queued: every later read sees it too.
                        if first != nil { state.queue.removeFirst() }
                        continuation.resume(returning: first)
                    } else if Task.isCancelled {
                        state.cancellations += 1
                        continuation.resume(throwing: CancellationError())
                    } else {
                        state.waiter = continuation
                    }
                }
            }
        } onCancel: {
            state.withLock { state in
                guard let waiter = state.waiter else { return }
                state.waiter = nil
                state.cancellations += 1
                waiter.resume(throwing: CancellationError())
            }
        }
    }
}
