import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct CLIWithoutServerTests {
    let cli = cliPath("oidc-login")

    @Test func statusOnAnEmptyStoreIsSignedOutAndSucceeds() async throws {
        let directory = try TemporaryDirectory()
        let result = try await run(
            cli,
            [
                "status", "--json", "--issuer", "https://id.example.com", "--client-id", "c", "--store",
                directory.path + "/none",
            ]
        )
        #expect(result.status == 0)
        let object = try #require(try JSONValue.parse(result.stdout).objectValue)
        #expect(object["signed_in"] == false)
        #expect(object["subject"] == .null)
        #expect(object["expires_at"] == .null)
        #expect(object["scope"] == [])
        #expect(object["has_refresh_token"] == false)
        #expect(result.stderr.isEmpty)
    }

    /// The sample CLIs keep AsyncHTTPClient as their transport on Linux (NativeAuth's core ships
    /// none), and their debug log names it with every exchange; `--http-transport` picks another.
    @Test func theCLINamesItsHTTPTransportInTheDebugLog() async throws {
        let server = try await TestHTTPServer.start { _ in .text("not here", status: 404) }
        let directory = try TemporaryDirectory()
        let arguments = [
            "--issuer", server.url("").absoluteString, "--client-id", "c", "--store", directory.path + "/store",
        ]
        let standard = try await run(cli, ["userinfo"] + arguments, environment: ["NATIVEAUTH_LOG_LEVEL": "debug"])
        #expect(standard.status == 1)
        #if os(Linux)
            #expect(standard.stderr.contains("transport=AsyncHTTPClient"), "\(standard.stderr)")
            // FoundationNetworking (libcurl and its libraries) is not linked into the tools on Linux.
            let refused = try await run(cli, ["userinfo", "--http-transport", "urlsession"] + arguments)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("not in this build on Linux"), "\(refused.stderr)")
            #expect(refused.stderr.contains("hint: use the asynchttpclient --http-transport"), "\(refused.stderr)")
        #else
            let chosen = try await run(
                cli, ["userinfo", "--http-transport", "urlsession"] + arguments,
                environment: ["NATIVEAUTH_LOG_LEVEL": "debug"])
            #expect(chosen.stderr.contains("transport=URLSession"), "\(chosen.stderr)")
        #endif
        await server.stop()
    }

    @Test func aMissingClientIDIsOneErrorLineWithAHint() async throws {
        let result = try await run(cli, ["login", "--issuer", "https://id.example.com"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first == #"error: configuration_invalid: the field "client_id" is missing"#)
        #expect(lines.dropFirst().first?.hasPrefix("hint: set it with --client-id") == true)
        #expect(lines.count == 2)
    }

    @Test func aBadConfigFileSaysWhere() async throws {
        let directory = try TemporaryDirectory()
        let config = directory.path + "/config.json"
        try "{\"client_id\": \"c\",\n  \"issuer\": }".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await run(cli, ["status", "--config", config])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "error: configuration_invalid: the configuration file \(config) is not valid JSON: line 2"))
    }

    /// A client secret on the command line is visible to every user (`ps`): it is accepted with a
    /// warning. A secret file (or `-`, standard input) is the way to pass one, and a file, or a
    /// configuration file holding a secret, that others can read is refused with the fix.
    @Test func clientSecretsComeFromPrivateFilesOrStandardInput() async throws {
        let secret = "Sandbox-Client-Secret-File-0001"
        let client = SandboxAuthorizationServer.Client(id: "confidential", secret: secret)
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let secretFile = directory.path + "/secret"
        try (secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", "confidential", "--store", directory.path + "/s",
        ]
        let browser = ["BROWSER": redirectFollowingBrowser]

        #expect(chmod(secretFile, 0o644) == 0)
        let open = try await run(cli, ["login", "--client-secret-file", secretFile] + connection, environment: browser)
        #expect(open.status == 1)
        #expect(open.stderr.contains("other users can read or change it") && open.stderr.contains("chmod 600"))

        #expect(chmod(secretFile, 0o600) == 0)
        let login = try await run(
            cli, ["login", "--client-secret-file", secretFile] + connection, environment: browser)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(!login.stderr.contains("--client-secret puts"))

        let piped = try RunningCommand(cli, ["refresh", "--client-secret-file", "-"] + connection)
        piped.type(secret + "\n")
        let refresh = await piped.finish(closeInput: true)
        #expect(refresh.status == 0, "\(refresh.stderr)")

        let onArgv = try await run(cli, ["refresh", "--client-secret", secret] + connection)
        #expect(onArgv.status == 0)
        #expect(onArgv.stderr.contains("warning: --client-secret puts the secret in the process list"))

        let config = directory.path + "/config.json"
        try #"{"client_secret": "\#(secret)"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(chmod(config, 0o644) == 0)
        let readable = try await run(cli, ["refresh", "--config", config] + connection)
        #expect(readable.status == 1)
        #expect(readable.stderr.contains("\(config) holds a client secret but other users can read or change it"))
        #expect(chmod(config, 0o600) == 0)
        #expect(try await run(cli, ["refresh", "--config", config] + connection).status == 0)
        await sandbox.stop()
    }

    @Test func argumentErrorsKeepArgumentParsersCode() async throws {
        let result = try await run(cli, ["login", "--port", "not-a-number"])
        #expect(result.status == 64)
    }

    @Test func colourOnlyOnATerminal() async throws {
        let arguments = ["login", "--issuer", "https://id.example.com"]
        // `script` gives the command a terminal; its output comes back on our pipe.
        let onTerminal = try await run(
            "/usr/bin/script", ["-qc", ([cli] + arguments).joined(separator: " "), "/dev/null"])
        #expect(onTerminal.stdout.contains("\u{1B}[31merror:\u{1B}[0m configuration_invalid"))
        let noColor = try await run(
            "/usr/bin/script", ["-qc", ([cli] + arguments).joined(separator: " "), "/dev/null"],
            environment: ["NO_COLOR": "1"])
        #expect(noColor.stdout.hasPrefix("error: configuration_invalid"))
        let piped = try await run(cli, arguments)
        #expect(piped.stderr.hasPrefix("error: configuration_invalid"))
        #expect(!piped.stderr.contains("\u{1B}"))
    }
}

@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct CLISignInTests {
    let server: TestServer
    let cli = cliPath("oidc-login")

    init() throws { server = try TestServer.load() }

    @Test func tokenApiUserinfoRefreshAndLogout() async throws {
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", server.issuer.absoluteString, "--client-id", server.publicClientID, "--store",
            directory.path + "/store", "--scope", "openid profile email",
        ]
        let login = try await run(
            cli, ["login", "--timeout", "60"] + connection, environment: ["BROWSER": TestServer.browserCommand()])
        #expect(login.status == 0, "\(login.stderr)")
        // The account is named after who signed in (preferred_username).
        let key = TokenKey(
            issuer: server.issuer.absoluteString, clientID: server.publicClientID, account: server.username)
        let store = FileTokenStore(directory: directory.path + "/store")
        let tokens = try #require(try store.load(key))

        let token = try await run(cli, ["token"] + connection)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(token.stdout == tokens.accessToken + "\n")

        let api = try await run(cli, ["api", server.issuer.absoluteString + "/userinfo/"] + connection)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(try JSONValue.parse(api.stdout).objectValue?.string("sub") == tokens.subject)

        let relative = try await run(cli, ["api", "userinfo/"] + connection)
        #expect(relative.status == 0, "\(relative.stderr)")

        let missing = try await run(cli, ["api", "/no-such-endpoint/"] + connection)
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("error: request_failed: the API answered HTTP 404"))

        let userinfo = try await run(cli, ["userinfo", "--json"] + connection)
        #expect(userinfo.status == 0, "\(userinfo.stderr)")
        #expect(try JSONValue.parse(userinfo.stdout).objectValue?.string("email") == "alice@example.test")

        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(refresh.stdout.hasPrefix("Refreshed"))
        let refreshed = try #require(try store.load(key))
        #expect(refreshed.accessToken != tokens.accessToken)

        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "Signed out\n")
        #expect(logout.stderr.contains(server.issuer.absoluteString + "/logout/?client_id="))
        #expect(!logout.stderr.contains(try #require(refreshed.idToken)))
        #expect(try store.load(key) == nil)

        let after = try await run(cli, ["token"] + connection)
        #expect(after.status == 1)
        #expect(after.stderr.contains("error: login_required"))
        #expect(after.stderr.contains("hint: run `oidc-login login`"))

        for output in [
            token.stderr, api.stdout, api.stderr, userinfo.stdout, refresh.stdout, refresh.stderr, logout.stdout,
        ] {
            #expect(!output.contains(refreshed.accessToken))
            #expect(!output.contains(try #require(refreshed.refreshToken)))
        }
    }
}

/// The CLI's own behaviour (progress, precedence, redaction, the printed URL), against the
/// in-process sandbox: no real server needed.
@Suite(.testLogging, .serialized) struct CLISandboxSignInTests {
    let cli = cliPath("oidc-login")

    /// An API's answer printed to a terminal shows its escape sequences as text (one that sets the
    /// clipboard, OSC 52, does nothing); `--raw`, or output that is not a terminal, is byte for
    /// byte (review I1).
    @Test func anAPIAnswerReachesATerminalInert() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let hostile = "first line\n\u{1B}]52;c;cHduZWQ=\u{07}second\u{202E}line\n"
        func api(_ extra: [String], terminal: Bool) async throws -> CommandResult {
            sandbox.failNext(1, .resource, with: .response(status: 200, contentType: "text/plain", body: hostile))
            let arguments = ["api", sandbox.url(.resource).absoluteString] + connection + extra
            guard terminal else { return try await run(cli, arguments) }
            let command = ([cli] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try await run("/usr/bin/script", ["-qc", command, "/dev/null"], environment: ["TERM": "xterm"])
        }
        let shown = try await api([], terminal: true)
        #expect(shown.status == 0, "\(shown.stdout)")
        #expect(!shown.stdout.contains("\u{1B}]52") && !shown.stdout.contains("\u{202E}"), "\(shown.stdout)")
        #expect(shown.stdout.contains("^[]52;c;cHduZWQ=^Gsecond<U+202E>line"), "\(shown.stdout)")
        #expect(shown.stdout.contains("first line\r\n"), "lines stay lines")
        let raw = try await api(["--raw"], terminal: true)
        #expect(raw.stdout.contains("\u{1B}]52;c;cHduZWQ=\u{07}"))
        let piped = try await api([], terminal: false)
        #expect(piped.stdout == hostile, "a pipe gets the bytes")
        await sandbox.stop()
    }

    @Test func aTerminalShowsProgressWhileTheBrowserTakesItsTime() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        // The "person" waits three seconds before signing in.
        let slowBrowser = "/bin/sh -c 'sleep 3; exec \"$0\" \"$@\"' " + redirectFollowingBrowser
        let command = [
            cli, "login", "--issuer", sandbox.issuer.absoluteString, "--client-id",
            SandboxAuthorizationServer.Client.defaultID, "--store",
            directory.path + "/store",
        ].joined(separator: " ")
        let result = try await run(
            "/usr/bin/script", ["-qc", command, "/dev/null"], environment: ["BROWSER": slowBrowser, "TERM": "xterm"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("Waiting for the browser… 0:02"))
        // The progress line is erased once the sign-in is done.
        let afterProgress = try #require(result.stdout.range(of: "Waiting for the browser…", options: .backwards))
        let rest = result.stdout[afterProgress.upperBound...]
        #expect(rest.contains("\r\u{1B}[2K"))
        #expect(rest.contains("\r\u{1B}[2KSigned in as "))
        await sandbox.stop()
    }

    @Test func loginThenStatusNeverPrintsATokenAndHonoursPrecedence() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        // The file names a wrong client; the environment the right one; the flags the store.
        let config = directory.path + "/config.json"
        try #"{"issuer": "\#(sandbox.issuer.absoluteString)", "client_id": "wrong-client", "scope": "openid email"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let environment = [
            "BROWSER": redirectFollowingBrowser,
            "NATIVEAUTH_CLIENT_ID": SandboxAuthorizationServer.Client.defaultID,
            "NATIVEAUTH_STORE": directory.path + "/not-this-one",
        ]
        let login = try await run(
            cli, ["login", "--timeout", "60", "--config", config, "--store", store], environment: environment)
        #expect(login.status == 0, "\(login.stderr)")
        // Without the profile scope the ID token has no preferred_username: the email names the account.
        #expect(login.stdout == "Signed in as alice@example.test\n")

        let tokens = try #require(
            try FileTokenStore(directory: store).load(
                TokenKey(
                    issuer: sandbox.issuer.absoluteString, clientID: SandboxAuthorizationServer.Client.defaultID,
                    account: "alice@example.test")
            )
        )
        #expect(tokens.scopes == ["openid", "email"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/not-this-one"))

        let status = try await run(
            cli, ["status", "--json", "--config", config, "--store", store], environment: environment)
        #expect(status.status == 0)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true)
        #expect(object["subject"] == .string(try #require(tokens.subject)))
        #expect(object["has_refresh_token"] == true)
        #expect(object["scope"] == ["openid", "email"])
        #expect(try object.string("expires_at")?.hasSuffix("Z") == true)

        let human = try await run(cli, ["status", "--config", config, "--store", store], environment: environment)
        #expect(human.stdout.contains("Signed in as alice@example.test"))

        for output in [login.stdout, login.stderr, status.stdout, status.stderr, human.stdout, human.stderr] {
            #expect(!output.contains(tokens.accessToken))
            #expect(!output.contains(try #require(tokens.refreshToken)))
            #expect(!output.contains(try #require(tokens.idToken)))
        }

        // With the file's client id, the same store holds nothing.
        let other = try await run(cli, ["status", "--json", "--config", config, "--store", store])
        #expect(try JSONValue.parse(other.stdout).objectValue?["signed_in"] == false)
        await sandbox.stop()
    }

    /// Every command of the sample CLI at trace level, with a confidential client: no access,
    /// refresh or ID token and no client secret in anything it prints, except the access token
    /// that `token` prints on stdout, its purpose.
    @Test func everyCommandAtTraceLevelPrintsNoTokenAndNoSecret() async throws {
        let secret = "Sandbox-Client-Secret-0123456789"
        let client = SandboxAuthorizationServer.Client(
            id: "confidential", secret: secret, postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"])
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let run = try await runEveryCommand(
            cli,
            connection: [
                "--issuer", sandbox.issuer.absoluteString, "--client-id", "confidential", "--client-secret", secret,
                "--store", directory.path + "/store", "--scope", "openid profile email offline_access",
            ],
            store: directory.path + "/store",
            apiPath: sandbox.issuer.absoluteString + "/resource",
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_LOG_LEVEL": "trace"]
        )
        // At least 4 tokens: a refresh gave a new access token.
        #expect(run.problems(minimumTokens: 4, besides: [secret]) == [])
        await sandbox.stop()
    }

    /// No token, code or secret reaches a child: `login` and `logout` start a `$BROWSER` that
    /// records its argv and environment, with the client secret in `NATIVEAUTH_CLIENT_SECRET`. The
    /// browser gets only one-time start addresses and no `NATIVEAUTH_` variable, while the sign-in
    /// and the logout (whose end-session request carries the ID token) complete through them.
    @Test func theBrowsersArgvAndEnvironmentHoldNoSecret() async throws {
        let secret = "Sandbox-Client-Secret-9876543210"
        let client = SandboxAuthorizationServer.Client(
            id: "confidential", secret: secret, postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"])
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let record = directory.path + "/browser.jsonl"
        let connection = ["--issuer", sandbox.issuer.absoluteString, "--client-id", "confidential", "--store", store]
        let environment = [
            "BROWSER": redirectFollowingBrowser, "BROWSER_RECORD_FILE": record, "NATIVEAUTH_CLIENT_SECRET": secret,
        ]
        let login = try await run(cli, ["login", "--timeout", "30"] + connection, environment: environment)
        #expect(login.status == 0, "\(login.stderr)")
        let tokens = try storedTokens(in: store)
        #expect(tokens.count == 3, "access, refresh and ID token")
        let logout = try await run(cli, ["logout", "--timeout", "30"] + connection, environment: environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(sandbox.requestCount(.endSession) == 1, "the end-session request arrived")

        let launches = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(launches.count == 2, "one browser for login, one for logout")
        for launch in launches {
            let object = try #require(try JSONValue.parse(Data(launch.utf8)).objectValue)
            let argv = object["argv"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(argv.count == 2, "the script and the URL")
            let start = try #require(argv.last.flatMap(URL.init(string:)))
            #expect(start.host == "127.0.0.1" && start.path.hasPrefix("/start/") && start.query == nil)
            let names = object["environment"]?.objectValue?.keys ?? []
            #expect(!names.isEmpty && !names.contains { $0.hasPrefix("NATIVEAUTH_") })
            for value in tokens.union([secret]) {
                #expect(!launch.contains(value), "a secret of \(value.count) characters reached the browser")
            }
            #expect(!launch.contains("state=") && !launch.contains("id_token_hint"))
        }
        await sandbox.stop()
    }

    /// `logout` whose browser cannot be launched prints the end-session URL without the ID token,
    /// and says that the tokens are gone when nothing comes back.
    @Test func aLogoutWhoseBrowserFailsPrintsTheURLWithoutTheIDToken() async throws {
        let client = SandboxAuthorizationServer.Client(
            id: "public", postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"])
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", "public", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let idToken = try #require(
            try FileTokenStore(directory: directory.path + "/store")
                .load(
                    TokenKey(issuer: sandbox.issuer.absoluteString, clientID: "public", account: "sandbox-user-alice"))?
                .idToken)

        let logout = try await run(
            cli, ["logout", "--timeout", "1"] + connection, environment: ["BROWSER": "/bin/false"])
        #expect(logout.status == 0, "the tokens are removed: that is the command's job")
        #expect(logout.stderr.contains("Could not open a browser. Open this URL to sign out:"), "\(logout.stderr)")
        #expect(logout.stderr.contains("\n\(sandbox.issuer.absoluteString)/end_session?post_logout_redirect_uri="))
        #expect(!logout.stderr.contains(idToken) && !logout.stderr.contains("id_token_hint"))
        #expect(
            logout.stderr.contains(
                "notice: the provider's logout page did not send the browser back within 1 s; the tokens are removed"),
            "\(logout.stderr)")
        #expect(logout.stdout.contains("Signed out"))
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == false, "the tokens are removed")
        await sandbox.stop()
    }

    /// A server that takes the end-session request only by GET answers the browser's POST with
    /// 404: the default logout ends within its short deadline, exits 0 and says so in one line;
    /// with `--end-session-method get` the round trip completes.
    @Test func aServerThatTakesEndSessionOnlyByGET() async throws {
        let client = SandboxAuthorizationServer.Client(
            id: "public", postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"])
        var configuration = SandboxAuthorizationServer.Configuration(clients: [client], autoApprove: true)
        configuration.endSessionTakesGETOnly = true
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", "public", "--store", directory.path + "/store",
        ]
        let record = directory.path + "/browser.jsonl"
        let browser = ["BROWSER": redirectFollowingBrowser, "BROWSER_RECORD_FILE": record]
        #expect(try await run(cli, ["login"] + connection, environment: browser).status == 0)
        let idToken = try #require(try storedTokens(in: directory.path + "/store").first { $0.hasPrefix("eyJ") })
        let started = ContinuousClock.now
        let posted = try await run(cli, ["logout", "--timeout", "3"] + connection, environment: browser)
        #expect(ContinuousClock.now - started < .seconds(20), "the short deadline, not the sign-in's")
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(posted.stderr.contains("did not send the browser back within 3 s; the tokens are removed"))
        #expect(posted.stderr.contains("--end-session-method get"), "\(posted.stderr)")
        #expect(posted.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("notice:") }.count == 1)
        #expect(posted.stdout.contains("Signed out"))
        // The page was opened once, through the one-time start address; never the URL with the ID token.
        let launches = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(launches.count == 2, "one browser for login, one for logout")
        #expect(!launches.contains { $0.contains(idToken) || $0.contains("id_token_hint") })
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == false)

        #expect(try await run(cli, ["login"] + connection, environment: browser).status == 0)
        let before = sandbox.requestCount(.endSession)
        let got = try await run(cli, ["logout", "--end-session-method", "get"] + connection, environment: browser)
        #expect(got.status == 0, "\(got.stderr)")
        #expect(!got.stderr.contains("notice:"), "\(got.stderr)")
        #expect(sandbox.requestCount(.endSession) == before + 1)
        await sandbox.stop()
    }

    /// The plain-HTTP-on-loopback notice is said once, at sign-in, as a sentence; other commands
    /// are quiet about it.
    @Test func thePlainHTTPNoticeComesOnceAtSignIn() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        // The default log level (the test run's own may be debug).
        let quiet = ["NATIVEAUTH_LOG_LEVEL": "warning"]
        let login = try await run(
            cli, ["login"] + connection, environment: quiet.merging(["BROWSER": redirectFollowingBrowser]) { $1 })
        #expect(login.status == 0)
        #expect(login.stderr.components(separatedBy: "plain HTTP").count == 2, "\(login.stderr)")
        #expect(login.stderr.contains("notice: the provider is reached over plain HTTP on the loopback interface"))
        for command in [["userinfo"], ["token"], ["status"]] {
            let result = try await run(cli, command + connection, environment: quiet)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("plain HTTP"), "\(command): \(result.stderr)")
        }
        // Debug logging says it every time.
        let debug = try await run(cli, ["userinfo"] + connection, environment: ["NATIVEAUTH_LOG_LEVEL": "debug"])
        #expect(debug.stderr.contains("plain HTTP on the loopback interface"), "\(debug.stderr)")
        await sandbox.stop()
    }

    /// `--trusted-audience` accepts an ID token that also names that audience (with `azp`).
    @Test func aTrustedAudienceIsAcceptedFromTheCommandLine() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--store", directory.path + "/store",
        ]
        let extra: JSONObject = [
            "aud": [.string(SandboxAuthorizationServer.Client.defaultID), "https://api.example"],
            "azp": .string(SandboxAuthorizationServer.Client.defaultID),
        ]
        sandbox.alterNextIDTokens(.claims(extra))
        let refused = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("not trusted (https://api.example)"), "\(refused.stderr)")
        sandbox.alterNextIDTokens(.claims(extra))
        let accepted = try await run(
            cli, ["login", "--trusted-audience", "https://api.example"] + connection,
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        await sandbox.stop()
    }

    @Test func noBrowserPrintsTheURLOnStderr() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let result = try await run(
            cli,
            [
                "login", "--no-browser", "--timeout", "1", "--issuer", sandbox.issuer.absoluteString, "--client-id",
                SandboxAuthorizationServer.Client.defaultID, "--store", directory.path,
            ]
        )
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("\n\(sandbox.issuer.absoluteString)/authorize?response_type=code"))
        #expect(result.stderr.contains("error: timeout:"))
        await sandbox.stop()
    }
}
