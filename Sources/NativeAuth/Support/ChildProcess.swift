package import Foundation
internal import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The programs NativeAuth starts (a browser, a workload's subject-token command, git): found on
/// `PATH` as a shell finds them, given an environment without NativeAuth's own variables, and
/// waited for on a thread of their own.
package enum ChildProcess {
    /// The executable for `name`: a path as it is, a bare name looked up in the absolute entries of
    /// `searchPath` (`$PATH` by default), as Go's `exec.LookPath` does.
    package static func executable(
        _ name: String,
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    ) -> URL? {
        if name.contains("/") {
            return FileManager.default.isExecutableFile(atPath: name) ? URL(fileURLWithPath: name) : nil
        }
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: true)
        where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        }
        return nil
    }

    /// Runs `process` to its end and returns its exit status, without holding a thread of Swift's
    /// pool. It waits with `waitUntilExit()` on a thread of its own: on Linux, a `Process` that is
    /// only watched through `terminationHandler` is never freed (nor the URL in its arguments,
    /// which for an end-session URL holds the ID token). The child gets `environment` without its
    /// `NATIVEAUTH_` variables.
    package static func launch(
        _ process: Process,
        executable: URL,
        arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> Int32 {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.environment = childEnvironment(environment)
        return try await runToEnd(process) { () }.status
    }

    /// Starts `process` and waits for its end on a thread of its own (see
    /// ``launch(_:executable:arguments:environment:)`` for why), calling `collect` in between (to
    /// read its pipes to their end); returns its exit status and what `collect` returned.
    package static func runToEnd<T: Sendable>(
        _ process: Process,
        collect: @escaping @Sendable () -> T
    ) async throws -> (status: Int32, collected: T) {
        let result = try await runToEnd(process, timeout: nil, collect: collect)
        return (result.status, result.collected)
    }

    /// ``runToEnd(_:collect:)``, stopping the process when it runs longer than `timeout`: `SIGTERM`,
    /// then `SIGKILL` two seconds later. `timedOut` says whether it was stopped so.
    package static func runToEnd<T: Sendable>(
        _ process: Process,
        timeout: Duration?,
        collect: @escaping @Sendable () -> T
    ) async throws -> (status: Int32, collected: T, timedOut: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    try process.run()
                    let pid = process.processIdentifier
                    let stopped = ProcessWatchdog(pid: pid)
                    if let timeout { stopped.arm(after: timeout) }
                    let collected = collect()
                    process.waitUntilExit()
                    let timedOut = stopped.disarm()
                    continuation.resume(returning: (process.terminationStatus, collected, timedOut))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    /// The environment a child starts with: the program's, without its `NATIVEAUTH_` variables.
    package static func childEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("NATIVEAUTH_") }
    }

    /// Splits a command line into words like a POSIX shell: whitespace separates words, single
    /// quotes keep everything, double quotes keep everything but `\"` and `\\`, a backslash outside
    /// quotes escapes the next character.
    package static func split(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"):
                escaped = true
                inWord = true
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case (nil, " "), (nil, "\t"):
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

/// Stops a child that runs too long: `SIGTERM` at the deadline, `SIGKILL` two seconds later;
/// never after ``disarm()`` (so that a reused pid is never signalled).
private final class ProcessWatchdog: Sendable {
    private let pid: Int32
    /// Whether it is armed, and whether it fired.
    private let state = NIOLockedValueBox((armed: false, fired: false))

    init(pid: Int32) { self.pid = pid }

    func arm(after timeout: Duration) {
        state.withLockedValue { $0.armed = true }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            signal(SIGTERM, firing: true)
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [self] in signal(SIGKILL, firing: false) }
        }
    }

    private func signal(_ number: Int32, firing: Bool) {
        state.withLockedValue { state in
            guard state.armed else { return }
            if firing { state.fired = true }
            kill(pid, number)
        }
    }

    /// Stops it; whether it fired.
    func disarm() -> Bool {
        state.withLockedValue { state in
            state.armed = false
            return state.fired
        }
    }
}
