import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

/// The cloud CLIs and libraries, end to end: the real AWS CLI (PyPI `awscli`) running
/// `token --format aws-credential-process` from the profile `setup-aws` wrote, against moto's STS
/// behind a proxy that checks each web identity token as an IAM OIDC identity provider would
/// (moto does not); and Google's own google-auth loading the `external_account` file
/// `setup-google` wrote, exchanging what the executable printed at an RFC 8693 endpoint that
/// checks it the same way (scripts/lib/token_checking_server.py).
@Suite(.testLogging, .enabled(if: CloudTools.available, "needs awscli, moto and google-auth in .venv"))
struct CloudCLITests {
    let cli = cliPath("oidc-login")
    let role = "arn:aws:iam::123456789012:role/nativeauth-dev"

    /// A checking server of `mode` (`aws-sts` or `google-sts`) for the sandbox, and its port.
    func startChecker(_ mode: String, _ setup: CLIAdapterTests.Setup) async throws -> (RunningCommand, Int) {
        let server = try RunningCommand(
            CloudTools.python,
            [
                repositoryRoot.path + "/scripts/lib/token_checking_server.py", mode,
                setup.sandbox.issuer.absoluteString, SandboxAuthorizationServer.Client.defaultID,
            ])
        let line = try await server.line { $0.hasPrefix("port: ") }
        return (server, try #require(Int(line.dropFirst("port: ".count))))
    }

    func signIn(_ setup: CLIAdapterTests.Setup) async throws {
        let login = try await run(cli, ["login"] + setup.connection, environment: setup.environment)
        #expect(login.status == 0, "\(login.stderr)")
    }

    /// Runs `body` `count` times at once.
    func parallel(_ count: Int, _ body: @escaping @Sendable () async throws -> CommandResult) async throws
        -> [CommandResult]
    {
        try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<count { group.addTask { try await body() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    // MARK: - AWS

    /// 20 `aws sts get-caller-identity` at once through the profile `setup-aws` wrote: one STS
    /// `AssumeRoleWithWebIdentity`, with the ID token, for all; one more once the kept credentials
    /// come within five minutes of their expiry; none after logout (a clear error instead).
    @Test func awsCLIGetsTheRolesCredentialsWithOneSTSCallForMany() async throws {
        let setup = try await CLIAdapterTests.Setup.start()
        try await signIn(setup)
        let (sts, port) = try await startChecker("aws-sts", setup)
        var environment = setup.environment
        let config = setup.home + "/aws-config"
        environment["AWS_CONFIG_FILE"] = config
        environment["AWS_SHARED_CREDENTIALS_FILE"] = setup.home + "/aws-credentials"
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(port)"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment["AWS_DEFAULT_REGION"] = "eu-west-1"
        // A configuration the person already has: it stays as it was.
        let before = """
            [default]
            region = us-east-2

            [profile dev]
            region = eu-west-1
            output = json

            [profile other]
            credential_process = /usr/bin/other-tool
            """
        try Data((before + "\n").utf8).write(to: URL(fileURLWithPath: config))

        let newline = try await run(
            cli, ["setup-aws", "--aws-profile", "dev\n[default]", "--role-arn", role] + setup.connection,
            environment: environment)
        #expect(newline.status == 1 && newline.stderr.contains("cannot be an AWS profile's name"), "\(newline.stderr)")
        let notARole = try await run(
            cli, ["setup-aws", "--aws-profile", "dev", "--role-arn", "arn:aws:iam::123:user/x"] + setup.connection,
            environment: environment)
        #expect(notARole.status == 1 && notARole.stderr.contains("is not an IAM role ARN"), "\(notARole.stderr)")

        let written = try await run(
            cli, ["setup-aws", "--aws-profile", "dev", "--role-arn", role, "--duration", "900"] + setup.connection,
            environment: environment)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout.contains("Wrote the AWS profile dev"), "\(written.stdout)")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text.contains("[profile dev]\nregion = eu-west-1\noutput = json\ncredential_process = "), "\(text)")
        #expect(text.contains("[profile other]\ncredential_process = /usr/bin/other-tool"), "\(text)")
        #expect(text.contains("[default]\nregion = us-east-2\n"), "\(text)")
        #expect(text.contains("token --format aws-credential-process --issuer "), "\(text)")
        let attributes = try FileManager.default.attributesOfItem(atPath: config)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let again = try await run(
            cli, ["setup-aws", "--aws-profile", "dev", "--role-arn", role, "--duration", "900"] + setup.connection,
            environment: environment)
        #expect(again.stdout.contains("nothing changed"), "\(again.stdout)")

        let aws = CloudTools.aws
        let awsEnvironment = environment
        let identity = ["sts", "get-caller-identity", "--profile", "dev", "--output", "json"]
        let first = try await parallel(20) { try await run(aws, identity, environment: awsEnvironment) }
        #expect(first.allSatisfy { $0.status == 0 }, "\(first.map(\.stderr).filter { !$0.isEmpty })")
        for result in first {
            let object = try JSONValue.parse(Data(result.stdout.utf8)).objectValue
            let arn = object?["Arn"]?.stringValue ?? ""
            #expect(
                arn.hasPrefix("arn:aws:sts::123456789012:assumed-role/nativeauth-dev/nativeauth-"), "\(result.stdout)")
        }
        let (key, tokens) = try await setup.stored()
        let kept = try #require(tokens.derivedCredentials.first)
        #expect(tokens.derivedCredentials.count == 1 && kept.name.contains(role))
        #expect(
            kept.expiresAt.timeIntervalSinceNow > 800 && kept.expiresAt.timeIntervalSinceNow <= 900, "--duration 900")

        let status = try await run(cli, ["status"] + setup.connection, environment: environment)
        #expect(
            status.stdout.contains("Credentials aws-sts http://127.0.0.1:\(port) \(role) id-token 900s expire: "),
            "\(status.stdout)")

        // Within five minutes of their expiry: the next callers get new ones, once.
        var expiring = tokens
        expiring.derivedCredentials[0].expiresAt = Date(timeIntervalSinceNow: 120)
        try FileTokenStore(directory: setup.store).save(expiring, for: key)
        let second = try await parallel(5) { try await run(aws, identity, environment: awsEnvironment) }
        #expect(second.allSatisfy { $0.status == 0 }, "\(second.map(\.stderr).filter { !$0.isEmpty })")
        let (_, renewed) = try await setup.stored()
        #expect(renewed.derivedCredentials.first.map { $0.expiresAt.timeIntervalSinceNow > 800 } == true)

        // The access token asked for instead: the sandbox's is opaque, and STS refuses it.
        let opaque = try await run(
            cli,
            ["token", "--format", "aws-credential-process", "--role-arn", role, "--token-kind", "access"]
                + setup.connection, environment: environment)
        #expect(opaque.status == 1 && opaque.stdout.isEmpty)
        #expect(
            opaque.stderr.contains("error: invalid_token: STS refused the token as a web identity"), "\(opaque.stderr)")
        #expect(opaque.stderr.contains("IAM OIDC identity provider"), "\(opaque.stderr)")

        // Signed out: the kept credentials go with the tokens, and the AWS CLI shows why.
        let logout = try await run(cli, ["logout", "--no-browser"] + setup.connection, environment: environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        let signedOut = try await run(aws, identity, environment: environment)
        #expect(signedOut.status != 0)
        #expect(signedOut.stderr.contains("login_required"), "\(signedOut.stderr)")

        sts.stop()
        let log = await sts.finish().stderr
        let lines = log.split(separator: "\n")
        #expect(
            lines.filter { $0.hasPrefix("AssumeRoleWithWebIdentity 200 ") }.count == 2,
            "one call, then one more: \(log)")
        #expect(
            lines.filter { $0.hasPrefix("AssumeRoleWithWebIdentity 200 ") }.allSatisfy {
                $0.contains("#sandbox-user-alice role=\(role) duration=900")
            }, "\(log)")
        #expect(lines.filter { $0.hasPrefix("AssumeRoleWithWebIdentity 400 refused=not-a-jwt") }.count == 1, "\(log)")
        #expect(
            lines.filter { $0.hasPrefix("GetCallerIdentity") || $0.hasPrefix("signed-request") }.count >= 25, "\(log)")
        await setup.sandbox.stop()
    }

    // MARK: - Google

    /// google-auth's executable-sourced credentials from the file `setup-google` wrote: each
    /// refresh runs `token --format google-executable` and exchanges the ID token it prints; ten at
    /// once after the ID token expired cost one refresh; signed out, google-auth reports the
    /// executable's error response.
    @Test func googleAuthExchangesTheIDTokenTheExecutablePrints() async throws {
        let setup = try await CLIAdapterTests.Setup.start()
        try await signIn(setup)
        let (exchange, port) = try await startChecker("google-sts", setup)
        let file = setup.directory.path + "/google-credentials.json"
        let audience =
            "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/pool/providers/sandbox"
        let written = try await run(
            cli,
            [
                "setup-google", "--audience", audience, "--output", file, "--token-url",
                "http://127.0.0.1:\(port)/v1/token",
            ]
                + setup.connection, environment: setup.environment)
        #expect(written.status == 0, "\(written.stderr)")
        let object = try #require(try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: file))).objectValue)
        #expect(object["type"] == "external_account" && object["audience"] == .string(audience))
        #expect(object["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token")
        let existing = try await run(
            cli, ["setup-google", "--audience", audience, "--output", file] + setup.connection,
            environment: setup.environment)
        #expect(existing.status == 1 && existing.stderr.contains("exists"), "\(existing.stderr)")

        var environment = setup.environment
        environment["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] = "1"
        // Debug logging on, as a person chasing a problem would have it: nothing of it may reach
        // the JSON google-auth reads (it reads the executable's stderr with its stdout).
        environment["NATIVEAUTH_LOG_LEVEL"] = "debug"
        let script = repositoryRoot.path + "/scripts/lib/google_external_account.py"
        let once = try await run(CloudTools.python, [script, file], environment: environment)
        #expect(once.status == 0 && once.stdout.hasPrefix("refreshed: token of "), "\(once.stdout) \(once.stderr)")

        try await setup.expireIDToken()
        setup.sandbox.resetCounts()
        let googleEnvironment = environment
        let many = try await parallel(10) {
            try await run(CloudTools.python, [script, file], environment: googleEnvironment)
        }
        #expect(many.allSatisfy { $0.status == 0 }, "\(many.map(\.stdout))")
        #expect(setup.sandbox.grantCount(.refreshToken) == 1, "one refresh for ten google-auth refreshes")

        let logout = try await run(cli, ["logout", "--no-browser"] + setup.connection, environment: setup.environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        let refused = try await run(CloudTools.python, [script, file], environment: environment)
        #expect(refused.status == 1)
        #expect(
            refused.stdout.contains(#""success":false"#) && refused.stdout.contains("login_required"),
            "\(refused.stdout)")

        exchange.stop()
        let log = await exchange.finish().stderr
        let lines = log.split(separator: "\n").filter { $0.hasPrefix("token-exchange 200 ") }
        #expect(lines.count == 11, "\(log)")
        #expect(lines.allSatisfy { $0.contains("#sandbox-user-alice audience=\(audience)") }, "\(log)")
        #expect(!log.contains("refused="), "\(log)")
        await setup.sandbox.stop()
    }
}

/// Where the cloud tools are: the project's virtualenv (scripts/test-server installs them).
enum CloudTools {
    static let python = repositoryRoot.path + "/.venv/bin/python"
    static let aws = repositoryRoot.path + "/.venv/bin/aws"

    /// Whether .venv holds the AWS CLI, moto and google-auth.
    static var isInstalled: Bool {
        let lib = repositoryRoot.path + "/.venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return FileManager.default.isExecutableFile(atPath: aws)
            && versions.contains { version in
                ["moto", "google/auth"].allSatisfy {
                    FileManager.default.fileExists(atPath: "\(lib)/\(version)/site-packages/\($0)")
                }
            }
    }

    /// Whether the run requires the real components (scripts/test.sh): then missing ones fail.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["NATIVEAUTH_REQUIRE_TEST_SERVER"] == "1" }

    /// Whether the suite runs: when they are installed, or required.
    static var available: Bool { isInstalled || isRequired }
}
