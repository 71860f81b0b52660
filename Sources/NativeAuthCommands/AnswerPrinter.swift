internal import Foundation
internal import NativeAuth

/// Prints an API's answer on standard output as it arrives: byte for byte to a pipe or a file (and
/// with `--raw`); to a terminal a line at a time, its control characters shown as text, so that an
/// escape sequence split between two pieces is never half written.
final class AnswerPrinter: Sendable {
    private let showsControlCharacters: Bool
    /// The start of a line whose end has not come yet (terminal only).
    private let pending = Locked(Data())
    /// What arrived before the head was printed (`--include`); `nil` once it was, or without one.
    private let held: Locked<Data?>

    /// - Parameters:
    ///   - raw: Whether the answer goes out byte for byte also to a terminal.
    ///   - holdingUntilHead: Whether the body waits for ``release(head:)`` (`--include`).
    init(raw: Bool, holdingUntilHead: Bool = false) {
        showsControlCharacters = !raw && isatty(STDOUT_FILENO) == 1
        held = Locked(holdingUntilHead ? Data() : nil)
    }

    /// Prints `head` (the status line and headers), then what was held for it; nothing when the
    /// printer holds nothing.
    func release(head: Data) {
        guard
            let waiting = held.withLock({ held in
                defer { held = nil }
                return held
            })
        else { return }
        print(head)
        print(waiting)
    }

    /// Prints `piece`: at once elsewhere, up to its last line end on a terminal; held while the
    /// head has not been printed.
    func write(_ piece: Data) {
        let holding = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.append(piece)
            return true
        }
        if !holding { print(piece) }
    }

    private func print(_ piece: Data) {
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
