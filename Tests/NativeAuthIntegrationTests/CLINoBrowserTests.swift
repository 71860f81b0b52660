import Foundation
import NativeAuth
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A value shared between threads.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}

/// A command running with pipes on all three streams: the test reads its stderr as it comes and
/// types into its stdin, like a person at a terminal.
final class RunningCommand: Sendable {
    private let input: Pipe
    private let status = Shared<Int32?>(nil)
    private let exited: Task<Int32, Never>
    private let stdout: Task<Data, Never>
    private let stderrDone: Task<Void, Never>
    private let errorText = Shared("")
    private let pid: Int32

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var base = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        base.merge(environment) { $1 }
        process.environment = base
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
    var stderr: String { errorText.value }

    /// The first complete stderr line that satisfies `predicate`, waiting up to 60 seconds.
    func line(where predicate: (String) -> Bool) async throws -> String {
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
    func interrupt() {
        kill(pid, SIGINT)
    }

    /// Types `text` on the command's stdin.
    func type(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Waits for the command to exit (stdin stays open unless `closeInput`).
    func finish(closeInput: Bool = false) async -> CommandResult {
        if closeInput { try? input.fileHandleForWriting.close() }
        let status = await exited.value
        let out = await stdout.value
        await stderrDone.value
        try? input.fileHandleForWriting.close()
        return CommandResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: stderr)
    }
}

@Suite(.enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct CLINoBrowserTests {
    let server: TestServer
    let cli = cliPath("oidc-login")

    init() throws { server = try TestServer.load() }

    private func arguments(_ extra: [String], store: String, clientID: String? = nil) -> [String] {
        [
            "login", "--issuer", server.issuer.absoluteString, "--client-id", clientID ?? server.publicClientID,
            "--store", store, "--timeout", "60",
        ] + extra
    }

    /// The authorization URL the command printed on a line of its own.
    private func authorizationURL(_ command: RunningCommand) async throws -> URL {
        let line = try await command.line { $0.hasPrefix(server.issuer.absoluteString + "/authorize") }
        return try #require(URL(string: line))
    }

    private func expectSignedIn(_ result: CommandResult, store: String, clientID: String? = nil) throws {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Signed in as "))
        let tokens = try FileTokenStore(directory: store).load(
            TokenKey(issuer: server.issuer.absoluteString, clientID: clientID ?? server.publicClientID))
        let saved = try #require(tokens)
        #expect(!result.stderr.contains(saved.accessToken))
        #expect(saved.refreshToken.map { !result.stderr.contains($0) && !result.stdout.contains($0) } == true)
    }

    @Test func pasteReadsTheRedirectFromStdin() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--paste"], store: store))
        let callback = try await scriptedCallback(for: try await authorizationURL(command))
        command.type("not the address\n")
        command.type("\"\(callback.absoluteString)\"\n")
        let result = await command.finish()
        try expectSignedIn(result, store: store)
        #expect(result.stderr.contains("That did not work"))
        #expect(!result.stderr.contains(callback.absoluteString), "the pasted code is not echoed")
    }

    @Test func pasteEndsWithLoginCancelledAtTheEndOfInput() async throws {
        let directory = try TemporaryDirectory()
        let command = try RunningCommand(cli, arguments(["--paste"], store: directory.path + "/store"))
        _ = try await authorizationURL(command)
        let result = await command.finish(closeInput: true)
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: login_cancelled: "))
    }

    @Test func noBrowserTakesAPaste() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--no-browser"], store: store))
        let url = try await authorizationURL(command)
        _ = try await command.line { $0.contains("ssh -L ") }
        let callback = try await scriptedCallback(for: url)
        command.type(callback.absoluteString + "\n")
        try expectSignedIn(await command.finish(), store: store)
    }

    @Test func noBrowserTakesTheForwardedRedirectWhileStdinStaysOpen() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--no-browser"], store: store))
        try await TestServer.scriptedBrowser().open(try await authorizationURL(command))
        // Nothing is typed and stdin stays open: the command must still finish.
        try expectSignedIn(await command.finish(), store: store)
    }

    @Test func deviceSignsInWithTheCodeAndOpenLines() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(
            cli,
            arguments(
                ["--device", "--device-endpoint", server.deviceAuthorizationEndpoint.absoluteString], store: store,
                clientID: server.deviceClientID)
        )
        let code = try await command.line { $0.hasPrefix("Code: ") }.dropFirst("Code: ".count)
        let open = try #require(URL(string: String(try await command.line { $0.hasPrefix("Open: ") }.dropFirst(6))))
        #expect(open.absoluteString == server.issuer.absoluteString + "/device/")
        try await scriptedDeviceApproval(open, userCode: String(code))
        try expectSignedIn(await command.finish(), store: store, clientID: server.deviceClientID)
    }

    @Test func deviceWithoutAnEndpointSaysHowToSetOne() async throws {
        let directory = try TemporaryDirectory()
        let result = try await run(
            cli, arguments(["--device"], store: directory.path + "/store", clientID: server.deviceClientID))
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: configuration_invalid: the provider's metadata names no device"))
        #expect(result.stderr.contains("hint: set it with --device-endpoint"))
    }

    @Test(arguments: [["--paste"], ["--no-browser"], ["--device"], []])
    func ctrlCEndsAWaitingLoginWithLoginCancelled(way: [String]) async throws {
        let directory = try TemporaryDirectory()
        let device = way == ["--device"]
        let extra = device ? way + ["--device-endpoint", server.deviceAuthorizationEndpoint.absoluteString] : way
        // Without a flag the "browser" only leaves a mark that it was opened: the sign-in waits.
        let opened = directory.path + "/opened"
        let clientID = device ? server.deviceClientID : server.publicClientID
        let command = try RunningCommand(
            cli,
            arguments(extra, store: directory.path + "/store", clientID: clientID),
            environment: ["BROWSER": "/bin/sh -c 'touch \(opened)' %s"]
        )
        if device {
            _ = try await command.line { $0.hasPrefix("Code: ") }
        } else if way.isEmpty {
            while !FileManager.default.fileExists(atPath: opened) { try await Task.sleep(for: .milliseconds(10)) }
        } else {
            _ = try await authorizationURL(command)
        }
        command.interrupt()
        let result = await command.finish()
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: login_cancelled: sign-in was cancelled"), "\(result.stderr)")
        let key = TokenKey(issuer: server.issuer.absoluteString, clientID: clientID)
        #expect(try FileTokenStore(directory: directory.path + "/store").load(key) == nil)
    }

    @Test func theWaysInExcludeEachOther() async throws {
        let result = try await run(cli, ["login", "--paste", "--device", "--client-id", "c"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("choose one of --no-browser, --paste and --device"))
    }
}
