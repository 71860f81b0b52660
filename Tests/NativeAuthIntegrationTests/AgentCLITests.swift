import Foundation
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// `oidc-login agent` and the commands that borrow from it through `NATIVEAUTH_AGENT_SOCK`, on
/// this machine, against the sandbox on 127.0.0.1: DPoP-bound tokens with the agent's proofs, one
/// refresh for every caller, the policy's refusals and their audit lines, the confirmation, and
/// failing closed when the agent is gone. AgentSSHTests does the same through a real sshd.
@Suite(.testLogging) struct AgentCLITests {
    let cli = cliPath("oidc-login")
    let agentVariable = "NATIVEAUTH_AGENT_SOCK"

    /// A DPoP sign-in in a store of its own, the agent's.
    struct SignedIn {
        let sandbox: SandboxAuthorizationServer
        let directory: TemporaryDirectory
        let connection: [String]
        let store: FileTokenStore

        /// The options a borrower passes: the same issuer and client, and an empty store of its
        /// own, which must stay empty.
        var borrower: [String] {
            [
                "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
                "--store", directory.path + "/borrower",
            ]
        }

        func tokens() throws -> TokenSet {
            try #require(try store.keys().first.flatMap { try store.load($0) })
        }

        func expire() throws {
            let key = try #require(try store.keys().first)
            var tokens = try tokens()
            tokens.expiresAt = Date(timeIntervalSinceNow: -30)
            try store.save(tokens, for: key)
        }
    }

    func signIn(dpop: Bool = true) async throws -> SignedIn {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        if dpop { configuration.dpopSigningAlgorithms = ["ES256"] }
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        return SignedIn(
            sandbox: sandbox, directory: directory, connection: connection,
            store: FileTokenStore(directory: directory.path + "/store"))
    }

    /// Starts the agent and returns it with its socket's path (from its notice).
    func startAgent(_ signedIn: SignedIn, _ arguments: [String] = []) async throws -> (RunningCommand, String) {
        let agent = try RunningCommand(cli, ["agent"] + signedIn.connection + arguments)
        let serving = try await agent.line { $0.contains("serving ") }
        let path = try #require(serving.split(separator: " on ").last?.split(separator: ";").first.map(String.init))
        return (agent, path)
    }

    @Test func borrowersCallTheAPIWithTheAgentsTokensAndProofsAndOneRefresh() async throws {
        let signedIn = try await signIn()
        let (agent, socket) = try await startAgent(signedIn)
        let held = try signedIn.tokens()
        #expect(held.tokenType == "DPoP")
        let resource = signedIn.sandbox.url(.resource).absoluteString
        let environment = [agentVariable: socket]
        let agentVariable = agentVariable

        // The socket: 0600 in a 0700 directory.
        let attributes = try FileManager.default.attributesOfItem(atPath: socket)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let parent = try FileManager.default.attributesOfItem(atPath: (socket as NSString).deletingLastPathComponent)
        #expect((parent[.posixPermissions] as? Int) == 0o700)

        let first = try await run(cli, ["api", resource] + signedIn.borrower, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(signedIn.sandbox.dpopRefusals.isEmpty, "\(signedIn.sandbox.dpopRefusals)")
        #expect(try FileTokenStore(directory: signedIn.directory.path + "/borrower").keys().isEmpty)

        // Expired: eight borrowers at once, one refresh, by the agent.
        try signedIn.expire()
        signedIn.sandbox.resetCounts()
        let cli = cli
        let borrower = signedIn.borrower
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<8 {
                group.addTask { try await run(cli, ["api", resource] + borrower, environment: environment) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(signedIn.sandbox.refreshCount(subject: SandboxAuthorizationServer.User.alice.subject) == 1)
        #expect(signedIn.sandbox.requestCount(.resource) == 8)
        #expect(signedIn.sandbox.dpopRefusals.isEmpty, "\(signedIn.sandbox.dpopRefusals)")
        let refreshed = try signedIn.tokens()
        #expect(refreshed.dpopKey == held.dpopKey)

        // `token` hands out the access token; a proof for another program comes from the agent too.
        let header = try await run(cli, ["token", "--format", "header"] + signedIn.borrower, environment: environment)
        #expect(header.stdout == "DPoP \(refreshed.accessToken)\n", "\(header.stderr)")
        // Nothing borrowed can sign in, refresh or sign out here.
        let refresh = try await run(cli, ["refresh"] + signedIn.borrower, environment: environment)
        #expect(refresh.status == 1 && refresh.stderr.contains("borrows its tokens from a token agent"))

        // The agent stops: the borrowers fail closed, at once, saying so.
        agent.interrupt()
        let stopped = await agent.finish(closeInput: true)
        #expect(stopped.stdout == "\(agentVariable)=\(socket); export \(agentVariable);\n")
        #expect(!FileManager.default.fileExists(atPath: socket))
        let started = ContinuousClock.now
        let gone = try await run(cli, ["api", resource] + signedIn.borrower, environment: environment)
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("agent_unavailable"), "\(gone.stderr)")
        #expect(ContinuousClock.now - started < .seconds(20))
        // The audit: a line per request, with the peer's uid, never a token.
        #expect(stopped.stderr.contains("uid=\(getuid())") && stopped.stderr.contains("op=token"), "\(stopped.stderr)")
        for secret in [refreshed.accessToken, refreshed.refreshToken ?? "-"] {
            #expect(!stopped.stderr.contains(secret))
        }
        await signedIn.sandbox.stop()
    }

    @Test func thePolicyRefusesWhatItDoesNotNameAndTheOwnerMayRefuse() async throws {
        let signedIn = try await signIn(dpop: false)
        let resource = signedIn.sandbox.url(.resource).absoluteString

        // Tokens for another resource only: the sign-in's token and proofs for this API are refused.
        let (narrow, narrowSocket) = try await startAgent(
            signedIn, ["--allow-resource", "https://elsewhere.example.test/", "--resources-only"])
        let refused = try await run(
            cli, ["api", resource] + signedIn.borrower, environment: [agentVariable: narrowSocket])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("agent_refused"), "\(refused.stderr)")
        #expect(signedIn.sandbox.requestCount(.resource) == 0)
        narrow.interrupt()
        let narrowLog = await narrow.finish(closeInput: true).stderr
        #expect(narrowLog.contains("granted=false") && narrowLog.contains("op=token"), "\(narrowLog)")

        // The owner says no (a confirmation program that refuses), then yes.
        for (program, allowed) in [("/bin/false", false), ("/bin/true", true)] {
            let (agent, socket) = try await startAgent(signedIn, ["--confirm-command", program])
            let result = try await run(
                cli, ["api", resource] + signedIn.borrower, environment: [agentVariable: socket])
            #expect((result.status == 0) == allowed, "\(result.stderr)")
            if !allowed { #expect(result.stderr.contains("did not confirm"), "\(result.stderr)") }
            agent.interrupt()
            let log = await agent.finish(closeInput: true).stderr
            #expect(log.contains(allowed ? "granted=true" : "reason=not confirmed"), "\(log)")
        }

        // Another issuer configured on the borrowing side: the agent's account is not used for it.
        let (agent, socket) = try await startAgent(signedIn)
        let other = try await run(
            cli,
            ["api", resource, "--issuer", "https://other.example.test", "--client-id", "x"],
            environment: [agentVariable: socket])
        #expect(other.status == 1 && other.stderr.contains("no account signed in at"), "\(other.stderr)")
        // No issuer at all: an API is not found by its metadata through the agent, nor signed in to here.
        let unconfigured = try await run(
            cli, ["api", resource, "--store", signedIn.directory.path + "/borrower"],
            environment: [agentVariable: socket])
        #expect(unconfigured.status == 1, "\(unconfigured.stderr)")
        #expect(unconfigured.stderr.contains("NATIVEAUTH_AGENT_SOCK set"), "\(unconfigured.stderr)")
        // A socket in a directory others can write (/tmp) is refused.
        let shared = try await run(cli, ["agent", "--socket", "/tmp/nativeauth-test-agent.sock"] + signedIn.connection)
        #expect(shared.status == 1 && shared.stderr.contains("only you can write"), "\(shared.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/nativeauth-test-agent.sock"))
        agent.interrupt()
        _ = await agent.finish(closeInput: true)
        await signedIn.sandbox.stop()
    }

    /// `--confirm`: the agent asks on its terminal (a pseudo-terminal `script` gives it here), and
    /// what the person types there decides: `n` refuses, `y` hands the token out.
    @Test func theOwnerAnswersOnTheAgentsTerminal() async throws {
        let signedIn = try await signIn(dpop: false)
        let resource = signedIn.sandbox.url(.resource).absoluteString
        let directory = signedIn.directory.path + "/agent"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let socket = directory + "/agent.sock"
        let command = ([cli, "agent", "--socket", socket, "--confirm"] + signedIn.connection)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let terminal = try RunningCommand("/usr/bin/script", ["-qfec", command, "/dev/null"])
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: socket) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let environment = [agentVariable: socket]
        for (answer, allowed) in [("n", false), ("y", true)] {
            terminal.type(answer + "\n")
            let result = try await run(cli, ["api", resource] + signedIn.borrower, environment: environment)
            #expect((result.status == 0) == allowed, "\(answer): \(result.stderr)")
            if !allowed {
                #expect(result.stderr.contains("agent_refused") && result.stderr.contains("did not confirm"))
            }
        }
        #expect(signedIn.sandbox.requestCount(.resource) == 1)
        terminal.type("\u{3}")  // Ctrl-C on the agent's terminal
        let output = await terminal.finish(closeInput: true).stdout
        #expect(output.contains("Allow? uid \(getuid())"), "\(output)")
        #expect(output.contains("reason=not confirmed"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: socket), "Ctrl-C stops it and removes the socket")
        await signedIn.sandbox.stop()
    }
}
