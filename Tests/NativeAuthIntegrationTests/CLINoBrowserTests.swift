import Foundation
import NativeAuth
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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
