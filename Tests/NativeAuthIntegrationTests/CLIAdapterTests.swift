import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

/// The adapters for other programs, end to end: the real kubectl running `token --format
/// exec-credential` as its exec plugin, the real git asking `git-credential` through the helper
/// `setup-git` configured, and Docker's helper protocol spoken directly (there is no Docker daemon
/// here). The servers they talk to accept only what their real counterparts would
/// (scripts/lib/token_checking_server.py): the API server validates ID tokens as the Kubernetes
/// OIDC authenticator does, git's server asks the sandbox about each token.
@Suite(.testLogging) struct CLIAdapterTests {
    let cli = cliPath("oidc-login")

    struct Setup {
        let sandbox: SandboxAuthorizationServer
        let directory: TemporaryDirectory
        var store: String { directory.path + "/store" }
        var home: String { directory.path + "/home" }
        var connection: [String] {
            [
                "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
                "--scope", "openid profile", "--store", store,
            ]
        }
        /// A private HOME (git's and Docker's configuration), and the browser that approves at once.
        var environment: [String: String] {
            [
                "BROWSER": redirectFollowingBrowser, "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0", "XDG_CONFIG_HOME": home + "/.config",
            ]
        }

        static func start() async throws -> Setup {
            let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
            let setup = Setup(sandbox: sandbox, directory: try TemporaryDirectory())
            try FileManager.default.createDirectory(atPath: setup.home, withIntermediateDirectories: true)
            return setup
        }

        /// The one stored set, and its key.
        func stored() async throws -> (TokenKey, TokenSet) {
            let store = FileTokenStore(directory: self.store)
            let key = try #require(try store.keys().first)
            return (key, try #require(try store.load(key)))
        }

        /// Makes the stored ID token expired (its `exp` rewritten; nothing verifies a stored ID
        /// token's signature again), the access token left valid.
        func expireIDToken() async throws {
            var (key, tokens) = try await stored()
            let parts = try #require(tokens.idToken).split(separator: ".").map(String.init)
            let payload = try #require(Base64URL.decode(parts[1]))
            var claims = try #require(try JSONValue.parse(payload).objectValue)
            claims["exp"] = .integer(Int64(Date().timeIntervalSince1970) - 30)
            let expired = Base64URL.encode(Array(try JSONValue.object(claims).encodedString().utf8))
            tokens.idToken = parts[0] + "." + expired + "." + parts[2]
            try FileTokenStore(directory: store).save(tokens, for: key)
        }

        /// Makes the stored access token expired.
        func expireAccessToken() async throws {
            var (key, tokens) = try await stored()
            tokens.expiresAt = Date(timeIntervalSinceNow: -30)
            try FileTokenStore(directory: store).save(tokens, for: key)
        }
    }

    /// A token-checking server (`kube ISSUER CLIENT_ID CERT KEY`, `git RESOURCE REPOSITORIES`) and
    /// the port it listens on.
    func startServer(_ arguments: [String]) async throws -> (RunningCommand, Int) {
        let script = repositoryRoot.path + "/scripts/lib/token_checking_server.py"
        let server = try RunningCommand("/usr/bin/python3", [script] + arguments)
        let line = try await server.line { $0.hasPrefix("port: ") }
        return (server, try #require(Int(line.dropFirst("port: ".count))))
    }

    func signIn(_ setup: Setup) async throws {
        let login = try await run(cli, ["login"] + setup.connection, environment: setup.environment)
        #expect(login.status == 0, "\(login.stderr)")
    }

    // MARK: - kubectl

    /// kubectl gets the ID token, which the API server's OIDC authenticator validates; an expired
    /// ID token is refreshed (once, for 20 kubectl calls) even while the access token is good; the
    /// access token, asked for, is refused there, and the plugin says why.
    @Test func kubectlGetsTheIDTokenFromTheExecPluginAndRefreshesThroughIt() async throws {
        let setup = try await Setup.start()
        try await signIn(setup)
        // kubectl sends credentials over HTTPS only: a throwaway certificate for 127.0.0.1.
        let certificate = setup.directory.path + "/api.crt"
        let key = setup.directory.path + "/api.key"
        let openssl = try await run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        #expect(openssl.status == 0, "\(openssl.stderr)")
        let (api, port) = try await startServer([
            "kube", setup.sandbox.issuer.absoluteString, SandboxAuthorizationServer.Client.defaultID, certificate, key,
        ])

        // The entry `kubeconfig` prints, pasted into a kubeconfig with a cluster and a context.
        let withSecret = try await run(
            cli, ["kubeconfig", "--client-secret", "kubeconfig-client-secret-4d1e"] + setup.connection)
        #expect(withSecret.status == 1 && withSecret.stdout.isEmpty)
        #expect(withSecret.stderr.contains("--client-secret would be written"), "\(withSecret.stderr)")
        let entry = try await run(cli, ["kubeconfig", "--name", "sandbox"] + setup.connection)
        #expect(entry.status == 0, "\(entry.stderr)")
        #expect(entry.stdout.hasPrefix("users:\n- name: \"sandbox\"\n"), "\(entry.stdout)")
        #expect(
            entry.stderr.contains("--oidc-issuer-url=\(setup.sandbox.issuer.absoluteString) --oidc-client-id="),
            "\(entry.stderr)")
        let kubeconfig = setup.directory.path + "/kubeconfig"
        func write(interactiveMode: String, entry chosen: CommandResult? = nil) throws {
            let users = (chosen ?? entry).stdout.replacingOccurrences(
                of: "interactiveMode: \"IfAvailable\"", with: "interactiveMode: \"\(interactiveMode)\"")
            let text = """
                apiVersion: v1
                kind: Config
                clusters:
                - name: sandbox
                  cluster: {server: "https://127.0.0.1:\(port)", certificate-authority: "\(certificate)"}
                contexts:
                - name: sandbox
                  context: {cluster: sandbox, user: sandbox}
                current-context: sandbox
                \(users)
                """
            try Data(text.utf8).write(to: URL(fileURLWithPath: kubeconfig))
        }
        try write(interactiveMode: "IfAvailable")
        let kubectl = ["--kubeconfig", kubeconfig, "get", "--raw", "/api"]
        let kubectlPath = try #require(
            ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let first = try await run(kubectlPath, kubectl, environment: setup.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("\"kind\":\"APIVersions\""), "\(first.stdout)")

        // The stand-in refuses what the API server would: the ID token with one signature byte changed.
        let (_, signedIn) = try await setup.stored()
        var forged = Array(try #require(signedIn.idToken))
        let flipped = forged.count - 12
        forged[flipped] = forged[flipped] == "A" ? "B" : "A"
        let refusedForgery = try await run(
            kubectlPath, kubectl + ["--token", String(forged)], environment: setup.environment)
        #expect(refusedForgery.status != 0)

        // Expired: kubectl runs the plugin, which refreshes once; the API accepts the new token.
        let (_, before) = try await setup.stored()
        try await setup.expireAccessToken()
        setup.sandbox.resetCounts()
        let second = try await run(kubectlPath, kubectl, environment: setup.environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(setup.sandbox.grantCount(.refreshToken) == 1)
        let (_, after) = try await setup.stored()
        #expect(after.accessToken != before.accessToken)

        // The ID token expired, the access token did not: the next call refreshes, once.
        try await setup.expireIDToken()
        setup.sandbox.resetCounts()
        let third = try await run(kubectlPath, kubectl, environment: setup.environment)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(setup.sandbox.grantCount(.refreshToken) == 1)
        let (_, renewed) = try await setup.stored()
        #expect(renewed.idToken != after.idToken && renewed.idTokenIsValid(at: Date()))

        // 20 kubectl calls at once after the ID token expired: one refresh.
        try await setup.expireIDToken()
        setup.sandbox.resetCounts()
        let parallel = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<20 { group.addTask { try await run(kubectlPath, kubectl, environment: setup.environment) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(parallel.allSatisfy { $0.status == 0 }, "\(parallel.map(\.stderr).filter { !$0.isEmpty })")
        #expect(setup.sandbox.grantCount(.refreshToken) == 1, "one refresh for 20 kubectl calls")

        // The access token asked for: the sandbox's is opaque, the API server refuses it, and the
        // plugin's warning (on kubectl's stderr) names --token-kind.
        let accessEntry = try await run(
            cli, ["kubeconfig", "--name", "sandbox", "--token-kind", "access"] + setup.connection)
        #expect(accessEntry.status == 0 && accessEntry.stdout.contains("\"--token-kind\"\n      - \"access\""))
        try write(interactiveMode: "IfAvailable", entry: accessEntry)
        let opaque = try await run(kubectlPath, kubectl, environment: setup.environment)
        #expect(opaque.status != 0)
        #expect(opaque.stderr.contains("use --token-kind id"), "\(opaque.stderr)")
        try write(interactiveMode: "IfAvailable")

        // Signed out, and kubectl says the plugin may not interact: it fails at once, saying why.
        let logout = try await run(cli, ["logout", "--no-browser"] + setup.connection, environment: setup.environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        try write(interactiveMode: "Never")
        let refused = try await run(kubectlPath, kubectl, environment: setup.environment)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("kubectl runs this plugin without a terminal"), "\(refused.stderr)")
        #expect(refused.stderr.contains("run `oidc-login login`"), "\(refused.stderr)")

        api.stop()
        let log = await api.finish().stderr
        let user = setup.sandbox.issuer.absoluteString + "#sandbox-user-alice"
        #expect(log.contains("GET /api 200 bearer user=\(user)"), "\(log)")
        #expect(log.contains("GET /api 401 bearer refused=not-a-jwt"), "the opaque access token: \(log)")
        #expect(log.contains("GET /api 401 bearer refused=signature"), "the forged one: \(log)")
        // Only the forged call: kubectl may send it twice (to /version as well), never again later.
        let lines = log.split(separator: "\n")
        let forgedLines = lines.indices.filter { lines[$0].contains("refused=signature") }
        #expect(
            !forgedLines.isEmpty && forgedLines.last.map { $0 - forgedLines[0] + 1 } == forgedLines.count,
            "only the forged one: \(log)")
        #expect(!log.contains("refused=expired") && !log.contains("refused=audience"), "\(log)")
        await setup.sandbox.stop()
    }

    /// kubectl says the session is interactive: the plugin signs in with the browser, then answers.
    @Test func anInteractiveExecCredentialSignsInFirst() async throws {
        let setup = try await Setup.start()
        let info =
            #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#
        let result = try await run(
            cli, ["token", "--format", "exec-credential"] + setup.connection,
            environment: setup.environment.merging(["KUBERNETES_EXEC_INFO": info]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONValue.parse(Data(result.stdout.utf8)).objectValue)
        #expect(object["apiVersion"] == "client.authentication.k8s.io/v1beta1")
        #expect(object["kind"] == "ExecCredential")
        let (_, tokens) = try await setup.stored()
        let status = try #require(object["status"]?.objectValue)
        #expect(status["token"] == tokens.idToken.map(JSONValue.string), "the ID token, by default")
        let expiry = try #require(tokens.idTokenExpiresAt)
        #expect(status["expirationTimestamp"] == .string(expiry.formatted(.iso8601)), "the ID token's own expiry")
        #expect(result.stderr.contains("signed in as alice"), "\(result.stderr)")
        await setup.sandbox.stop()
    }

    // MARK: - git

    @Test func gitPushesAndClonesWithTheHelperAndReplacesARefusedToken() async throws {
        let setup = try await Setup.start()
        try await signIn(setup)
        let repositories = setup.directory.path + "/repositories"
        let git = "/usr/bin/git"
        var environment = setup.environment
        environment["GIT_AUTHOR_NAME"] = "Tester"
        environment["GIT_AUTHOR_EMAIL"] = "tester@example.test"
        environment["GIT_COMMITTER_NAME"] = "Tester"
        environment["GIT_COMMITTER_EMAIL"] = "tester@example.test"
        func gitRun(_ arguments: [String], in directory: String? = nil) async throws -> CommandResult {
            try await run(git, arguments, environment: environment, in: directory)
        }
        _ = try await gitRun(["init", "-q", "--bare", "-b", "main", repositories + "/project.git"])
        let (server, port) = try await startServer(
            ["git", setup.sandbox.url(.resource).absoluteString, repositories])
        let remote = "http://127.0.0.1:\(port)/project.git"

        // Without the helper, git has no credentials: refused.
        let work = setup.directory.path + "/work"
        _ = try await gitRun(["init", "-q", "-b", "main", work])
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: work + "/README"))
        _ = try await gitRun(["add", "README"], in: work)
        _ = try await gitRun(["commit", "-q", "-m", "first"], in: work)
        let anonymous = try await gitRun(["push", remote, "main"], in: work)
        #expect(anonymous.status != 0)

        // setup-git, twice: the second changes nothing.
        let setupArguments = ["setup-git", "--git-host", "http://127.0.0.1:\(port)"] + setup.connection
        let configured = try await run(cli, setupArguments, environment: environment)
        #expect(configured.status == 0, "\(configured.stderr)")
        #expect(configured.stdout.hasPrefix("Set credential.http://127.0.0.1:\(port).helper"), "\(configured.stdout)")
        let again = try await run(cli, setupArguments, environment: environment)
        #expect(again.stdout.contains("nothing changed"), "\(again.stdout)")
        let helpers = try await gitRun([
            "config", "--global", "--get-all", "credential.http://127.0.0.1:\(port).helper",
        ])
        #expect(helpers.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 3, "\(helpers.stdout)")

        let pushed = try await gitRun(["push", "-q", remote, "main"], in: work)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let clone = setup.directory.path + "/clone"
        let cloned = try await gitRun(["clone", "-q", remote, clone])
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(FileManager.default.contents(atPath: clone + "/README") == Data("hello\n".utf8))

        // The server stops accepting the access token: git's attempt fails and it tells the helper
        // (erase), which drops the token; the next git command gets a refreshed one.
        let (_, before) = try await setup.stored()
        setup.sandbox.revokeAccessTokens()
        setup.sandbox.resetCounts()
        let refused = try await gitRun(["fetch", "-q", remote], in: clone)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("refused the access token"), "\(refused.stderr)")
        #expect(try await setup.stored().1.expiresAt == Date(timeIntervalSince1970: 0))
        let fetched = try await gitRun(["fetch", "-q", remote], in: clone)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(setup.sandbox.grantCount(.refreshToken) == 1)
        let (_, after) = try await setup.stored()
        #expect(after.accessToken != before.accessToken)
        #expect(after.refreshToken != nil)

        server.stop()
        let log = await server.finish().stderr
        #expect(log.contains("POST /project.git/git-receive-pack 200 basic"), "\(log)")
        #expect(log.contains("401 basic"), "\(log)")
        await setup.sandbox.stop()
    }

    /// What git would send, typed by hand: answers for the configured host only, and bad input is
    /// an error on stderr with nothing on stdout and the store untouched.
    @Test func theGitHelperAnswersItsHostOnlyAndRefusesMalformedInput() async throws {
        let setup = try await Setup.start()
        try await signIn(setup)
        let helper = ["git-credential", "--git-host", "git.example.test"] + setup.connection + ["get"]
        let (_, tokens) = try await setup.stored()

        let answer = try await run(cli, helper, input: "protocol=https\nhost=git.example.test\n\n")
        #expect(answer.status == 0, "\(answer.stderr)")
        let lines = answer.stdout.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.prefix(4)) == [
                "protocol=https", "host=git.example.test", "username=oauth2", "password=\(tokens.accessToken)",
            ])
        #expect(lines.last?.hasPrefix("password_expiry_utc=") == true)

        for other in [
            "protocol=https\nhost=other.example.test\n", "protocol=http\nhost=git.example.test\n",
            "protocol=https\nhost=git.example.test\nusername=someone-else\n",
        ] {
            let result = try await run(cli, helper, input: other)
            #expect(result.status == 0 && result.stdout.isEmpty, "\(other): \(result.stdout)")
        }
        let unknown = try await run(cli, helper, input: "protocol=https\nhost=git.example.test\nfuture_key=1\n")
        #expect(unknown.status == 0 && unknown.stderr.contains("ignored what git sent as future_key"))

        let bigLine = setup.directory.path + "/big"
        try Data(("host=" + String(repeating: "a", count: 1 << 20) + "\n").utf8).write(
            to: URL(fileURLWithPath: bigLine))
        let shell = helper.map { "'\($0)'" }.joined(separator: " ")
        let big = try await run("/bin/sh", ["-c", "exec '\(cli)' \(shell) < '\(bigLine)'"])
        let malformed = [
            ("protocol=https\n", "names no protocol and host"),
            ("protocol=https\nhost\n", "line 2 is not key=value"),
            ("=x\nhost=git.example.test\n", "line 1 is not key=value"),
            ("pro tocol=https\n", "a key with characters"),
        ]
        var results = [(big, "more than 256 KiB")]
        for (input, _) in malformed { results.append((try await run(cli, helper, input: input), "")) }
        for ((result, _), expected) in zip(results, ["more than 256 KiB"] + malformed.map(\.1)) {
            #expect(result.status == 1, "\(expected): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(expected)")
            #expect(result.stderr.contains(expected), "\(result.stderr)")
        }
        #expect(try await setup.stored().1 == tokens)

        // Signed out, without a terminal: a clear error, nothing on stdout.
        _ = try await run(cli, ["logout", "--no-browser"] + setup.connection)
        let signedOut = try await run(cli, helper, input: "protocol=https\nhost=git.example.test\n")
        #expect(signedOut.status == 1 && signedOut.stdout.isEmpty)
        #expect(signedOut.stderr.contains("git runs this helper without a terminal"), "\(signedOut.stderr)")
        await setup.sandbox.stop()
    }

    // MARK: - Docker

    /// Docker's documented exchanges (docker/docker-credential-helpers), and `setup-docker`.
    @Test func theDockerHelperSpeaksDockersProtocol() async throws {
        let setup = try await Setup.start()
        try await signIn(setup)
        let helper = ["docker-credential", "--registry", "registry.example.test:5000"] + setup.connection
        let (_, tokens) = try await setup.stored()

        let got = try await run(cli, helper + ["get"], input: "https://registry.example.test:5000\n")
        #expect(got.status == 0, "\(got.stderr)")
        let object = try #require(try JSONValue.parse(Data(got.stdout.utf8)).objectValue)
        #expect(object["ServerURL"] == "https://registry.example.test:5000")
        #expect(object["Username"] == "oauth2accesstoken")
        #expect(object["Secret"] == .string(tokens.accessToken))

        let other = try await run(cli, helper + ["get"], input: "other.example.test")
        #expect(other.status == 1 && other.stdout == "credentials not found in native keychain\n")
        let listed = try await run(cli, helper + ["list"])
        #expect(listed.stdout == "{\"https://registry.example.test:5000\":\"oauth2accesstoken\"}\n", "\(listed.stdout)")
        let store = try await run(
            cli, helper + ["store"],
            input: #"{"ServerURL":"registry.example.test:5000","Username":"u","Secret":"a-password-from-docker-login"}"#
        )
        #expect(store.status == 1 && store.stdout.isEmpty && store.stderr.contains("does not store passwords"))
        for bad in ["", "one\ntwo", "{\"ServerURL\":"] {
            let result = try await run(cli, helper + [bad.hasPrefix("{") ? "store" : "get"], input: bad)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(bad): \(result.stdout)")
            #expect(result.stderr.hasPrefix("error: configuration_invalid: "), "\(result.stderr)")
        }
        let bigInput = setup.directory.path + "/big"
        try Data(String(repeating: "r", count: 1 << 20).utf8).write(to: URL(fileURLWithPath: bigInput))
        let shell = (helper + ["get"]).map { "'\($0)'" }.joined(separator: " ")
        let big = try await run("/bin/sh", ["-c", "exec '\(cli)' \(shell) < '\(bigInput)'"])
        #expect(big.status == 1 && big.stdout.isEmpty && big.stderr.contains("more than 64 KiB"), "\(big.stderr)")
        #expect(try await setup.stored().1 == tokens)

        // erase drops the access token; the next get refreshes.
        let erased = try await run(cli, helper + ["erase"], input: "registry.example.test:5000")
        #expect(erased.status == 0, "\(erased.stderr)")
        setup.sandbox.resetCounts()
        let fresh = try await run(cli, helper + ["get"], input: "registry.example.test:5000")
        #expect(fresh.status == 0 && setup.sandbox.grantCount(.refreshToken) == 1, "\(fresh.stderr)")
        #expect(!fresh.stdout.contains(tokens.accessToken))

        // setup-docker: a helper on the given PATH directory, and credHelpers beside what was there.
        let docker = setup.home + "/.docker"
        try FileManager.default.createDirectory(atPath: docker, withIntermediateDirectories: true)
        try Data(#"{"auths":{"other.example.test":{"auth":"dTpw"}}}"#.utf8).write(
            to: URL(fileURLWithPath: docker + "/config.json"))
        let bin = setup.directory.path + "/bin"
        let setupArguments = ["setup-docker", "--registry", "registry.example.test:5000", "--bin-dir", bin]
        let configured = try await run(cli, setupArguments + setup.connection, environment: setup.environment)
        #expect(configured.status == 0, "\(configured.stderr)")
        let name = "oidc-login-registry.example.test-5000"
        let config = try #require(
            try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: docker + "/config.json"))).objectValue)
        #expect(config["credHelpers"]?.objectValue?["registry.example.test:5000"] == .string(name))
        #expect(config["auths"]?.objectValue?["other.example.test"] != nil)
        let mode = try FileManager.default.attributesOfItem(atPath: docker + "/config.json")[.posixPermissions]
        #expect((mode as? Int).map { $0 & 0o077 } == 0)
        // Docker runs the helper by its name on PATH, with the action as its argument.
        let viaDocker = try await run(
            bin + "/docker-credential-" + name, ["get"], input: "registry.example.test:5000",
            environment: ["PATH": bin + ":/usr/bin:/bin"])
        #expect(viaDocker.status == 0, "\(viaDocker.stderr)")
        #expect(viaDocker.stdout.contains("\"Username\":\"oauth2accesstoken\""))
        let again = try await run(cli, setupArguments + setup.connection, environment: setup.environment)
        #expect(again.stdout.contains("nothing changed"), "\(again.stdout)")
        // A registry is never percent-decoded into the script: `%0a` was a shell line of its own.
        let injected = try await run(
            cli,
            ["setup-docker", "--registry", "evil.example.test%0atouch%20pwned", "--bin-dir", bin] + setup.connection,
            environment: setup.environment)
        #expect(injected.status != 0 && injected.stderr.contains("not a registry"), "\(injected.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: bin)
        #expect(written == ["docker-credential-" + name], "\(written)")
        await setup.sandbox.stop()
    }
}
