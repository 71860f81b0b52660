import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// What a real, strict server showed about `logout` and the loopback port, each against the
/// sandbox configured to behave the same way: a revocation endpoint that takes confidential clients
/// only, a revocation that fails, a logout with nothing stored, and redirect URIs matched exactly.
@Suite(.testLogging) struct LogoutCLITests {
    let cli = cliPath("oidc-login")

    /// Signs alice in with the public sandbox client; the connection flags.
    private func signIn(_ sandbox: SandboxAuthorizationServer, store: String) async throws -> [String] {
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid offline_access", "--store", store,
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        return connection
    }

    /// The metadata says revocation needs `client_secret_basic`: a public client does not try (no
    /// 401), signs out, and exits 0 with a notice.
    @Test func aPublicClientSkipsARevocationEndpointForConfidentialClients() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.revocationAuthMethods = ["client_secret_basic"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = try await signIn(sandbox, store: directory.path + "/store")

        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "Signed out\n")
        #expect(sandbox.requestCount(.revocation) == 0, "nothing sent where it would be refused")
        #expect(logout.stderr.contains("notice: not revoked at the provider"), "\(logout.stderr)")
        #expect(logout.stderr.contains("client_secret_basic") && logout.stderr.contains("public"))
        #expect(!logout.stderr.contains("error:"))
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == false)
        await sandbox.stop()
    }

    /// A revocation the server refuses is a warning once the tokens are removed: exit 0, and the
    /// status said once.
    @Test func aFailedRevocationIsAWarningAndExitsZero() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let connection = try await signIn(sandbox, store: directory.path + "/store")
        sandbox.failNext(2, .revocation, with: .response(status: 401, contentType: "text/plain", body: "no"))

        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "Signed out\n")
        let warning = try #require(logout.stderr.split(separator: "\n").first { $0.hasPrefix("warning:") })
        #expect(warning.contains("revoking them at the provider failed"))
        #expect(warning.components(separatedBy: "HTTP 401").count == 2, "said once: \(warning)")
        #expect(!logout.stderr.contains("error:"))
        await sandbox.stop()
    }

    /// Nothing stored: `logout` says so at once, opens no page and sends nothing; `--end-session`
    /// still ends the provider's session when asked.
    @Test func aLogoutWithNothingStoredSaysSoAtOnce() async throws {
        let client = SandboxAuthorizationServer.Client(
            id: SandboxAuthorizationServer.Client.defaultID, postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"])
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let record = directory.path + "/browser.jsonl"
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--store", directory.path + "/store",
        ]
        let environment = ["BROWSER": redirectFollowingBrowser, "BROWSER_RECORD_FILE": record]
        let started = ContinuousClock.now
        let logout = try await run(cli, ["logout", "--timeout", "120"] + connection, environment: environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "Not signed in; nothing to sign out.\n")
        #expect(ContinuousClock.now - started < .seconds(60), "no wait for a page nobody opened")
        #expect(!FileManager.default.fileExists(atPath: record), "no browser started")
        #expect(sandbox.requestCounts.isEmpty, "nothing sent: \(sandbox.requestCounts)")

        let ended = try await run(
            cli, ["logout", "--end-session", "--timeout", "30"] + connection, environment: environment)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout == "Not signed in here; the session ended\n")
        #expect(sandbox.requestCount(.endSession) == 1)
        #expect(sandbox.requestCount(.revocation) == 0)
        await sandbox.stop()
    }

    /// A server that matches redirect URIs exactly: `--help` does not promise any port, the
    /// sign-in on a free port fails with a hint that names `--port`, and `--port` with the
    /// registered port signs in.
    @Test func aServerMatchingRedirectURIsExactlyIsPointedToPort() async throws {
        let port = try unusedPort()
        var configuration = SandboxAuthorizationServer.Configuration(
            clients: [.init(id: "exact", redirectURIs: ["http://127.0.0.1:\(port)/callback"])], autoApprove: true)
        configuration.matchesRedirectURIsExactly = true
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", "exact", "--store", directory.path + "/store",
        ]
        let help = try await run(cli, ["login", "--help"])
        #expect(!help.stdout.contains("any port is accepted"))
        #expect(help.stdout.contains("RFC 8252"), "\(help.stdout)")

        let refused = try await run(
            cli, ["login", "--timeout", "3"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error: timeout:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--port PORT"), "\(refused.stderr)")

        let login = try await run(
            cli, ["login", "--port", "\(port)"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        await sandbox.stop()
    }

    /// A port nothing listens on now: bound, read and closed.
    private func unusedPort() throws -> Int {
        try RefusingPort().port
    }
}
