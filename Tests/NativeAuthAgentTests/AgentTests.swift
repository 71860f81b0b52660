import Foundation
import HTTPTypes
import LenientJSON
import Logging
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

@testable import NativeAuthAgent

#if canImport(Glibc)
    import Glibc
#endif

/// The token agent on a real Unix socket, against the in-process sandbox: tokens and DPoP proofs
/// go out, the refresh token and the key never do; callers share one refresh; a gone agent fails
/// closed; the policy refuses and every request leaves an audit line.
@Suite(.testLogging) struct AgentTests {
    /// An audit log: each line's metadata, as `key=value` pairs.
    final class AuditLog: Sendable {
        let lines = Shared<[Logger.Metadata]>([])

        var logger: Logger {
            Logger(label: "agent-test") { _ in Handler(log: self) }
        }

        struct Handler: LogHandler {
            let log: AuditLog
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .info
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                log.lines.update { $0.append(event.metadata ?? [:]) }
            }
        }

        func count(op: String, granted: Bool) -> Int {
            lines.value.filter { $0["op"] == "\(op)" && $0["granted"] == "\(granted)" }.count
        }
    }

    struct Running {
        let sandbox: SandboxAuthorizationServer
        let auth: Authenticator
        let server: AgentServer
        let task: Task<Void, any Error>
        let directory: TemporaryDirectory
        let audit: AuditLog

        var client: AgentClient { AgentClient(socket: server.socket, timeout: .seconds(10)) }

        func stop() async {
            await server.stop()
            _ = try? await task.value
            await sandbox.stop()
        }
    }

    func start(policy: AgentPolicy = AgentPolicy(), dpop: Bool = true) async throws -> Running {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        if dpop { configuration.dpopSigningAlgorithms = ["ES256"] }
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "offline_access"])),
            store: MemoryTokenStore(), transport: sandbox.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let directory = try TemporaryDirectory()
        let audit = AuditLog()
        let server = try await AgentServer.start(
            accounts: ["default": auth], socket: try AgentSocket.create(in: directory.path), policy: policy,
            logger: audit.logger)
        let task = Task { try await server.run() }
        return Running(sandbox: sandbox, auth: auth, server: server, task: task, directory: directory, audit: audit)
    }

    func mode(_ path: String) throws -> mode_t {
        var status = stat()
        try #require(lstat(path, &status) == 0)
        return status.st_mode & 0o777
    }

    @Test func tokensAndProofsGoOutTheRefreshTokenAndTheKeyNever() async throws {
        let agent = try await start()
        let socket = agent.server.socket
        #expect(try mode(socket.path) == 0o600)
        #expect(try mode(try #require(socket.directory)) == 0o700)
        #expect(socket.shellExport == "NATIVEAUTH_AGENT_SOCK=\(socket.path); export NATIVEAUTH_AGENT_SOCK;")

        let client = agent.client
        #expect(try await client.status().accounts == 1)
        let accounts = try await client.accounts()
        #expect(accounts.map(\.name) == ["default"] && accounts.first?.dpop == true && accounts.first?.signedIn == true)
        let token = try await client.accessToken()
        let held = try #require(try await agent.auth.currentTokens())
        #expect(token.accessToken == held.accessToken)
        #expect(token.tokenType == "DPoP")

        // The agent's proof, with the agent's token, at the sandbox's resource: the sandbox checks
        // the proof's signature, htm, htu and ath, and that its key is the token's cnf.jkt.
        let url = agent.sandbox.url(.resource)
        let proof = try await client.proof(method: "GET", url: url, accessToken: token.accessToken)
        var request = HTTPRequest(method: .get, url: url)
        request.headerFields[.authorization] = "DPoP \(token.accessToken)"
        request.headerFields[.dpop] = proof
        #expect(try await agent.sandbox.transport.send(request, body: nil).0.status.code == 200)

        // Nothing the agent answered holds the refresh token or the key's private part.
        var answers: [String] = []
        for request in [
            AgentMessage.request("status"), .request("list"), .request("token", ["account": "default"]),
            .request("proof", ["method": "GET", "url": .string(url.absoluteString)]),
        ] {
            let answer = await agent.server.answer(try request.encoded(), from: Peer(uid: UInt32(getuid()), pid: 1))
            #expect(answer.error == nil, "\(String(describing: answer.error))")
            answers.append(String(decoding: try answer.encoded(), as: UTF8.self))
        }
        let refreshToken = try #require(held.refreshToken)
        #expect(!answers.contains { $0.contains(refreshToken) })
        #expect(!answers.contains { $0.contains("\"d\"") }, "no private JWK member")
        #expect(agent.audit.count(op: "token", granted: true) >= 2)
        await agent.stop()
    }

    @Test func eightCallersAfterExpiryShareOneRefresh() async throws {
        let agent = try await start()
        try await agent.auth.expireAccessToken()
        let client = agent.client
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await client.accessToken().accessToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(agent.sandbox.grantCount(.refreshToken) == 1)
        await agent.stop()
    }

    @Test func aGoneAgentFailsClosedWithAClearError() async throws {
        let agent = try await start()
        // A long timeout for the first answer (beside the whole suite on two cores it has taken more
        // than 5 s); the gone agent must still fail at once, not by the timeout.
        let client = AgentClient(socket: agent.server.socket, timeout: .seconds(60))
        _ = try await client.accessToken()
        await agent.stop()
        let started = ContinuousClock.now
        let error = await #expect(throws: AuthError.self) { try await client.accessToken() }
        #expect(error?.code == .agentUnavailable, "\(String(describing: error))")
        #expect(error?.hint?.contains("NATIVEAUTH_AGENT_SOCK") == true)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!FileManager.default.fileExists(atPath: agent.server.socket.path), "the socket is removed")
    }

    @Test func thePolicyRefusesWhatItDoesNotNameAndAuditsIt() async throws {
        let allowed = try #require(URL(string: "https://api.example.test/v1"))
        let agent = try await start(policy: AgentPolicy(resources: [allowed], admitsSignInTokens: false))
        let client = agent.client
        let outside = try #require(URL(string: "https://other.example.test/v1"))
        let refused = await #expect(throws: AuthError.self) { try await client.accessToken(resource: outside) }
        #expect(refused?.code == .agentRefused, "\(String(describing: refused))")
        let signIn = await #expect(throws: AuthError.self) { try await client.accessToken() }
        #expect(signIn?.code == .agentRefused)
        let stranger = await #expect(throws: AuthError.self) { try await client.accessToken(account: "work") }
        #expect(stranger?.code == .loginRequired)
        #expect(agent.audit.count(op: "token", granted: false) == 3)
        let line = try #require(agent.audit.lines.value.first { $0["resource"] != nil })
        #expect(line["uid"] == "\(getuid())" && line["reason"] == "agent_refused")

        // Another uid (a forwarded socket of someone else): refused before anything is read, even
        // what anyone of the agent's own uid may ask.
        let answer = await agent.server.answer(
            try AgentMessage.request("status").encoded(), from: Peer(uid: UInt32(getuid()) + 1, pid: 1))
        #expect(answer.error?.code == .agentRefused)
        #expect(agent.audit.lines.value.last?["reason"] == "uid not allowed")
        await agent.stop()
    }

    @Test func aMalformedOrNewerRequestIsRefused() async throws {
        let agent = try await start(dpop: false)
        let peer = Peer(uid: UInt32(getuid()), pid: 1)
        #expect(await agent.server.answer(Array("not json".utf8), from: peer).error?.code == .requestFailed)
        let newer = AgentMessage(["v": 2, "op": "token"])
        #expect(
            await agent.server.answer(try newer.encoded(), from: peer).error?.message.contains("version 1") == true)
        let unknown = await agent.server.answer(try AgentMessage.request("export-keys").encoded(), from: peer)
        #expect(unknown.error?.code == .requestFailed)
        // No DPoP key: no proof.
        let proof = await agent.server.answer(
            try AgentMessage.request("proof", ["method": "GET", "url": "https://x.test/"]).encoded(), from: peer)
        #expect(proof.error?.code == .configurationInvalid)
        await agent.stop()
    }

    // MARK: - Borrowing

    /// An authenticator borrowing from `agent`, of the same issuer and client, keeping nothing.
    func borrower(_ agent: Running) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: agent.sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID)),
            borrowingFrom: agent.client, transport: agent.sandbox.transport)
    }

    @Test func aBorrowingAuthenticatorSendsWithTheAgentsTokenAndProofsAndHandsARefusedOneBack() async throws {
        let agent = try await start()
        let borrowed = try borrower(agent)
        #expect(borrowed.borrowsTokens)
        let request = HTTPRequest(method: .get, url: agent.sandbox.url(.resource))
        let (first, _) = try await borrowed.send(request)
        #expect(first.status.code == 200)
        #expect(agent.sandbox.dpopRefusals.isEmpty, "the agent's proofs, for the token's cnf.jkt")
        let held = try #require(try await agent.auth.currentTokens())
        #expect(try await borrowed.currentTokens()?.accessToken == held.accessToken)
        #expect(try await borrowed.currentTokens()?.refreshToken == nil)
        #expect(try await borrowed.currentTokens()?.dpopKey == nil)
        #expect(try await borrowed.store.keys().isEmpty, "nothing is kept in a store")

        // The API refuses the token (revoked): the borrower hands it back, the agent refreshes once,
        // and the request is sent again with the new one.
        agent.sandbox.revokeAccessTokens()
        let (second, _) = try await borrowed.send(request)
        #expect(second.status.code == 200)
        #expect(agent.sandbox.grantCount(.refreshToken) == 1)
        #expect(agent.audit.count(op: "refused", granted: true) == 1)
        #expect(try await agent.auth.currentTokens()?.accessToken != held.accessToken)

        // The ID token, for what takes it (kubectl's exec plugin), valid as long as asked.
        let withID = try await borrowed.tokensWithValidIDToken(minimumValidity: 120)
        #expect(withID.idTokenIsValid(at: Date(), leeway: 120))

        // Signing in, out and refreshing are the agent's.
        for attempt in [
            { _ = try await borrowed.refresh() }, { _ = try await borrowed.logout() },
            { _ = try await borrowed.login(.clientCredentials) },
        ] as [@Sendable () async throws -> Void] {
            let error = await #expect(throws: AuthError.self) { try await attempt() }
            #expect(error?.code == .configurationInvalid && error?.message.contains("token agent") == true)
        }

        // The agent gone: a borrower fails closed (what one borrowed stays good until it expires;
        // nothing is had anywhere else).
        let fresh = try borrower(agent)
        await agent.stop()
        let gone = await #expect(throws: AuthError.self) { _ = try await fresh.send(request) }
        #expect(gone?.code == .agentUnavailable, "\(String(describing: gone))")
    }

    @Test func aPolicyFileIsReadStrictlyAndConfirmationFailsClosed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/policy.json"
        let text =
            #"{"uids": [4242], "accounts": ["work"], "resources": ["https://api.example.test/"], "#
            + #""sign_in_tokens": false, "max_lifetime": 600, "confirm": true}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let policy = try AgentPolicy(contentsOf: path)
        #expect(policy.uids == [UInt32(getuid()), 4242])
        #expect(policy.accounts == ["work"])
        #expect(policy.resources == [try #require(URL(string: "https://api.example.test/"))])
        #expect(!policy.admitsSignInTokens && policy.maximumLifetime == 600 && policy.requiresConfirmation)
        for (text, problem) in [
            (#"{"uid": [1]}"#, "does not know: uid"), (#"{"max_lifetime": 5}"#, "60 or more"),
            (#"{"resources": ["ftp://x"]}"#, "http(s) URLs"), ("[]", "not a JSON object"),
            (#"{"uids": [-1]}"#, "array of uids"),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: AuthError.self) { try AgentPolicy(contentsOf: path) }
            #expect(error?.message.contains(problem) == true, "\(text): \(String(describing: error))")
        }

        // Confirmation required and no way to ask: every token request is refused.
        let agent = try await start(policy: AgentPolicy(requiresConfirmation: true), dpop: false)
        let refused = await #expect(throws: AuthError.self) { try await agent.client.accessToken() }
        #expect(refused?.code == .agentRefused && refused?.message.contains("did not confirm") == true)
        #expect(agent.audit.lines.value.last?["reason"] == "not confirmed")
        await agent.stop()
    }
}
