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

    /// The browser a program opens gets only what a browser needs from its environment: a client
    /// secret in `NATIVEAUTH_CLIENT_SECRET`, a database URL with its password, a sealing key
    /// (`fleet-worker login`'s browser saw `FLEET_DATABASE_URL` and `FLEET_SEALING_KEY`: review L6)
    /// stay the program's.
    @Test func theBrowserStartsWithAnAllowedEnvironmentOnly() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.path + "/environment"
        let browser = directory.path + "/record-browser"
        try "#!/bin/sh\nenv > '\(record)'\n".write(toFile: browser, atomically: true, encoding: .utf8)
        #expect(chmod(browser, 0o755) == 0)
        // The program's environment with planted secrets; setenv would race the other tests.
        var environment = ProcessInfo.processInfo.environment
        environment["NATIVEAUTH_TEST_PLANTED_SECRET"] = "planted-secret-value-0123456789"
        environment["FLEET_DATABASE_URL"] = "postgres://fleet:planted-password@db.example/fleet"
        environment["FLEET_SEALING_KEY"] = "planted-sealing-key"
        environment["DISPLAY"] = ":7"
        environment["XDG_RUNTIME_DIR"] = "/run/user/4242"
        environment["LC_ALL"] = "C.UTF-8"
        environment["https_proxy"] = "http://proxy.example:3128"
        environment["BROWSER"] = browser
        try await SystemBrowserOpener(environment: environment).open(#require(URL(string: "https://example.test/")))
        let written = try String(contentsOfFile: record, encoding: .utf8)
        for planted in ["planted-secret-value", "NATIVEAUTH_", "planted-password", "FLEET_", "planted-sealing-key"] {
            #expect(!written.contains(planted), "\(planted) reached the browser")
        }
        for kept in ["PATH=", "DISPLAY=:7", "XDG_RUNTIME_DIR=/run/user/4242", "LC_ALL=C.UTF-8", "https_proxy="] {
            #expect(written.contains(kept), "\(kept) is what a browser needs")
        }

        // An app that knows its browser needs more names it; NATIVEAUTH_ stays out even when named.
        let more = SystemBrowserOpener(
            environment: environment, childEnvironment: .standard.adding(["FLEET_DATABASE_URL", "NATIVEAUTH_*"]))
        try await more.open(#require(URL(string: "https://example.test/")))
        let again = try String(contentsOfFile: record, encoding: .utf8)
        #expect(again.contains("FLEET_DATABASE_URL=") && !again.contains("FLEET_SEALING_KEY"))
        #expect(!again.contains("NATIVEAUTH_"))
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
