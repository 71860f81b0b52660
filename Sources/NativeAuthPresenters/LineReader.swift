internal import Foundation
internal import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads what the person types or pastes, one line at a time (for ``ManualPastePresenter`` and
/// ``LoopbackAndPastePresenter``).
///
/// ### Implementation requirements
/// - Return the line without its line ending, or `nil` at the end of the input.
/// - When the task is cancelled while waiting, stop waiting promptly and throw
///   `CancellationError`: the loopback-and-paste race cancels the reader when the browser wins.
public protocol LineReader: Sendable {
    /// Reads the next line; `nil` at the end of the input.
    func readLine() async throws -> String?
}

/// Reads lines from a file descriptor, standard input by default.
///
/// Each call waits on a thread of its own (never on Swift's cooperative pool) with `poll(2)`, so a
/// cancelled read ends at once instead of holding the terminal until the next line. The reader
/// takes one byte at a time and never reads past the end of the line, so whatever follows stays
/// in the descriptor for the program. A line longer than ``maximumLength`` bytes is cut there (the
/// rest of it is skipped).
public struct StandardInputLineReader: LineReader {
    /// The descriptor to read from.
    public let fileDescriptor: Int32
    /// The longest line kept, in bytes.
    public let maximumLength: Int

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - fileDescriptor: The descriptor to read from; default: standard input.
    ///   - maximumLength: The longest line kept, in bytes; default 64 KiB.
    public init(fileDescriptor: Int32 = 0, maximumLength: Int = 65_536) {
        self.fileDescriptor = fileDescriptor
        self.maximumLength = maximumLength
    }

    public func readLine() async throws -> String? {
        try Task.checkCancellation()
        let wake = try WakePipe()
        let descriptor = fileDescriptor
        let limit = maximumLength
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LineOutcome, Never>) in
                let thread = Thread {
                    let outcome = Self.blockingReadLine(descriptor, wake: wake.readEnd, limit: limit)
                    wake.close()
                    continuation.resume(returning: outcome)
                }
                thread.start()
            }
        } onCancel: {
            wake.signal()
        }
        switch outcome {
        case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .end: return nil
        case .cancelled: throw CancellationError()
        case .failed(let code):
            throw AuthError(
                .loginCancelled,
                "cannot read the input (\(String(cString: strerror(code))))",
                operation: .authorization
            )
        }
    }

    enum LineOutcome: Sendable {
        case line([UInt8])
        case end
        case cancelled
        case failed(Int32)
    }

    static func blockingReadLine(_ descriptor: Int32, wake: Int32, limit: Int) -> LineOutcome {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var fds = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if fds[1].revents != 0 { return .cancelled }
            guard fds[0].revents != 0 else { continue }
            let count = read(descriptor, &byte, 1)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failed(errno)
            }
            if count == 0 { return line.isEmpty ? .end : .line(line) }
            if byte == UInt8(ascii: "\n") { return .line(line) }
            if line.count < limit { line.append(byte) }
        }
    }
}

/// A pipe that wakes a blocked `poll`; closed once, by the reading thread, after which signalling
/// does nothing (the descriptors may already belong to someone else).
private final class WakePipe: Sendable {
    private let descriptors: Locked<(read: Int32, write: Int32)?>
    let readEnd: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw AuthError(.loginCancelled, "cannot create a pipe (\(String(cString: strerror(errno))))")
        }
        descriptors = Locked((ends[0], ends[1]))
        readEnd = ends[0]
    }

    func signal() {
        descriptors.withLock { ends in
            guard let ends else { return }
            var byte: UInt8 = 1
            _ = write(ends.write, &byte, 1)
        }
    }

    func close() {
        descriptors.withLock { ends in
            guard let open = ends else { return }
            #if canImport(Glibc)
                _ = Glibc.close(open.read)
                _ = Glibc.close(open.write)
            #else
                _ = Darwin.close(open.read)
                _ = Darwin.close(open.write)
            #endif
            ends = nil
        }
    }
}
