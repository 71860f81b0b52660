internal import Foundation
internal import NativeAuth
internal import Synchronization

/// Prints an API's answer on standard output as it arrives: byte for byte to a pipe or a file (and
/// with `--raw`); to a terminal a line at a time, its control characters shown as text, so that an
/// escape sequence split between two pieces is never half written.
final class AnswerPrinter: Sendable {
    private let showsControlCharacters: Bool
    /// The start of a line whose end has not come yet (terminal only).
    private let pending = Mutex(Data())

    /// - Parameter raw: Whether the answer goes out byte for byte also to a terminal.
    init(raw: Bool) {
        showsControlCharacters = !raw && isatty(STDOUT_FILENO) == 1
    }

    /// Prints `piece`: at once elsewhere, up to its last line end on a terminal.
    func write(_ piece: Data) {
        guard showsControlCharacters else {
            FileHandle.standardOutput.write(piece)
            return
        }
        let lines: Data? = pending.withLock { pending in
            pending.append(piece)
            guard let end = pending.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
            let complete = pending[..<pending.index(after: end)]
            pending = Data(pending[pending.index(after: end)...])
            return Data(complete)
        }
        if let lines { FileHandle.standardOutput.write(CommandSupport.terminalSafe(lines)) }
    }

    /// Prints what is left of the last line.
    func finish() {
        let rest = pending.withLock { pending in
            defer { pending = Data() }
            return pending
        }
        if !rest.isEmpty { FileHandle.standardOutput.write(CommandSupport.terminalSafe(rest)) }
    }
}
