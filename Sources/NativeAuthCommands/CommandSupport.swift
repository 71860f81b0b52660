internal import ArgumentParser
public import Foundation
public import Logging
package import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shared plumbing of the commands: logging, running a command's body, printing results and
/// errors. A tool's own commands (a demo, an agent of one's own) run the way the standard ones do
/// with ``run(_:_:)``, ``cancellingOnSignals(_:)``, ``makeLogger(label:environment:)`` and
/// ``printLine(_:)``.
public enum CommandSupport {
    /// A logger that writes to stderr (stdout is the command's output) at the level named by
    /// `NATIVEAUTH_LOG_LEVEL` (`trace` … `critical`), `warning` by default. It does not bootstrap
    /// the logging system: an application's own logging stays as it set it up.
    public static func makeLogger(
        label: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel =
            environment["NATIVEAUTH_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .warning
        return logger
    }

    /// Runs `body`; an error becomes `error: <code>: <message>` and a hint line on stderr, and exit 1.
    public static func run<Tool: NativeAuthTool>(_ tool: Tool.Type, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as AuthError {
            report(error, tool: tool)
            throw ExitCode(1)
        } catch let error as ExitCode {
            throw error
        } catch is CancellationError {
            report(AuthError(.loginCancelled, "cancelled"), tool: tool)
            throw ExitCode(1)
        } catch {
            report(AuthError(.requestFailed, "unexpected failure (\(type(of: error)))"), tool: tool)
            throw ExitCode(1)
        }
    }

    /// Runs `body` in a task that Ctrl-C (SIGINT) and SIGTERM cancel, for commands that wait on the
    /// person: a waiting sign-in ends with `login_cancelled`, its listener and prompt are released,
    /// and the error line says so. A second signal exits at once.
    public static func cancellingOnSignals<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws
        -> T
    {
        let task = Task { try await body() }
        let signals = [SIGINT, SIGTERM]
        let received = Locked(0)
        let sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let count = received.withLock { count in
                    count += 1
                    return count
                }
                if count > 1 { exit(128 + number) }
                task.cancel()
            }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for number in signals { signal(number, SIG_DFL) }
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// The exit statuses, for every command's `--help`.
    public static let exitStatusHelp = """
        Exit status: 0 on success; 1 on an authentication, token-store or configuration error (one line \
        `error: <code>: <message>` on stderr, then a hint); 64 on a usage error.
        """

    /// The help of `token` and `api` about `NATIVEAUTH_ACCESS_TOKEN`, then ``exitStatusHelp``.
    static let overrideHelp = """
        With NATIVEAUTH_ACCESS_TOKEN set (a token a CI job already holds), that token is used as it is: \
        no store is read or written, nothing is refreshed, and a full URL needs no issuer.
        """ + "\n\n" + exitStatusHelp

    /// Whether standard error is a terminal that may show progress and colour (`NO_COLOR` and
    /// `TERM=dumb` turn both off).
    static var stderrIsInteractive: Bool {
        let environment = ProcessInfo.processInfo.environment
        return isatty(STDERR_FILENO) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    /// Runs `body`, showing `message` with the elapsed time on standard error while it waits, on a
    /// terminal only; the line is cleared afterwards.
    static func withProgress<T: Sendable>(
        _ message: String,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard stderrIsInteractive else { return try await body() }
        let ticker = Task {
            var seconds = 0
            while !Task.isCancelled {
                // The first seconds belong to the presenter's own lines (the URL, a prompt).
                if seconds >= 2 {
                    let clock = "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
                    FileHandle.standardError.write(Data("\r\u{1B}[2K\(message) \(clock)".utf8))
                }
                try? await Task.sleep(for: .seconds(1))
                seconds += 1
            }
        }
        defer {
            ticker.cancel()
            FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
        }
        return try await body()
    }

    /// `text` in an ANSI colour on a terminal, plain elsewhere; the text is the same either way.
    private static func label(_ text: String, colour: Int) -> String {
        stderrIsInteractive ? "\u{1B}[\(colour)m\(text)\u{1B}[0m" : text
    }

    package static func report<Tool: NativeAuthTool>(_ error: AuthError, tool: Tool.Type) {
        let label = label("error:", colour: 31)
        var lines = ["\(label) \(TerminalText.sanitized(error.description))"]
        if error.isLoginRequired {
            lines.append("hint: run `\(Tool.toolName) login`")
        } else if let hint = error.field.flatMap(Tool.hint(forField:)) ?? Tool.hint(for: error) {
            // An error about a configuration key says where this tool sets it.
            lines.append("hint: \(TerminalText.sanitized(hint))")
        }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// Prints a warning on standard error.
    package static func warn(_ text: String) {
        let label = label("warning:", colour: 33)
        FileHandle.standardError.write(Data("\(label) \(TerminalText.sanitized(text))\n".utf8))
    }

    /// Prints a notice on standard error: something the person should know that is not wrong.
    package static func notice(_ text: String) {
        let label = label("notice:", colour: 36)
        FileHandle.standardError.write(Data("\(label) \(TerminalText.sanitized(text))\n".utf8))
    }

    /// `body` as a terminal may be shown it: its lines kept, every other control character (an
    /// escape sequence that would set the clipboard or rewrite the screen) and bidirectional
    /// control made visible text; bytes that are not UTF-8 become U+FFFD.
    static func terminalSafe(_ body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r")
                ? TerminalText.sanitized(String(line.dropLast())) + "\r" : TerminalText.sanitized(String(line))
        }
        return Data(lines.joined(separator: "\n").utf8)
    }

    /// Prints one line on standard output, its control characters made visible (claims and names
    /// come from servers).
    public static func printLine(_ text: String) {
        FileHandle.standardOutput.write(Data((TerminalText.sanitized(text) + "\n").utf8))
    }
}

extension CommandSupport {
    /// Standard input to its end, refused past `limit` bytes (a protocol's request is short; a
    /// runaway writer must not fill memory).
    static func readStandardInput(limit: Int) throws(AuthError) -> Data {
        var data = Data()
        while true {
            let chunk = FileHandle.standardInput.availableData
            if chunk.isEmpty { return data }
            data.append(chunk)
            guard data.count <= limit else {
                throw AuthError(
                    .configurationInvalid,
                    "standard input holds more than \(limit / 1024) KiB; the request is a few lines",
                    hint: "this command is run by another program, which writes a short request")
            }
        }
    }
}
