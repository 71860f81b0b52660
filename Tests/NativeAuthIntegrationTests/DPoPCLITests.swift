import Foundation
import HTTPTypes
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// DPoP and pushed requests through the sample CLI, against the sandbox on 127.0.0.1: eight
/// processes sharing one store (and so one DPoP key) refresh a DPoP-bound sign-in once; `api`
/// sends proofs; `token --format header` and `--format dpop-proof` give another program what it
/// needs to make the call itself.
@Suite(.testLogging) struct DPoPCLITests {
    let cli = cliPath("oidc-login")

    @Test func eightProcessesShareOneKeyAndRefreshOnce() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.dpopSigningAlgorithms = ["ES256"]
        configuration.pushedAuthorizationRequests = true
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", store,
        ]
        let login = try await run(
            cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(sandbox.requestCount(.pushedAuthorization) == 1)
        let files = FileTokenStore(directory: store)
        let key = try #require(try files.keys().first)
        var tokens = try #require(try files.load(key))
        let signingKey = try #require(tokens.dpopKey)
        #expect(tokens.tokenType == "DPoP")

        // Expired; eight processes call the API at once: one refresh, with the shared key, for all.
        tokens.expiresAt = Date(timeIntervalSinceNow: -30)
        try files.save(tokens, for: key)
        sandbox.resetCounts()
        let cli = cli
        let resource = sandbox.url(.resource).absoluteString
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<8 { group.addTask { try await run(cli, ["api", resource] + connection) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(sandbox.refreshCount(subject: SandboxAuthorizationServer.User.alice.subject) == 1)
        #expect(sandbox.requestCount(.resource) == 8)
        #expect(sandbox.dpopRefusals.isEmpty, "\(sandbox.dpopRefusals)")
        let refreshed = try #require(try files.load(key))
        #expect(refreshed.dpopKey == signingKey, "the key lives as long as the sign-in")
        #expect(results.allSatisfy { !$0.stdout.contains(refreshed.accessToken) && !$0.stderr.contains("BEGIN") })

        // Another program: the Authorization value and a proof for its request, each from `token`.
        let header = try await run(cli, ["token", "--format", "header"] + connection)
        #expect(header.stdout == "DPoP \(refreshed.accessToken)\n")
        let proof = try await run(cli, ["token", "--format", "dpop-proof", "--url", resource] + connection)
        #expect(proof.status == 0, "\(proof.stderr)")
        var request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        request.headerFields[.authorization] = header.stdout.trimmingCharacters(in: .newlines)
        request.headerFields[.dpop] = proof.stdout.trimmingCharacters(in: .newlines)
        #expect(try await sandbox.transport.send(request, body: nil).0.status.code == 200)
        // A proof is for one request: the same one again is a replay.
        #expect(try await sandbox.transport.send(request, body: nil).0.status.code == 401)
        let missing = try await run(cli, ["token", "--format", "dpop-proof"] + connection)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--url"), "\(missing.stderr)")
        await sandbox.stop()
    }

    @Test func dpopRequiredOfAServerThatAnswersBearerFailsAndStoresNothing() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.dpopSigningAlgorithms = ["ES256"]
        configuration.answersBearerToDPoP = true
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid", "--store", directory.path + "/store", "--dpop", "required",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status != 0)
        #expect(login.stderr.contains("requires DPoP"), "\(login.stderr)")
        #expect(try FileTokenStore(directory: directory.path + "/store").keys().isEmpty)
        await sandbox.stop()
    }
}
