import Foundation
import NativeAuth
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe whose read end a `StandardInputLineReader` reads, as it would read standard input.
private final class InputPipe: Sendable {
    let pipe = Pipe()
    var reader: StandardInputLineReader { reader(maximumLength: 65_536) }
    func reader(maximumLength: Int) -> StandardInputLineReader {
        StandardInputLineReader(fileDescriptor: pipe.fileHandleForReading.fileDescriptor, maximumLength: maximumLength)
    }
    func write(_ text: String) { pipe.fileHandleForWriting.write(Data(text.utf8)) }
    func end() { try? pipe.fileHandleForWriting.close() }
}

@Suite(.testLogging) struct StandardInputLineReaderTests {
    @Test func readsOneLineAtATimeAndLeavesTheRest() async throws {
        let input = InputPipe()
        input.write("first line\r\nsecond\n")
        #expect(try await input.reader.readLine() == "first line\r")
        #expect(try await input.reader.readLine() == "second")
        input.write("tail without newline")
        input.end()
        #expect(try await input.reader.readLine() == "tail without newline")
        #expect(try await input.reader.readLine() == nil)
    }

    @Test func aCancelledReadStopsWaitingAndConsumesNothing() async throws {
        let input = InputPipe()
        let reader = input.reader
        let waiting = Task { try await reader.readLine() }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        input.write("after\n")
        #expect(try await reader.readLine() == "after")
    }

    @Test func anAlreadyCancelledTaskDoesNotRead() async throws {
        let input = InputPipe()
        input.write("kept\n")
        let reader = input.reader
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await reader.readLine()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await reader.readLine() == "kept")
    }

    @Test func aLongLineIsCutAtTheLimit() async throws {
        let input = InputPipe()
        input.write(String(repeating: "a", count: 100) + "\nnext\n")
        let reader = input.reader(maximumLength: 10)
        #expect(try await reader.readLine() == String(repeating: "a", count: 10))
        #expect(try await reader.readLine() == "next")
    }
}
