import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several accounts and named profiles through a sample CLI, against the sandbox's alice and bob.
@Suite(.testLogging) struct CLIAccountsTests {
    let cli = cliPath("oidc-login")

    /// A sandbox, a private store and configuration directory, and the options that name them.
    struct Setup {
        let sandbox: SandboxAuthorizationServer
        let directory: TemporaryDirectory
        var store: String { directory.path + "/store" }
        var connection: [String] {
            [
                "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
                "--scope", "openid profile email", "--store", store,
            ]
        }
        /// A private configuration directory (profiles), and the browser that approves at once.
        var environment: [String: String] {
            ["BROWSER": redirectFollowingBrowser, "XDG_CONFIG_HOME": directory.path + "/config"]
        }

        static func start() async throws -> Setup {
            let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
            return Setup(sandbox: sandbox, directory: try TemporaryDirectory())
        }
    }

    func signIn(_ setup: Setup, as user: String) async throws -> CommandResult {
        setup.sandbox.autoApprovedUser = user
        return try await run(cli, ["login"] + setup.connection, environment: setup.environment)
    }

    func statusJSON(
        _ setup: Setup, _ arguments: [String] = [], environment: [String: String] = [:], in cwd: String? = nil
    )
        async throws -> JSONObject
    {
        let result = try await run(
            cli, ["status", "--json"] + arguments + setup.connection,
            environment: setup.environment.merging(environment) { $1 }, in: cwd)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONValue.parse(Data(result.stdout.utf8)).objectValue)
    }

    @Test func signInAsBothListSwitchActOnOneAndSignOut() async throws {
        let setup = try await Setup.start()
        let alice = try await signIn(setup, as: "alice")
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(alice.stdout == "Signed in as alice\n")
        let bob = try await signIn(setup, as: "bob")
        #expect(bob.status == 0, "\(bob.stderr)")
        #expect(bob.stderr.contains("the active account is still alice"), "\(bob.stderr)")

        let all = try await statusJSON(setup, ["--all"])
        let accounts = try #require(all["accounts"]?.arrayValue).compactMap(\.objectValue)
        #expect(accounts.map { $0["name"] } == ["alice", "bob"])
        #expect(accounts.map { $0["active"] } == [true, false])
        #expect(accounts.map { $0["subject"] } == ["sandbox-user-alice", "sandbox-user-bob"])
        let text = try await run(cli, ["status", "--all"] + setup.connection, environment: setup.environment)
        #expect(text.stdout.hasPrefix("* alice: access token expires "), "\(text.stdout)")
        #expect(text.stdout.contains("\n  bob: access token expires "), "\(text.stdout)")

        // --account acts on bob; the active account stays alice.
        let bobToken = try await run(cli, ["token", "--account", "bob"] + setup.connection)
        let aliceToken = try await run(cli, ["token"] + setup.connection)
        #expect(bobToken.status == 0 && aliceToken.status == 0)
        #expect(bobToken.stdout != aliceToken.stdout)
        let bobInfo = try await run(cli, ["userinfo", "--json", "--account", "bob"] + setup.connection)
        #expect(bobInfo.stdout.contains("\"sub\":\"sandbox-user-bob\""), "\(bobInfo.stdout)")
        #expect(try await statusJSON(setup)["account"] == "alice")

        let switched = try await run(cli, ["switch", "bob"] + setup.connection)
        #expect(switched.stdout == "Active account: bob\n", "\(switched.stderr)")
        let now = try await statusJSON(setup)
        #expect(now["account"] == "bob" && now["account_source"] == "the active account")
        #expect(now["subject"] == "sandbox-user-bob")
        let unknown = try await run(cli, ["switch", "carol"] + setup.connection)
        #expect(unknown.status == 1 && unknown.stderr.contains("alice, bob"), "\(unknown.stderr)")
        let missing = try await run(cli, ["token", "--account", "carol"] + setup.connection)
        #expect(missing.status == 1 && missing.stderr.contains("no account named \"carol\""), "\(missing.stderr)")

        let logoutAlice = try await run(
            cli, ["logout", "--no-browser", "--account", "alice"] + setup.connection)
        #expect(logoutAlice.status == 0, "\(logoutAlice.stderr)")
        let left = try await statusJSON(setup, ["--all"])
        #expect(try #require(left["accounts"]?.arrayValue).compactMap { $0.objectValue?["name"] } == ["bob"])
        #expect(try await run(cli, ["token"] + setup.connection).stdout == bobToken.stdout)

        _ = try await signIn(setup, as: "alice")
        let everyone = try await run(cli, ["logout", "--all"] + setup.connection)
        #expect(everyone.status == 0, "\(everyone.stderr)")
        #expect(everyone.stdout == "Signed out alice\nSigned out bob\n")
        #expect(try FileTokenStore(directory: setup.store).keys().isEmpty)
        let none = try await statusJSON(setup)
        #expect(none["signed_in"] == false)
        await setup.sandbox.stop()
    }

    /// Two processes refreshing two accounts at the same moment: each account refreshes once, and
    /// each keeps its own person's tokens.
    @Test func aConcurrentPairOfAccountsRefreshesEachOnce() async throws {
        let setup = try await Setup.start()
        _ = try await signIn(setup, as: "alice")
        _ = try await signIn(setup, as: "bob")
        setup.sandbox.resetCounts()
        let cli = cli
        let connection = setup.connection
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for account in ["alice", "bob"] {
                group.addTask { try await run(cli, ["refresh", "--account", account] + connection) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(setup.sandbox.refreshCount(subject: "sandbox-user-alice") == 1)
        #expect(setup.sandbox.refreshCount(subject: "sandbox-user-bob") == 1)
        for (account, subject) in [("alice", "sandbox-user-alice"), ("bob", "sandbox-user-bob")] {
            let info = try await run(cli, ["userinfo", "--json", "--account", account] + connection)
            #expect(info.stdout.contains("\"sub\":\"\(subject)\""), "\(info.stdout) \(info.stderr)")
        }
        #expect(try await statusJSON(setup)["account"] == "alice", "the active account did not change")
        await setup.sandbox.stop()
    }

    /// flag > NATIVEAUTH_ACCOUNT > .nativeauth.json > the active account, and `status` says which.
    @Test func theAccountChoiceHasAPrecedenceAndASource() async throws {
        let setup = try await Setup.start()
        for user in ["alice", "bob", "alice"] { _ = try await signIn(setup, as: user) }
        setup.sandbox.autoApprovedUser = "bob"
        // A third account, named by the person.
        let work = try await run(
            cli, ["login", "--account", "work"] + setup.connection, environment: setup.environment)
        #expect(work.stdout == "Signed in as bob (account work)\n", "\(work.stderr)")
        let project = setup.directory.path + "/project/src"
        try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
        let choice = setup.directory.path + "/project/.nativeauth.json"
        try #"{"account": "bob"}"#.write(toFile: choice, atomically: true, encoding: .utf8)

        let active = try await statusJSON(setup)
        #expect(active["account"] == "alice" && active["account_source"] == "the active account")
        let directory = try await statusJSON(setup, in: project)
        #expect(directory["account"] == "bob" && directory["account_source"] == .string(choice))
        let variable = try await statusJSON(setup, environment: ["NATIVEAUTH_ACCOUNT": "work"], in: project)
        #expect(variable["account"] == "work" && variable["account_source"] == "NATIVEAUTH_ACCOUNT")
        let flag = try await statusJSON(
            setup, ["--account", "alice"], environment: ["NATIVEAUTH_ACCOUNT": "work"], in: project)
        #expect(flag["account"] == "alice" && flag["account_source"] == "--account")
        let text = try await run(cli, ["status"] + setup.connection, environment: setup.environment, in: project)
        #expect(text.stdout.contains("Account: bob (from \(choice))"), "\(text.stdout)")
        // The helpers another program runs in a repository carry --ignore-directory-file (review I9).
        let helper = try await statusJSON(setup, ["--ignore-directory-file"], in: project)
        #expect(helper["account"] == "alice" && helper["account_source"] == "the active account")

        // A directory file names; it never configures.
        try #"{"account": "bob", "issuer": "https://evil.example"}"#.write(
            toFile: choice, atomically: true, encoding: .utf8)
        let refused = try await run(cli, ["token"] + setup.connection, environment: setup.environment, in: project)
        #expect(refused.status == 1 && refused.stderr.contains("may name only"), "\(refused.stderr)")

        // Only a file the person could have written picks the account (review L3): another user's
        // is refused (it would pick which account a helper uses there), and a FIFO no longer blocks.
        try #"{"account": "bob"}"#.write(toFile: choice, atomically: true, encoding: .utf8)
        if getuid() == 0 {
            #expect(chown(choice, 65534, 65534) == 0)
            let foreign = try await run(
                cli, ["status"] + setup.connection, environment: setup.environment, in: project)
            #expect(foreign.status == 1 && foreign.stderr.contains("belongs to another user"), "\(foreign.stderr)")
        }
        #expect(unlink(choice) == 0 && mkfifo(choice, 0o600) == 0)
        let fifo = try await run(cli, ["status"] + setup.connection, environment: setup.environment, in: project)
        #expect(fifo.status == 1 && fifo.stderr.contains("not a regular file"), "\(fifo.stderr)")
        await setup.sandbox.stop()
    }

    @Test func profilesAreAddedUsedShownAndRemoved() async throws {
        let setup = try await Setup.start()
        let secret = "profile-client-secret-5b1c"
        let client = ["--client-id", SandboxAuthorizationServer.Client.defaultID]
        let add = try await run(
            cli,
            ["profile", "add", "sandbox", "--issuer", setup.sandbox.issuer.absoluteString, "--scope", "openid profile"]
                + client + ["--store", setup.store, "--client-secret", secret],
            environment: setup.environment)
        #expect(add.status == 0, "\(add.stderr)")
        let path = setup.directory.path + "/config/nativeauth/config.json"
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o777 } == 0o600)

        let show = try await run(cli, ["profile", "show", "sandbox"], environment: setup.environment)
        #expect(show.stdout.contains("client_secret: (set, not shown)") && !show.stdout.contains(secret))
        let list = try await run(cli, ["profile", "list"], environment: setup.environment)
        #expect(list.stdout.hasPrefix("sandbox  issuer=\(setup.sandbox.issuer.absoluteString)"), "\(list.stdout)")
        let again = try await run(
            cli, ["profile", "add", "sandbox", "--issuer", "https://x"], environment: setup.environment)
        #expect(again.status == 1 && again.stderr.contains("--replace"))

        // The profile replaces the long flags; the sandbox's public client ignores the secret.
        let login = try await run(cli, ["login", "--profile", "sandbox"], environment: setup.environment)
        #expect(login.status == 0, "\(login.stderr)")
        let viaVariable = try await run(
            cli, ["status"], environment: setup.environment.merging(["NATIVEAUTH_PROFILE": "sandbox"]) { $1 })
        #expect(viaVariable.stdout.contains("Signed in as alice"), "\(viaVariable.stderr)")
        #expect(viaVariable.stdout.contains("Profile: sandbox (from NATIVEAUTH_PROFILE)"))
        // A directory names the profile for everything under it.
        let project = setup.directory.path + "/project"
        try FileManager.default.createDirectory(atPath: project + "/deep", withIntermediateDirectories: true)
        try #"{"profile": "sandbox"}"#.write(toFile: project + "/.nativeauth.json", atomically: true, encoding: .utf8)
        let viaDirectory = try await run(cli, ["status"], environment: setup.environment, in: project + "/deep")
        #expect(viaDirectory.stdout.contains("Signed in as alice"), "\(viaDirectory.stderr)")
        #expect(viaDirectory.stdout.contains("Profile: sandbox (from \(project)/.nativeauth.json)"))
        // A flag still wins over the profile: another store is empty.
        let flagWins = try await run(
            cli, ["status", "--profile", "sandbox", "--store", setup.directory.path + "/other"],
            environment: setup.environment)
        #expect(flagWins.stdout.hasPrefix("Not signed in."), "\(flagWins.stdout)")

        // Readable by others while it holds a secret: refused, with the fix.
        #expect(chmod(path, 0o644) == 0)
        let open = try await run(cli, ["status", "--profile", "sandbox"], environment: setup.environment)
        #expect(open.status == 1 && open.stderr.contains("chmod 600 '\(path)'"), "\(open.stderr)")
        #expect(chmod(path, 0o600) == 0)

        let remove = try await run(cli, ["profile", "remove", "sandbox"], environment: setup.environment)
        #expect(remove.status == 0, "\(remove.stderr)")
        let gone = try await run(cli, ["status", "--profile", "sandbox"], environment: setup.environment)
        #expect(gone.status == 1 && gone.stderr.contains("no profile named \"sandbox\""), "\(gone.stderr)")
        await setup.sandbox.stop()
    }

    /// A sign-in stored before accounts had names (no key in the file, account "default") still
    /// works without --account, and is listed once a refresh saved it again.
    @Test func aSignInFromBeforeAccountsStillWorks() async throws {
        let setup = try await Setup.start()
        _ = try await signIn(setup, as: "alice")
        let store = FileTokenStore(directory: setup.store)
        let named = TokenKey(
            issuer: setup.sandbox.issuer.absoluteString, clientID: SandboxAuthorizationServer.Client.defaultID,
            account: "alice")
        let tokens = try #require(try store.load(named))
        try store.remove(named)
        let legacy = TokenKey(issuer: named.issuer, clientID: named.clientID)
        #expect(
            FileManager.default.createFile(
                atPath: store.path(for: legacy), contents: Data(try tokens.storageJSON.encoded()),
                attributes: [.posixPermissions: 0o600]))
        let pointer = FileActiveAccountStore(directory: setup.store)
        try pointer.setActiveAccount(nil, issuer: named.issuer, clientID: named.clientID)
        #expect(try store.keys().isEmpty)

        let token = try await run(cli, ["token"] + setup.connection)
        #expect(token.stdout == tokens.accessToken + "\n", "\(token.stderr)")
        let refresh = try await run(cli, ["refresh"] + setup.connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(try store.keys() == [legacy])
        await setup.sandbox.stop()
    }
}
