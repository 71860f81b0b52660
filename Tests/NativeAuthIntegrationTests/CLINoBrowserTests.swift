import Foundation
import HTTPTypes
import NativeAuth
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The CLI's ways in without a local browser (paste, loopback + paste, device, Ctrl-C), against
/// the in-process sandbox: the CLI is the point, not the server. The device flow against the real
/// server is in NoBrowserTests.
@Suite(.testLogging, .serialized) struct CLINoBrowserTests {
    let cli = cliPath("oidc-login")
    let clientID = SandboxAuthorizationServer.Client.defaultID

    private func arguments(_ extra: [String], store: String, _ sandbox: SandboxAuthorizationServer) -> [String] {
        [
            "login", "--issuer", sandbox.issuer.absoluteString, "--client-id", clientID, "--store", store,
            "--timeout", "60",
        ] + extra
    }

    /// The authorization URL the command printed on a line of its own.
    private func authorizationURL(_ command: RunningCommand, _ sandbox: SandboxAuthorizationServer) async throws -> URL
    {
        let line = try await command.line { $0.hasPrefix(sandbox.issuer.absoluteString + "/authorize") }
        return try #require(URL(string: line))
    }

    private func expectSignedIn(_ result: CommandResult, store: String, _ sandbox: SandboxAuthorizationServer) throws {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Signed in as "))
        // Without the profile and email scopes, the subject names the account.
        let tokens = try FileTokenStore(directory: store).load(
            TokenKey(issuer: sandbox.issuer.absoluteString, clientID: clientID, account: "sandbox-user-alice"))
        let saved = try #require(tokens)
        #expect(!result.stderr.contains(saved.accessToken))
        #expect(saved.refreshToken.map { !result.stderr.contains($0) && !result.stdout.contains($0) } == true)
    }

    @Test func pasteReadsTheRedirectFromStdin() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--paste"], store: store, sandbox))
        let callback = try await sandboxCallback(for: try await authorizationURL(command, sandbox))
        command.type("not the address\n")
        command.type("\"\(callback.absoluteString)\"\n")
        let result = await command.finish()
        try expectSignedIn(result, store: store, sandbox)
        #expect(result.stderr.contains("That did not work"))
        #expect(!result.stderr.contains(callback.absoluteString), "the pasted code is not echoed")
        await sandbox.stop()
    }

    @Test func pasteEndsWithLoginCancelledAtTheEndOfInput() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(mode: .live)
        let directory = try TemporaryDirectory()
        let command = try RunningCommand(cli, arguments(["--paste"], store: directory.path + "/store", sandbox))
        _ = try await authorizationURL(command, sandbox)
        let result = await command.finish(closeInput: true)
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: login_cancelled: "))
        await sandbox.stop()
    }

    @Test func noBrowserTakesAPaste() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--no-browser"], store: store, sandbox))
        let url = try await authorizationURL(command, sandbox)
        _ = try await command.line { $0.contains("ssh -L ") }
        let callback = try await sandboxCallback(for: url)
        command.type(callback.absoluteString + "\n")
        try expectSignedIn(await command.finish(), store: store, sandbox)
        await sandbox.stop()
    }

    @Test func noBrowserTakesTheForwardedRedirectWhileStdinStaysOpen() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--no-browser"], store: store, sandbox))
        try await RedirectFollowingBrowser().open(try await authorizationURL(command, sandbox))
        // Nothing is typed and stdin stays open: the command must still finish.
        try expectSignedIn(await command.finish(), store: store, sandbox)
        await sandbox.stop()
    }

    @Test func deviceSignsInWithTheCodeAndOpenLines() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(devicePollingInterval: .seconds(1)), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let command = try RunningCommand(cli, arguments(["--device"], store: store, sandbox))
        let code = try await command.line { $0.hasPrefix("Code: ") }.dropFirst("Code: ".count)
        let open = try #require(URL(string: String(try await command.line { $0.hasPrefix("Open: ") }.dropFirst(6))))
        #expect(open == sandbox.url(.deviceVerification))
        try sandbox.approveDevice(userCode: String(code))
        try expectSignedIn(await command.finish(), store: store, sandbox)
        await sandbox.stop()
    }

    @Test(arguments: [["--paste"], ["--no-browser"], ["--device"], []])
    func ctrlCEndsAWaitingLoginWithLoginCancelled(way: [String]) async throws {
        // Nobody approves: every way in waits.
        let sandbox = try await SandboxAuthorizationServer.start(mode: .live)
        let directory = try TemporaryDirectory()
        let device = way == ["--device"]
        // Without a flag the "browser" only leaves a mark that it was opened: the sign-in waits.
        let opened = directory.path + "/opened"
        let command = try RunningCommand(
            cli,
            arguments(way, store: directory.path + "/store", sandbox),
            environment: ["BROWSER": "/bin/sh -c 'touch \(opened)' %s"]
        )
        if device {
            _ = try await command.line { $0.hasPrefix("Code: ") }
        } else if way.isEmpty {
            while !FileManager.default.fileExists(atPath: opened) { try await Task.sleep(for: .milliseconds(10)) }
        } else {
            _ = try await authorizationURL(command, sandbox)
        }
        command.interrupt()
        let result = await command.finish()
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: login_cancelled: sign-in was cancelled"), "\(result.stderr)")
        let key = TokenKey(issuer: sandbox.issuer.absoluteString, clientID: clientID)
        #expect(try FileTokenStore(directory: directory.path + "/store").load(key) == nil)
        #expect(sandbox.grantCount(.authorizationCode) == 0, "no code was exchanged")
        await sandbox.stop()
    }

    @Test func theWaysInExcludeEachOther() async throws {
        for ways in [["--paste", "--device"], ["--client-credentials", "--no-browser"]] {
            let result = try await run(cli, ["login"] + ways + ["--client-id", "c"])
            #expect(result.status == 64)
            #expect(result.stderr.contains("choose one of --no-browser, --paste, --device and --client-credentials"))
        }
    }
}

/// What needs a server whose metadata names no device endpoint: django-oauth-toolkit's.
@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct CLIRealServerDeviceTests {
    let server: TestServer
    let cli = cliPath("oidc-login")

    init() throws { server = try TestServer.load() }

    @Test func deviceWithoutAnEndpointSaysHowToSetOne() async throws {
        let directory = try TemporaryDirectory()
        let result = try await run(
            cli,
            [
                "login", "--issuer", server.issuer.absoluteString, "--client-id", server.deviceClientID, "--store",
                directory.path + "/store", "--device",
            ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: configuration_invalid: the provider's metadata names no device"))
        #expect(result.stderr.contains("hint: set it with --device-endpoint"))
    }
}
