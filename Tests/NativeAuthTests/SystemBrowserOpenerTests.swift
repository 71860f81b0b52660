import Foundation
import NativeAuth
import TestSupport
import Testing

/// A `Process` that counts how many of its kind were freed.
final class CountedProcess: Process, @unchecked Sendable {
    static let freed = Shared(0)
    deinit { Self.freed.update { $0 += 1 } }
}

@Suite(.testLogging) struct SystemBrowserOpenerTests {
    private let url = URL(string: "https://idp.example/authorize?a=1&b=two%20words")

    @Test func browserCommandsGetTheURLAsArgumentOrInPlaceOfPercentS() throws {
        let url = try #require(url)
        let opener = SystemBrowserOpener(environment: ["BROWSER": "firefox --new-tab:'my browser' -x %s --y"])
        #expect(
            opener.commands(for: url) == [
                ["firefox", "--new-tab", url.absoluteString],
                ["my browser", "-x", url.absoluteString, "--y"],
            ]
        )
        #expect(SystemBrowserOpener(environment: [:]).commands(for: url) == [["xdg-open", url.absoluteString]])
        #expect(SystemBrowserOpener(environment: ["BROWSER": "  "]).commands(for: url).first?.first == "xdg-open")
    }

    @Test func runsTheCommandWithoutAShellAndTriesTheNextOnFailure() async throws {
        let url = try #require(url)
        let directory = try TemporaryDirectory()
        let record = directory.path + "/args"
        let script = directory.path + "/browser.sh"
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(record)'\necho 'noise on stdout'\n".write(
            toFile: script,
            atomically: true,
            encoding: .utf8
        )
        #expect(chmod(script, 0o755) == 0)
        let opener = SystemBrowserOpener(environment: [
            "BROWSER": "/bin/false:\(directory.path)/missing:\(script) --flag %s"
        ])
        try await opener.open(url)
        let arguments = try String(contentsOfFile: record, encoding: .utf8)
        #expect(arguments == "--flag\n\(url.absoluteString)\n")
    }

    /// A client secret in `NATIVEAUTH_CLIENT_SECRET` (or any other `NATIVEAUTH_` variable) is the
    /// program's, not the browser's: the browser starts without them.
    @Test func theBrowserStartsWithoutNativeAuthVariables() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.path + "/environment"
        // The program's environment with a planted secret; setenv would race the other tests.
        var environment = ProcessInfo.processInfo.environment
        environment["NATIVEAUTH_TEST_PLANTED_SECRET"] = "planted-secret-value-0123456789"
        let status = try await ChildProcess.launch(
            Process(), executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "env > '\(record)'"],
            environment: environment)
        #expect(status == 0)
        let written = try String(contentsOfFile: record, encoding: .utf8)
        #expect(!written.contains("planted-secret-value"))
        #expect(!written.contains("NATIVEAUTH_"))
        #expect(written.contains("PATH="), "the rest of the environment is kept")
    }

    /// A relative `$PATH` entry (`.`, `bin`, or an empty one) would run a command planted in the
    /// working directory, a cloned repository say: only absolute entries are searched.
    @Test func aRelativePathEntryIsNotSearched() throws {
        let directory = try TemporaryDirectory()
        let name = "nativeauth-test-browser"
        try "#!/bin/sh\n".write(toFile: directory.path + "/" + name, atomically: true, encoding: .utf8)
        #expect(chmod(directory.path + "/" + name, 0o755) == 0)
        let workingDirectory = FileManager.default.currentDirectoryPath
        let relative =
            String(repeating: "../", count: workingDirectory.split(separator: "/").count)
            + directory.path.dropFirst()
        #expect(FileManager.default.isExecutableFile(atPath: relative + "/" + name), "the relative entry reaches it")
        #expect(ChildProcess.executable(name, searchPath: relative) == nil)
        #expect(ChildProcess.executable(name, searchPath: "::" + relative) == nil)
        #expect(ChildProcess.executable(name, searchPath: directory.path)?.path == directory.path + "/" + name)
    }

    @Test func failsWhenNoCommandWorks() async throws {
        let url = try #require(url)
        let opener = SystemBrowserOpener(environment: ["BROWSER": "/bin/false:/nonexistent/browser"])
        let error = await #expect(throws: AuthError.self) { try await opener.open(url) }
        #expect(error?.message.contains("/bin/false exited with status 1") == true)
        #expect(error?.message.contains("/nonexistent/browser was not found") == true)
        #expect(error?.message.contains(url.absoluteString) == false)
    }

    /// Every browser process is freed once it has exited: on Linux a `Process` only watched through
    /// its `terminationHandler` never is, and an end-session URL in its arguments holds the ID token.
    @Test func aBrowserProcessIsFreedOnceItHasExited() async throws {
        let before = CountedProcess.freed.value
        var statuses: [Int32] = []
        for _ in 0..<20 {
            statuses.append(
                try await ChildProcess.launch(
                    CountedProcess(), executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exit 3"]))
        }
        #expect(statuses == Array(repeating: 3, count: 20))
        for _ in 0..<200 where CountedProcess.freed.value - before < 20 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(CountedProcess.freed.value - before == 20)
    }

    @Test func aBrowserThatCannotBeStartedIsAnErrorNotAHang() async throws {
        await #expect(throws: (any Error).self) {
            try await ChildProcess.launch(
                Process(), executable: URL(fileURLWithPath: "/nonexistent/browser"), arguments: [])
        }
    }
}
