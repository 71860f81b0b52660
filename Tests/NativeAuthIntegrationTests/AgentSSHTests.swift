import Crypto
import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// The token agent forwarded over a real OpenSSH connection: scripts/sshd starts a private sshd on
/// 127.0.0.1 with a second local user (`NATIVEAUTH_SSHD_DIR` names its directory; scripts/test.sh
/// runs this suite once, on its own). The agent runs here, as the laptop's user; `ssh -R` forwards
/// its socket into the other user's home; on that side, `oidc-login api`, `git credential fill`
/// and a crashing `oidc-login` work with what the agent hands out, and nothing that user can read
/// (files, its processes' environments and command lines, their memory, a core dump) holds the
/// refresh token or the DPoP key.
@Suite(.testLogging, .serialized, .enabled(if: SSHServer.directory != nil, "needs NATIVEAUTH_SSHD_DIR (scripts/sshd)"))
struct AgentSSHTests {
    let cli = cliPath("oidc-login")

    @Test func aForwardedAgentServesTheRemoteSideAndNothingThereHoldsTheSecrets() async throws {
        let ssh = try SSHServer.load()
        let tests = AgentCLITests()
        let signedIn = try await tests.signIn()
        let (agent, socket) = try await tests.startAgent(signedIn)
        let held = try signedIn.tokens()
        let refreshToken = try #require(held.refreshToken)
        let key = try #require(held.dpopKey)
        let keyBytes = try #require(
            key.storageJSON.objectValue?["key"]?.stringValue.flatMap { Base64URL.decode($0) })

        // ssh -R: the agent's socket, in the remote user's home (not a shared /tmp path another user
        // could take first); a stale socket is replaced, and the forwarding must succeed.
        let remoteSocket = ssh.home + "/.nativeauth-agent.sock"
        // `-f`: in the background once the forwarding is up (as a person would run it); a Foundation
        // child that stays an ssh client holds up the end of every later ssh child here.
        let forward = try await run(
            "/usr/bin/ssh",
            ssh.options + [
                "-f", "-N", "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes", "-R",
                "\(remoteSocket):\(socket)", ssh.destination,
            ])
        #expect(forward.status == 0, "\(forward.stderr)")
        defer {
            // SIGKILL: a child of the test runner starts with SIGTERM blocked (see RunningCommand.stop).
            for pid in SecretScan.processes(of: getuid()) where SecretScan.commandLineText(pid).contains(remoteSocket) {
                kill(pid, SIGKILL)
            }
        }
        try await waitFor("the forwarded socket") { FileManager.default.fileExists(atPath: remoteSocket) }
        let mode = try FileManager.default.attributesOfItem(atPath: remoteSocket)[.posixPermissions] as? Int
        #expect(mode == 0o600, "sshd's StreamLocalBindMask makes it the remote user's alone")

        let resource = signedIn.sandbox.url(.resource).absoluteString
        let configuration = [
            "--issuer", signedIn.sandbox.issuer.absoluteString, "--client-id",
            SandboxAuthorizationServer.Client.defaultID,
        ]
        func remote(_ script: String) async throws -> CommandResult {
            try await run(
                "/usr/bin/ssh",
                ssh.options + [ssh.destination, "export NATIVEAUTH_AGENT_SOCK=\(remoteSocket); \(script)"])
        }

        // The remote side's API call: the agent's token, with the agent's proofs.
        let apiCommand = ([cli, "api", resource] + configuration).map(shellQuoted).joined(separator: " ")
        let api = try await remote(apiCommand)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(signedIn.sandbox.requestCount(.resource) == 1)
        #expect(signedIn.sandbox.dpopRefusals.isEmpty, "\(signedIn.sandbox.dpopRefusals)")

        // git on the remote side asks the helper, which asks the agent.
        let helper =
            "!"
            + ([cli, "git-credential", "--git-host", "git.example.test"] + configuration)
            .map(shellQuoted).joined(separator: " ")
        // The password git gets is the agent's token: compared by its SHA-256, so that no output
        // of the test holds it (the redaction check reads them all).
        let fill = try await remote(
            "printf 'protocol=https\\nhost=git.example.test\\n\\n' | GIT_TERMINAL_PROMPT=0 git -c credential.helper="
                + shellQuoted(helper) + " credential fill | sed -n 's/^password=//p' | tr -d '\\n' | sha256sum")
        #expect(fill.status == 0, "\(fill.stderr)")
        let expected = SHA256.hash(data: Data(try signedIn.tokens().accessToken.utf8))
            .map { String(format: "%02x", $0) }.joined()
        #expect(fill.stdout.hasPrefix(expected), "\(fill.stdout) \(fill.stderr)")

        // After expiry, four remote and four local processes at once: one refresh, the agent's.
        try signedIn.expire()
        signedIn.sandbox.resetCounts()
        let cli = cli
        let borrower = signedIn.borrower
        async let remoteFour = remote(
            "for i in 1 2 3 4; do (\(apiCommand) >/dev/null && echo remote-ok) & done; wait")
        let localFour = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await run(cli, ["api", resource] + borrower, environment: ["NATIVEAUTH_AGENT_SOCK": socket])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let remoteResult = try await remoteFour
        #expect(localFour.allSatisfy { $0.status == 0 }, "\(localFour.map(\.stderr))")
        #expect(remoteResult.stdout.components(separatedBy: "remote-ok").count - 1 == 4, "\(remoteResult.stderr)")
        #expect(signedIn.sandbox.refreshCount(subject: SandboxAuthorizationServer.User.alice.subject) == 1)
        #expect(signedIn.sandbox.requestCount(.resource) == 8)
        let refreshed = try signedIn.tokens()
        let secrets = SecretScan.patterns(
            refreshTokens: [refreshToken, refreshed.refreshToken].compactMap { $0 }, keyBytes: keyBytes)

        // A remote process that has its token and proof, caught in the middle of its request (the
        // API answers only after 30 s): its memory, its environment and command line, then its core.
        signedIn.sandbox.failNext(1, .resource, with: .delay(.seconds(30)))
        let hanging = ([cli, "api", resource + "?slow"] + configuration).map(shellQuoted).joined(separator: " ")
        try? FileManager.default.removeItem(atPath: ssh.home + "/core")
        let user = try await SSHServer.uid(ssh.user)
        let crash = try RunningCommand(
            "/usr/bin/ssh",
            ssh.options + [
                ssh.destination,
                "export NATIVEAUTH_AGENT_SOCK=\(remoteSocket) SWIFT_BACKTRACE=enable=no; ulimit -c unlimited;"
                    + " cd ~ && exec \(hanging)",
            ])
        var pid: Int32?
        try await waitFor("the remote process") {
            pid = SecretScan.processes(of: user).first { SecretScan.commandLineText($0).contains("?slow") }
            return pid != nil
        }
        let caught = try #require(pid)
        // Asked the agent and sending: the API has the request and does not answer yet.
        try await Task.sleep(for: .seconds(2))
        var found = SecretScan.findings(inMemoryOf: caught, secrets)
        for process in SecretScan.processes(of: user) {
            found += SecretScan.findings(in: SecretScan.environment(process) + SecretScan.commandLine(process), secrets)
        }
        kill(caught, SIGSEGV)
        let crashed = await crash.finish(closeInput: true)
        #expect(crashed.status == 128 + SIGSEGV || crashed.status == 255, "\(crashed.status): \(crashed.stderr)")
        try await waitFor("the core dump") { FileManager.default.fileExists(atPath: ssh.home + "/core") }
        let core = try Data(contentsOf: URL(fileURLWithPath: ssh.home + "/core"))
        #expect(core.count > 1 << 20, "a core dump of the crashed process")
        // The access token it was sending with is there (a bearer token is the point of the
        // request); the refresh token and the key are not.
        #expect(core.range(of: Data(refreshed.accessToken.utf8)) != nil)
        found += SecretScan.findings(in: core, secrets)
        try? FileManager.default.removeItem(atPath: ssh.home + "/core")

        // Every file the remote user can read where anyone could have written one.
        for path in try await SecretScan.readableFiles(
            as: ssh.user, under: [ssh.home, "/tmp", "/var/tmp", "/dev/shm", NSTemporaryDirectory()])
        {
            guard let contents = FileManager.default.contents(atPath: path) else { continue }
            found += SecretScan.findings(in: contents, secrets).map { "\(path): \($0)" }
        }
        #expect(found.isEmpty, "\(found)")

        // The agent stops: the remote side fails closed, at once, saying so.
        agent.interrupt()
        _ = await agent.finish(closeInput: true)
        let gone = try await remote(apiCommand)
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("agent_unavailable"), "\(gone.stderr)")
        await signedIn.sandbox.stop()
    }

    private func waitFor(_ what: String, _ condition: () throws -> Bool) async throws {
        for _ in 0..<300 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }
}

/// `text` single-quoted for a POSIX shell.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// The sshd scripts/sshd started.
struct SSHServer {
    static var directory: String? {
        ProcessInfo.processInfo.environment["NATIVEAUTH_SSHD_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    }

    let port: String
    let user: String
    let home: String
    let key: String
    let knownHosts: String

    static func load() throws -> SSHServer {
        let directory = try #require(directory)
        let text = try String(contentsOfFile: directory + "/info", encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return SSHServer(
            port: try #require(values["port"]), user: try #require(values["user"]),
            home: try #require(values["home"]), key: try #require(values["key"]),
            knownHosts: try #require(values["known_hosts"]))
    }

    var destination: String { "\(user)@127.0.0.1" }

    var options: [String] {
        [
            "-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o",
            "UserKnownHostsFile=\(knownHosts)", "-o", "StrictHostKeyChecking=yes", "-p", port,
        ]
    }

    static func uid(_ user: String) async throws -> uid_t {
        let result = try await run("/usr/bin/id", ["-u", user])
        return try #require(uid_t(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}

/// Looks for a refresh token and a DPoP private key where another user could find them.
enum SecretScan {
    struct Pattern {
        var name: String
        var bytes: Data
    }

    /// The refresh tokens, and the key's bytes as they are and in base64url and base64.
    static func patterns(refreshTokens: [String], keyBytes: Data) -> [Pattern] {
        refreshTokens.map { Pattern(name: "a refresh token", bytes: Data($0.utf8)) } + [
            Pattern(name: "the DPoP key's bytes", bytes: keyBytes),
            Pattern(name: "the DPoP key in base64url", bytes: Data(Base64URL.encode(keyBytes).utf8)),
            Pattern(name: "the DPoP key in base64", bytes: Data(keyBytes.base64EncodedString().utf8)),
        ]
    }

    static func findings(in data: Data, _ patterns: [Pattern]) -> [String] {
        patterns.filter { data.range(of: $0.bytes) != nil }.map(\.name)
    }

    /// The processes of `uid`.
    static func processes(of uid: uid_t) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").contains {
                $0.hasPrefix("Uid:") && $0.split(separator: "\t").dropFirst().first == "\(uid)"
            }
        }
    }

    static func environment(_ pid: Int32) -> Data {
        FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
    }

    static func commandLine(_ pid: Int32) -> Data {
        FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
    }

    static func commandLineText(_ pid: Int32) -> String {
        String(decoding: commandLine(pid), as: UTF8.self)
    }

    /// What the process's readable memory holds of `patterns` (root reads another's memory).
    static func findings(inMemoryOf pid: Int32, _ patterns: [Pattern]) -> [String] {
        guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8),
            let memory = FileHandle(forReadingAtPath: "/proc/\(pid)/mem")
        else { return ["the memory of \(pid) could not be read"] }
        defer { try? memory.close() }
        var found: Set<String> = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[1].hasPrefix("r") else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2, range[1] > range[0], range[1] - range[0] < 1 << 30 else { continue }
            do {
                try memory.seek(toOffset: range[0])
                guard let region = try memory.read(upToCount: Int(range[1] - range[0])) else { continue }
                found.formUnion(findings(in: region, patterns))
            } catch {
                continue  // a guard page, or a mapping gone meanwhile
            }
        }
        return found.sorted().map { "the memory of the remote process: \($0)" }
    }

    /// The regular files under `directories` that `user` can read (found as that user).
    static func readableFiles(as user: String, under directories: [String]) async throws -> [String] {
        let result = try await run(
            "/usr/sbin/runuser",
            ["-u", user, "--", "/usr/bin/find"] + directories + [
                "-xdev", "-type", "f", "-readable", "-size", "-256M", "-print0",
            ])
        return Array(Set(result.stdout.split(separator: "\0").map(String.init)))
    }
}
