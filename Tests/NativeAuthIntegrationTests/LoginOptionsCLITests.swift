import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// `login --prompt/--login-hint/--max-age/--acr-values` in the sample CLI, against the sandbox on
/// a socket.
@Suite(.testLogging) struct LoginOptionsCLITests {
    let cli = cliPath("oidc-login")

    @Test func theSignInOptionsReachTheServerAndTheIDTokenMeetsThem() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.acrValuesSupported = ["urn:sandbox:mfa"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let browser = ["BROWSER": redirectFollowingBrowser]
        let login = try await run(
            cli,
            [
                "login", "--prompt", "login", "--login-hint", "bob", "--max-age", "600", "--acr-values",
                "urn:sandbox:mfa",
            ]
                + connection, environment: browser)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Signed in as bob"), "\(login.stdout)")
        let query = sandbox.lastAuthorizationQuery
        #expect(query.first(named: "prompt") == "login" && query.first(named: "max_age") == "600")

        let weaker = try await run(
            cli, ["login", "--acr-values", "urn:sandbox:hardware-key", "--account", "other"] + connection,
            environment: browser)
        #expect(weaker.status != 0)
        #expect(weaker.stderr.contains("not one of the acr_values"), "\(weaker.stderr)")

        for (arguments, message) in [
            (["--max-age=-1"], "--max-age is a number of seconds"), (["--prompt", "now"], "--prompt is one of"),
            (["--device", "--login-hint", "bob"], "go with a browser sign-in"),
        ] {
            let refused = try await run(cli, ["login"] + arguments + connection)
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        await sandbox.stop()
    }

    /// `api --step-up`: an API that asks for MFA gets a sign-in in the browser with its
    /// `acr_values`, and the answer; without the flag, the error says what to do.
    @Test func apiStepsUpWhenAskedTo() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.acrValuesSupported = ["urn:sandbox:mfa"]
        configuration.resourceACR = "urn:sandbox:mfa"
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let browser = ["BROWSER": redirectFollowingBrowser]
        let login = try await run(cli, ["login"] + connection, environment: browser)
        #expect(login.status == 0, "\(login.stderr)")
        let resource = sandbox.url(.resource).absoluteString
        let plain = try await run(cli, ["api", resource] + connection, environment: browser)
        #expect(plain.status != 0)
        #expect(plain.stderr.contains("step_up_required") && plain.stderr.contains("--step-up"), "\(plain.stderr)")
        let stepped = try await run(cli, ["api", "--step-up", resource] + connection, environment: browser)
        #expect(stepped.status == 0, "\(stepped.stderr)")
        #expect(stepped.stdout.contains("Hello, alice"), "\(stepped.stdout)")
        #expect(sandbox.lastAuthorizationQuery.first(named: "acr_values") == "urn:sandbox:mfa")
        #expect(sandbox.requestCount(.authorization) == 2)
        let after = try await run(cli, ["api", resource] + connection)
        #expect(after.status == 0, "the stronger sign-in is the stored one: \(after.stderr)")
        await sandbox.stop()
    }
}
