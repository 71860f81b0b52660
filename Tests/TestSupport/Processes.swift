public import Foundation
import NIOConcurrencyHelpers
import NativeAuth
import NativeAuthTesting

#if canImport(Glibc)
    import Glibc
#endif

// Processes and files for tests: running the sample CLIs, reading their pipes without holding
// Swift's cooperative pool, temporary directories.

/// Runs blocking work (reading a pipe to its end) on a thread of its own. Neither Swift's
/// cooperative pool (two threads on a 2-core machine) nor libdispatch's global queues (which back
/// that pool on Linux and add threads only slowly when they block) may be held by it.
public func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.start()
    }
}

/// The exit status of `process`, without blocking a thread; call before `run()`.
public func exitStatus(of process: Process) -> Task<Int32, Never> {
    let (stream, sink) = AsyncStream.makeStream(of: Int32.self)
    process.terminationHandler = { finished in
        sink.yield(finished.terminationStatus)
        sink.finish()
    }
    return Task {
        for await status in stream { return status }
        return -1
    }
}

/// The result of running a command.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// The built CLI `name` (`oidc-login`): in `NATIVEAUTH_CLI_DIR` when it is there, else next to the
/// test bundle. Point `NATIVEAUTH_CLI_DIR` at release-built CLIs (`swift build -c release
/// --show-bin-path`) to run the process tests without argument-parser's debug-build checks
/// (CONTRIBUTING.md, "The CLI tests and argument-parser's debug checks").
public func cliPath(_ name: String) -> String {
    if let directory = ProcessInfo.processInfo.environment["NATIVEAUTH_CLI_DIR"],
        FileManager.default.isExecutableFile(atPath: directory + "/" + name)
    {
        return directory + "/" + name
    }
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = runner.deletingLastPathComponent()
    // On Linux the runner is …/debug/NativeAuthPackageTests.xctest; on macOS it is inside the bundle.
    while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
        directory.path != "/"
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name).path
}

/// Runs a command with exactly `environment` (plus PATH, HOME and the sanitizers' settings), and
/// `input` on its standard input (none by default).
public func run(
    _ executable: String,
    _ arguments: [String],
    input: String? = nil,
    environment: [String: String] = [:],
    in directory: String? = nil
) async throws -> CommandResult {
    let command = try RunningCommand(executable, arguments, environment: environment, in: directory)
    if let input { command.type(input) }
    return await command.finish(closeInput: true)
}

/// A value shared between threads.
public final class Shared<Value: Sendable>: Sendable {
    private let storage: NIOLockedValueBox<Value>
    public init(_ value: Value) { storage = NIOLockedValueBox(value) }
    public var value: Value { storage.withLockedValue { $0 } }
    public func update(_ body: (inout Value) -> Void) { storage.withLockedValue { body(&$0) } }
}

/// A command running with pipes on all three streams: the test reads its stderr as it comes and
/// types into its stdin, like a person at a terminal.
public final class RunningCommand: Sendable {
    private let input: Pipe
    private let status = Shared<Int32?>(nil)
    private let exited: Task<Int32, Never>
    private let stdout: Task<Data, Never>
    private let stderrDone: Task<Void, Never>
    private let errorText = Shared("")
    private let pid: Int32
    private let record: CommandOutputRecord?

    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        in directory: String? = nil
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.arguments = arguments
        var base = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        // A sanitizer's settings apply to the whole run, the commands it starts included, and so do
        // the log level and the redaction check's files (scripts/test.sh); a test's own wins.
        for (name, value) in ProcessInfo.processInfo.environment
        where ["ASAN_", "TSAN_", "LSAN_", "UBSAN_"].contains(where: name.hasPrefix)
            || [
                "NATIVEAUTH_LOG_LEVEL", IssuedSecrets.environmentVariable, CommandOutputRecord.environmentVariable,
            ].contains(name)
        {
            base[name] = value
        }
        // The test browsers record their argv and environment beside the commands' output, for the
        // redaction check (the commands start them without NATIVEAUTH_ variables).
        if let outputs = ProcessInfo.processInfo.environment[CommandOutputRecord.environmentVariable] {
            base["BROWSER_RECORD_DIR"] = outputs
        }
        base.merge(environment) { $1 }
        // The commands give a browser only an allow-listed environment (ChildEnvironment.standard),
        // so the test browsers' own settings (BROWSER_RECORD_DIR, BROWSER_CA_FILE, …) ride in the
        // browser's command line instead, as `env NAME=VALUE` before it.
        let browserSettings = base.filter { $0.key.hasPrefix("BROWSER_") }.sorted { $0.key < $1.key }
        if let browser = base["BROWSER"], !browserSettings.isEmpty {
            base["BROWSER"] =
                (["/usr/bin/env"] + browserSettings.map { "'\($0.key)=\($0.value)'" }).joined(separator: " ") + " "
                + browser
        }
        process.environment = base
        record = CommandOutputRecord(arguments: [URL(fileURLWithPath: executable).lastPathComponent] + arguments)
        // A secret a test hands to a command is one the output must not show either.
        IssuedSecrets.record(
            zip(arguments, arguments.dropFirst()).filter { $0.0 == "--client-secret" }.map(\.1)
                + [environment["NATIVEAUTH_CLIENT_SECRET"], environment["NATIVEAUTH_ACCESS_TOKEN"]].compactMap { $0 })
        input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let (stream, sink) = AsyncStream.makeStream(of: Int32.self)
        let status = status
        process.terminationHandler = { finished in
            status.update { $0 = finished.terminationStatus }
            sink.yield(finished.terminationStatus)
            sink.finish()
        }
        exited = Task {
            for await code in stream { return code }
            return -1
        }
        try process.run()
        pid = process.processIdentifier
        stdout = Task { await offCooperativePool { output.fileHandleForReading.readDataToEndOfFile() } }
        let text = errorText
        stderrDone = Task {
            await offCooperativePool {
                let handle = errors.fileHandleForReading
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    text.update { $0 += String(decoding: chunk, as: UTF8.self) }
                }
            }
        }
    }

    /// What the command wrote on stderr so far.
    public var stderr: String { errorText.value }

    /// The first complete stderr line that satisfies `predicate`, waiting up to 60 seconds.
    public func line(where predicate: (String) -> Bool) async throws -> String {
        for _ in 0..<6000 {
            let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            if let line = lines.first(where: predicate) { return line }
            if status.value != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw AuthError(.timeout, "no such line on stderr; it says: \(stderr)")
    }

    /// A command still running when the test ends (a failed expectation) is killed.
    deinit {
        if status.value == nil { kill(pid, SIGKILL) }
    }

    /// Sends Ctrl-C.
    public func interrupt() {
        kill(pid, SIGINT)
    }

    /// Asks the command to stop (SIGTERM), as a service manager does.
    public func terminate() {
        kill(pid, SIGTERM)
    }

    /// Kills the command (SIGKILL): a child of the test runner may start with SIGTERM and SIGINT
    /// blocked, inherited from the thread that started it.
    public func stop() {
        kill(pid, SIGKILL)
    }

    /// Types `text` on the command's stdin.
    public func type(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Waits for the command to exit (stdin stays open unless `closeInput`).
    public func finish(closeInput: Bool = false) async -> CommandResult {
        if closeInput { try? input.fileHandleForWriting.close() }
        let status = await exited.value
        let out = await stdout.value
        await stderrDone.value
        try? input.fileHandleForWriting.close()
        let result = CommandResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: stderr)
        record?.write(result)
        return result
    }
}

/// With `NATIVEAUTH_TEST_OUTPUT_DIR` set, every command a test runs leaves its executable's name and
/// its arguments (one per line), stdout and stderr there (`<id>.args`, `.stdout`, `.stderr`), for
/// scripts/test.sh's redaction check.
struct CommandOutputRecord: Sendable {
    static let environmentVariable = "NATIVEAUTH_TEST_OUTPUT_DIR"
    let base: URL
    let arguments: [String]

    init?(arguments: [String]) {
        guard let directory = ProcessInfo.processInfo.environment[Self.environmentVariable], !directory.isEmpty
        else { return nil }
        base = URL(fileURLWithPath: directory).appendingPathComponent(UUID().uuidString)
        self.arguments = arguments
    }

    func write(_ result: CommandResult) {
        for (suffix, text) in [
            ("args", arguments.joined(separator: "\n")), ("stdout", result.stdout), ("stderr", result.stderr),
        ] {
            try? Data(text.utf8).write(to: base.appendingPathExtension(suffix))
        }
    }
}

/// A temporary directory removed when released.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nativeauth-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A `$BROWSER` that fetches the URL and follows redirects (a stand-in's authorize page that
/// approves at once, back to the loopback receiver; a logout page), posting the one-time start
/// page of an end-session URL; it records its argv and environment (`scripts/lib/following_browser.py`).
public let redirectFollowingBrowser = "/usr/bin/python3 '\(repositoryRoot.path)/scripts/lib/following_browser.py' %s"

/// The repository's root directory.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Whether the stress tests run (`NATIVEAUTH_STRESS_TESTS=1`): thousands of connections and
/// processes, which would disturb tests running beside them (a port another test just closed can
/// be taken by one of their outgoing connections). `scripts/test.sh` runs them on their own.
public let stressTestsEnabled = ProcessInfo.processInfo.environment["NATIVEAUTH_STRESS_TESTS"] == "1"

/// Leaves `text` (what a test recorded besides command output: spans and metrics) in
/// `NATIVEAUTH_TEST_OUTPUT_DIR` as `<name>-<id>.stdout`, for scripts/test.sh's redaction check.
public func recordForRedactionCheck(_ text: String, name: String) {
    guard let directory = ProcessInfo.processInfo.environment[CommandOutputRecord.environmentVariable],
        !directory.isEmpty
    else { return }
    let file = URL(fileURLWithPath: directory).appendingPathComponent("\(name)-\(UUID().uuidString).stdout")
    try? Data(text.utf8).write(to: file)
}
