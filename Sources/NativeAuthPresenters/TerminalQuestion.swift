internal import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A question to the person at a terminal, answered on one line, within a deadline: the one way
/// NativeAuth's terminal programs ask (a step-up's consent, a server to trust, an agent's
/// confirmation, a paste).
///
/// ```swift
/// if try await TerminalQuestion("Sign in again in the browser?").isYesOnStandardInput() { … }
/// ```
///
/// The answer is read with a ``LineReader`` (one line, never past its end); when the deadline
/// passes first, the read is cancelled, so a line typed later is not taken for this question's
/// answer.
public struct TerminalQuestion: Sendable {
    /// What is asked; written before the answer is read, without a line break (empty: nothing).
    public let prompt: String
    /// How long the answer is waited for; `nil` for as long as it takes.
    public let timeout: Duration?

    /// A question.
    ///
    /// - Parameters:
    ///   - prompt: What is asked.
    ///   - timeout: How long the answer is waited for; default: two minutes.
    public init(_ prompt: String, timeout: Duration? = .seconds(120)) {
        self.prompt = prompt
        self.timeout = timeout
    }

    /// The line typed, without its line ending; `nil` at the end of the input, or when the deadline
    /// passed first.
    ///
    /// - Parameters:
    ///   - reader: Where the answer is read.
    ///   - write: Where the prompt is written.
    public func answer(from reader: any LineReader, writing write: @Sendable (String) -> Void) async throws -> String? {
        if !prompt.isEmpty { write(prompt) }
        guard let timeout else { return try await reader.readLine() }
        return try await withThrowingTaskGroup(of: Answer.self) { group in
            group.addTask { .line(try await reader.readLine()) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return .late
            }
            defer { group.cancelAll() }
            guard case .line(let line) = try await group.next() else { return nil }
            return line
        }
    }

    /// Whether the answer is `y` or `yes` (`[y/N]` follows the prompt); anything else, the end of
    /// the input or no answer in time is no.
    public func isYes(from reader: any LineReader, writing write: @Sendable (String) -> Void) async throws -> Bool {
        let asked = TerminalQuestion(prompt + " [y/N] ", timeout: timeout)
        let line = try await asked.answer(from: reader, writing: write)
        return ["y", "yes"].contains(line?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
    }

    /// ``isYes(from:writing:)`` asked on standard error and read from standard input.
    public func isYesOnStandardInput() async throws -> Bool {
        try await isYes(from: StandardInputLineReader()) { FileHandle.standardError.write(Data($0.utf8)) }
    }

    /// ``isYes(from:writing:)`` on the controlling terminal (`/dev/tty`), whatever standard input
    /// and output are (a program that serves others, such as a token agent); no terminal is no.
    public func isYesOnControllingTerminal() async -> Bool {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard descriptor >= 0 else { return false }
        defer { _ = close(descriptor) }
        let reader = StandardInputLineReader(fileDescriptor: descriptor, maximumLength: 64)
        let answer = try? await isYes(from: reader) { text in
            _ = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        }
        return answer ?? false
    }

    private enum Answer: Sendable {
        case line(String?)
        case late
    }
}
