import Foundation
import NativeAuth
import NativeAuthKeyring
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The sample CLIs with `--token-storage`, against real keyring daemons and the sandbox: the suite's
/// daemon (its bus is this process's session bus, so the test can read what the CLIs stored), or
/// a daemon of the test's own when it locks, stops or kills it.
@Suite(.testLogging, .enabled(if: KeyringDaemon.enabled), .timeLimit(.minutes(3))) struct KeyringCLITests {
    let cli = cliPath("oidc-login")

    /// A private HOME, state, config, runtime and temporary directory for the commands.
    final class Home: Sendable {
        let root: TemporaryDirectory
        init() throws {
            root = try TemporaryDirectory()
            for name in ["home", "state", "config", "runtime", "tmp"] {
                try FileManager.default.createDirectory(
                    atPath: root.path + "/" + name, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            }
        }
        var fileStore: String { root.path + "/state/nativeauth" }
        var lockDirectory: String { root.path + "/runtime/nativeauth" }
        func environment(bus: String?) -> [String: String] {
            var environment = [
                "HOME": root.path + "/home", "XDG_STATE_HOME": root.path + "/state",
                "XDG_CONFIG_HOME": root.path + "/config", "XDG_RUNTIME_DIR": root.path + "/runtime",
                "TMPDIR": root.path + "/tmp", "BROWSER": redirectFollowingBrowser,
            ]
            if let bus { environment["DBUS_SESSION_BUS_ADDRESS"] = bus }
            return environment
        }
        /// Every regular file below the root.
        func files() -> [String] {
            let enumerator = FileManager.default.enumerator(atPath: root.path)
            var files: [String] = []
            while let name = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                let path = root.path + "/" + name
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files.append(path)
                }
            }
            return files
        }
    }

    func connection(_ sandbox: SandboxAuthorizationServer) -> [String] {
        ["--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID]
    }

    func key(_ sandbox: SandboxAuthorizationServer) -> TokenKey {
        // The account is named after who signed in: with the openid scope alone, alice's subject.
        TokenKey(
            issuer: sandbox.issuer.absoluteString, clientID: SandboxAuthorizationServer.Client.defaultID,
            account: "sandbox-user-alice")
    }

    /// The suite daemon's store as the CLIs in `home` see it.
    func suiteStore(_ home: Home) -> SecretServiceTokenStore {
        SecretServiceTokenStore(lockDirectory: home.lockDirectory)
    }

    func provider(_ sandbox: SandboxAuthorizationServer) throws -> GenericOIDCProvider {
        try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                provider: "oidc", issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID))
    }

    @Test(.enabled(if: SuiteKeyring.isReady)) func eightProcessesShareOneRefreshThroughTheKeyring() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let home = try Home()
        let environment = home.environment(bus: SuiteKeyring.environment["DBUS_SESSION_BUS_ADDRESS"])
        let login = try await run(
            cli, ["login", "--token-storage", "keyring"] + connection(sandbox), environment: environment)
        #expect(login.status == 0, "\(login.stderr)")
        // The keyring answered: nothing to announce about storage (the sandbox's plain HTTP is said).
        let notices = login.stderr.split(separator: "\n").filter {
            $0.hasPrefix("notice:") && !$0.contains("plain HTTP")
        }
        #expect(notices.isEmpty, "\(login.stderr)")
        let store = suiteStore(home)
        let auth = Authenticator(
            provider: try provider(sandbox), store: store, transport: sandbox.transport, account: key(sandbox).account)
        let before = try #require(try await auth.currentTokens())
        try await auth.expireAccessToken()

        let arguments = ["token", "--token-storage", "keyring"] + connection(sandbox)
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<8 { group.addTask { try await run(cli, arguments, environment: environment) } }
            return try await group.reduce(into: [CommandResult]()) { $0.append($1) }
        }
        #expect(sandbox.grantCount(.refreshToken) == 1, "exactly one refresh request reached the server")
        let stored = try #require(try await store.load(key(sandbox)))
        for result in results {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("invalid_grant"))
            #expect(result.stdout == stored.accessToken + "\n")
        }
        #expect(stored.refreshToken != before.refreshToken, "one rotation")
        try await store.remove(key(sandbox))
        await sandbox.stop()
    }

    /// Two accounts in the keyring: listed, each an item of its own that `secret-tool` finds by
    /// its account attribute, and `logout --all` removes both.
    @Test(.enabled(if: SuiteKeyring.isReady)) func twoAccountsAreTwoItemsInTheKeyring() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let home = try Home()
        let environment = home.environment(bus: SuiteKeyring.environment["DBUS_SESSION_BUS_ADDRESS"])
        let arguments = ["--token-storage", "keyring", "--scope", "openid profile"] + connection(sandbox)
        for user in ["alice", "bob"] {
            sandbox.autoApprovedUser = user
            let login = try await run(cli, ["login"] + arguments, environment: environment)
            #expect(login.stdout == "Signed in as \(user)\n", "\(login.stderr)")
        }
        let all = try await run(cli, ["status", "--all"] + arguments, environment: environment)
        #expect(all.stdout.hasPrefix("* alice: ") && all.stdout.contains("\n  bob: "), "\(all.stdout)")
        #expect(all.stdout.contains("Storage: keyring"), "\(all.stdout)")
        let bob = try await run(cli, ["token", "--account", "bob"] + arguments, environment: environment)
        let item = await KeyringDaemon.lookUp(
            ["application": "nativeauth", "issuer": sandbox.issuer.absoluteString, "account": "bob"],
            environment: SuiteKeyring.environment)
        #expect(
            !bob.stdout.isEmpty && item.contains(bob.stdout.trimmingCharacters(in: .newlines)),
            "secret-tool finds bob's item")
        let logout = try await run(cli, ["logout", "--all"] + arguments, environment: environment)
        #expect(logout.stdout == "Signed out alice\nSigned out bob\n", "\(logout.stderr)")
        #expect(try await suiteStore(home).keys().filter { $0.issuer == sandbox.issuer.absoluteString }.isEmpty)
        await sandbox.stop()
    }

    /// With the keyring, no token is ever written to a file: not in the state, config, runtime or
    /// temporary directory, through login, refresh and logout.
    @Test(.enabled(if: SuiteKeyring.isReady)) func noTokenReachesAFileInKeyringMode() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let home = try Home()
        let environment = home.environment(bus: SuiteKeyring.environment["DBUS_SESSION_BUS_ADDRESS"])
        let store = suiteStore(home)
        var issued: Set<String> = []
        func collect() async throws {
            let tokens = try #require(try await store.load(key(sandbox)))
            issued.formUnion([tokens.accessToken, tokens.refreshToken, tokens.idToken].compactMap { $0 })
        }
        let arguments = ["--token-storage", "keyring"] + connection(sandbox)
        #expect(try await run(cli, ["login"] + arguments, environment: environment).status == 0)
        try await collect()
        #expect(try await run(cli, ["refresh"] + arguments, environment: environment).status == 0)
        try await collect()
        let status = try await run(cli, ["status"] + arguments, environment: environment)
        #expect(status.stdout.contains(#"Storage: keyring (Secret Service, collection "Login")"#))
        #expect(try await run(cli, ["logout", "--no-browser"] + arguments, environment: environment).status == 0)
        #expect(try await store.load(key(sandbox)) == nil)
        #expect(issued.count >= 5, "two access tokens, two refresh tokens and ID tokens")

        let files = home.files()
        #expect(!files.isEmpty, "the lock files at least")
        for path in files {
            let contents = String(
                decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
            for token in issued { #expect(!contents.contains(token), "a token in \(path)") }
        }
        await sandbox.stop()
    }

    /// Tokens kept in a file before the keyring was chosen move in (announced once); `logout`
    /// removes the sign-in from every store, whichever storage it is run with.
    @Test(.enabled(if: SuiteKeyring.isReady)) func fileTokensMoveIntoTheKeyringAndLogoutRemovesBoth() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let home = try Home()
        let environment = home.environment(bus: SuiteKeyring.environment["DBUS_SESSION_BUS_ADDRESS"])
        let files = FileTokenStore(directory: home.fileStore)
        let store = suiteStore(home)
        let key = key(sandbox)

        let fileLogin = try await run(
            cli, ["login", "--token-storage", "file"] + connection(sandbox), environment: environment)
        #expect(fileLogin.status == 0, "\(fileLogin.stderr)")
        let inFile = try #require(try files.load(key))

        let status = try await run(
            cli, ["status", "--token-storage", "keyring"] + connection(sandbox), environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.stderr.contains("notice: moved the tokens of sandbox-user-alice@\(sandbox.issuer.absoluteString)"))
        #expect(status.stdout.contains("Signed in as"))
        #expect(try files.load(key) == nil, "the file is gone")
        #expect(try await store.load(key) == inFile)
        let again = try await run(
            cli, ["status", "--token-storage", "keyring"] + connection(sandbox), environment: environment)
        #expect(!again.stderr.contains("notice:"), "announced once")

        // Signed in in both (a later run with files): logout with the keyring removes both.
        #expect(
            try await run(cli, ["login", "--token-storage", "file"] + connection(sandbox), environment: environment)
                .status == 0)
        #expect(try files.load(key) != nil)
        let logout = try await run(
            cli, ["logout", "--no-browser", "--token-storage", "keyring"] + connection(sandbox),
            environment: environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try files.load(key) == nil)
        #expect(try await store.load(key) == nil)

        // And logout with files removes the keyring's copy too.
        #expect(
            try await run(cli, ["login", "--token-storage", "keyring"] + connection(sandbox), environment: environment)
                .status == 0)
        #expect(try await store.load(key) != nil)
        let fileLogout = try await run(
            cli, ["logout", "--no-browser", "--token-storage", "file"] + connection(sandbox), environment: environment)
        #expect(fileLogout.status == 0, "\(fileLogout.stderr)")
        #expect(try await store.load(key) == nil)
        await sandbox.stop()
    }

    /// A locked collection and a daemon that stopped answering: a clear error within the timeout,
    /// never a hang and never a prompt; nothing is lost.
    @Test func aLockedOrSilentKeyringIsAClearErrorInBoundedTime() async throws {
        let daemon = try await KeyringDaemon.start()
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let home = try Home()
        let environment = home.environment(bus: daemon.address)
        let arguments = ["--token-storage", "keyring"] + connection(sandbox)
        #expect(try await run(cli, ["login"] + arguments, environment: environment).status == 0)

        try await daemon.lock()
        for command in [["token"], ["status"], ["logout", "--no-browser"]] {
            let locked = try await run(cli, command + arguments, environment: environment)
            #expect(locked.status == 1, "\(command)")
            #expect(
                locked.stderr.contains(
                    "error: token_store_failed: the login keyring is locked: unlock it, or use --token-storage file"),
                "\(command): \(locked.stderr)")
        }
        try await daemon.restart()
        let unlocked = try await run(cli, ["status"] + arguments, environment: environment)
        #expect(unlocked.stdout.contains("Signed in as"), "the locked logout removed nothing: \(unlocked.stderr)")

        // A daemon that takes the name and never answers (stopped): `keyring` gives up after its
        // timeout; `auto` falls back to files.
        let pid = try daemon.keyringPID()
        #expect(Glibc.kill(pid, SIGSTOP) == 0)
        defer { Glibc.kill(pid, SIGCONT) }
        let silent = try await run(cli, ["status"] + arguments, environment: environment)
        #expect(silent.status == 1)
        #expect(silent.stderr.contains("the Secret Service did not answer within 3 s"), "\(silent.stderr)")
        let auto = try await run(cli, ["status"] + connection(sandbox), environment: environment)
        #expect(auto.status == 0)
        #expect(auto.stdout.contains("Storage: file (\(home.fileStore))"))
        Glibc.kill(pid, SIGCONT)
        try await daemon.stop()
        await sandbox.stop()
    }

    /// No Secret Service on the bus, or no bus at all: `auto` keeps tokens in files and says so once
    /// at login; `keyring` fails closed; `none` keeps nothing on disk.
    @Test func withoutAKeyringAutoFallsBackKeyringFailsAndNoneKeepsNothing() async throws {
        let bus = try await KeyringDaemon.start(secretService: false)
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        for address in [bus.address, nil] {
            let home = try Home()
            let environment = home.environment(bus: address)
            let login = try await run(cli, ["login"] + connection(sandbox), environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(
                login.stderr.contains(
                    "notice: tokens are kept in files under \(home.fileStore) (mode 0600), not in a keyring"),
                "\(login.stderr)")
            #expect(login.stderr.contains("Choose with --token-storage keyring|file|none"))
            let status = try await run(cli, ["status", "--json"] + connection(sandbox), environment: environment)
            #expect(
                status.stdout.contains(#""storage":{"backend":"file","location":"\#(home.fileStore)"}"#),
                "\(status.stdout)")
            #expect(!status.stderr.contains("notice:"), "the notice is for commands that store tokens")

            let keyring = try await run(
                cli, ["status", "--token-storage", "keyring"] + connection(sandbox), environment: environment)
            #expect(keyring.status == 1)
            #expect(keyring.stderr.contains("error: token_store_failed: no Secret Service answered on the session bus"))
            #expect(keyring.stderr.contains("hint: start a keyring daemon"))
        }

        let home = try Home()
        let environment = home.environment(bus: nil)
        let memory = try await run(
            cli, ["login", "--token-storage", "none"] + connection(sandbox), environment: environment)
        #expect(memory.status == 0, "\(memory.stderr)")
        #expect(memory.stderr.contains("notice: --token-storage none: the tokens are kept in memory only"))
        #expect(home.files().isEmpty, "nothing on disk: \(home.files())")
        let status = try await run(
            cli, ["status", "--token-storage", "none"] + connection(sandbox), environment: environment)
        #expect(status.stdout.contains("Not signed in."))
        #expect(status.stdout.contains("Storage: memory"))
        try await bus.stop()
        await sandbox.stop()
    }

    /// The daemon killed in the middle of saves: the writer gets a clear error, and after a
    /// restart the keyring holds the last set saved or the one being saved, never a mixture.
    @Test func aKeyringKilledMidSaveKeepsTheOldSetOrTheNew() async throws {
        let daemon = try await KeyringDaemon.start()
        let home = try Home()
        let environment = home.environment(bus: daemon.address)
        let writerPath = cliPath("TokenStoreCrashWriter")
        for round in 0..<3 {
            let writer = try RunningCommand(
                writerPath, ["--keyring", home.lockDirectory, String(round * 1_000_000)], environment: environment)
            _ = try await writer.line(where: { $0 == "saved" })
            try await Task.sleep(for: .milliseconds(50 + 70 * round))
            try await daemon.kill()
            let result = await writer.finish(closeInput: true)
            #expect(result.status == 1)
            let failed = try #require(
                result.stderr.split(separator: "\n").first { $0.hasPrefix("save failed at generation ") })
            #expect(failed.contains("Secret Service"), "a clear error: \(failed)")
            let generation = try #require(
                Int(failed.dropFirst("save failed at generation ".count).prefix { $0.isNumber }))
            try await daemon.restart()
            let read = try await run(writerPath, ["--keyring-read", home.lockDirectory], environment: environment)
            #expect(read.status == 0, "\(read.stderr)")
            let stored = try #require(Int(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(stored == generation - 1 || stored == generation, "stored \(stored), failed at \(generation)")
        }
        try await daemon.stop()
    }

    /// `--token-storage` wins over `NATIVEAUTH_TOKEN_STORAGE`, which wins over `token_storage` in the
    /// configuration file; `--store DIR` alone means files there; an unknown value is refused.
    @Test func theStorageComesFromTheFlagTheEnvironmentOrTheConfigFile() async throws {
        let home = try Home()
        let environment = home.environment(bus: nil)
        let config = home.root.path + "/config/tool.json"
        try #"{"token_storage": "file"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let status = ["status", "--issuer", "https://id.example.com", "--client-id", "c"]
        func storage(_ arguments: [String], _ extra: [String: String] = [:]) async throws -> String {
            let result = try await run(cli, status + arguments, environment: environment.merging(extra) { $1 })
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").first { $0.hasPrefix("Storage: ") }.map(String.init) ?? ""
        }
        #expect(try await storage(["--config", config]) == "Storage: file (\(home.fileStore))")
        let none = ["NATIVEAUTH_TOKEN_STORAGE": "none"]
        #expect(try await storage(["--config", config], none).hasPrefix("Storage: memory"))
        #expect(try await storage(["--config", config, "--token-storage", "none"]).hasPrefix("Storage: memory"))
        #expect(
            try await storage(["--store", home.root.path + "/elsewhere"])
                == "Storage: file (\(home.root.path)/elsewhere)")
        let unknown = try await run(cli, status + ["--token-storage", "vault"], environment: environment)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown token storage 'vault'"), "\(unknown.stderr)")
    }
}
