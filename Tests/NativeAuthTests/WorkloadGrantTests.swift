import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Token exchange (RFC 8693) and JWT bearer (RFC 7523 §2.1) grants from a workload's own token,
/// against the in-process sandbox, which trusts one federated issuer (a stand-in for a Kubernetes
/// cluster or a CI provider). The point of most of them: the subject token is read again at every
/// renewal, so a token the platform rotated is never sent stale.
@Suite(.testLogging) struct WorkloadGrantTests {
    static let subject = "system:serviceaccount:ci:builder"
    let federated = SandboxAuthorizationServer.FederatedIssuer(issuer: "https://kubernetes.default.svc")

    func sandbox(clock: AuthClock = .system, mode: TestServerMode = .inMemory) async throws
        -> SandboxAuthorizationServer
    {
        var configuration = SandboxAuthorizationServer.Configuration(clock: clock)
        configuration.federatedIssuers = [federated]
        return try await SandboxAuthorizationServer.start(configuration, mode: mode)
    }

    func authenticator(
        _ sandbox: SandboxAuthorizationServer,
        _ workload: WorkloadGrant?,
        store: any TokenStore = MemoryTokenStore()
    ) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "api"], workload: workload)),
            store: store, transport: sandbox.transport)
    }

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func aRotatedSubjectTokenFileIsReadAgainAtRenewalOnceForEveryCaller() async throws {
        let time = TestClock()
        let sandbox = try await sandbox(clock: time.clock)
        let directory = try TemporaryDirectory()
        let path = directory.path + "/token"
        let audience = sandbox.issuer.absoluteString
        try write(
            try federated.token(subject: Self.subject, audience: audience, issuedAt: time.now, lifetime: 60), to: path)
        let store = MemoryTokenStore()
        let auth = try authenticator(sandbox, .tokenExchange(subject: .file(path)), store: store)
        let tokens = try await auth.login(.workload)
        #expect(tokens.renewableGrant == .tokenExchange)
        #expect(tokens.refreshToken == nil)
        #expect(tokens.scopes == ["api"])
        #expect(sandbox.federatedSubjects == [Self.subject])

        // The platform rotates the file; the first token expires on the server's clock.
        time.advance(by: .seconds(120))
        try write(
            try federated.token(subject: Self.subject, audience: audience, issuedAt: time.now, lifetime: 600), to: path)
        try await auth.expireAccessToken()
        let fresh = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await auth.accessToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(fresh.count == 1)
        #expect(fresh.first != tokens.accessToken)
        #expect(sandbox.grantCount(.tokenExchange) == 2, "one renewal, with the rotated token (the old one is refused)")
        #expect(sandbox.errorCount("invalid_grant") == 0)
        #expect(await store.load(auth.key)?.renewableGrant == .tokenExchange)
        await sandbox.stop()
    }

    @Test func aSubjectTokenTheServerRefusesIsItsReasonAndNothingIsStored() async throws {
        let sandbox = try await sandbox()
        let stranger = SandboxAuthorizationServer.FederatedIssuer(issuer: "https://kubernetes.default.svc")
        let token = try stranger.token(subject: Self.subject, audience: sandbox.issuer.absoluteString)
        let store = MemoryTokenStore()
        let auth = try authenticator(sandbox, .tokenExchange(subject: .value(token)), store: store)
        let error = try await #require(throws: AuthError.self) { try await auth.login(.workload) }
        #expect(error.oauthError == "invalid_grant")
        #expect(error.oauthErrorDescription?.contains("signature does not verify") == true)
        #expect(error.message.contains("subject token"))
        #expect(await store.keys().isEmpty)
        await sandbox.stop()
    }

    @Test func aJWTBearerGrantFromACommandsOutput() async throws {
        let sandbox = try await sandbox()
        let directory = try TemporaryDirectory()
        let path = directory.path + "/assertion"
        try write(try federated.token(subject: Self.subject, audience: sandbox.url(.token).absoluteString), to: path)
        let auth = try authenticator(sandbox, .jwtBearer(.command(line: "/bin/cat '\(path)'")))
        let tokens = try await auth.login(.workload)
        #expect(tokens.renewableGrant == .jwtBearer)
        #expect(sandbox.grantCount(.jwtBearer) == 1)
        #expect(sandbox.federatedSubjects == [Self.subject])
        await sandbox.stop()
    }

    @Test func aSourceThatFailsSaysWhichAndNothingIsSent() async throws {
        let sandbox = try await sandbox()
        let directory = try TemporaryDirectory()
        let empty = directory.path + "/empty"
        try write("\n", to: empty)
        let cases: [(SubjectTokenSource, AuthError.Code, String)] = [
            (.command(["/bin/sh", "-c", "echo not-this >&2; exit 3"]), .tokenExchangeFailed, "exited with status 3"),
            (.command(["no-such-command-here"]), .configurationInvalid, "was not found"),
            (.file(directory.path + "/missing"), .configurationInvalid, "cannot read the subject token file"),
            (.file(empty), .tokenExchangeFailed, "is empty"),
            (.command(["/bin/echo", "two words"]), .tokenExchangeFailed, "not one token"),
            // A hung command is stopped; one that ignores SIGTERM is killed two seconds later.
            (.command(["/bin/sleep", "30"], timeout: .milliseconds(300)), .timeout, "and was stopped"),
            (
                .command(["/bin/sh", "-c", "trap '' TERM; exec /bin/sleep 30"], timeout: .milliseconds(300)), .timeout,
                "and was stopped"
            ),
        ]
        for (source, code, text) in cases {
            let store = MemoryTokenStore()
            let auth = try authenticator(sandbox, .tokenExchange(subject: source), store: store)
            let error = try await #require(throws: AuthError.self) { try await auth.login(.workload) }
            #expect(error.code == code, "\(source)")
            #expect(error.message.contains(text), "\(error.message)")
            #expect(!error.message.contains("not-this"))
            #expect(await store.keys().isEmpty)
        }
        #expect(sandbox.requestCount(.token) == 0)
        await sandbox.stop()
    }

    /// A wrapper script whose child keeps standard output open held the renewal (and the store's
    /// lock) for as long as that child lived (review L2): the whole process group is stopped at the
    /// deadline, and reading stops then even when a process outside the group holds the pipe.
    @Test func aCommandsChildrenAreStoppedWithItAtTheDeadline() async throws {
        let sandbox = try await sandbox()
        let directory = try TemporaryDirectory()
        let marker = directory.path + "/grandchild.pid"
        let cases: [(String, Bool)] = [
            // The wrapper exits at once; its child holds stdout for 300 s.
            ("/bin/sleep 300 & echo $! > \(marker); exit 0", true),
            // The wrapper waits on a child that holds stdout.
            ("/bin/sleep 300 & echo $! > \(marker); wait", true),
            // A child that left the group (a new session): reading still stops at the deadline.
            ("setsid /bin/sh -c 'echo $$ > \(marker); exec /bin/sleep 300' & sleep 0.3; exit 0", false),
            // One that left the group with stdout elsewhere, and a wrapper still running: the
            // wrapper is killed, and the renewal goes on without waiting for the other.
            (
                "setsid /bin/sh -c 'echo $$ > \(marker); exec /bin/sleep 300' >/dev/null & sleep 0.3; exec /bin/sleep 300 >&-",
                false
            ),
        ]
        for (script, killed) in cases {
            let auth = try authenticator(
                sandbox, .tokenExchange(subject: .command(["/bin/sh", "-c", script], timeout: .seconds(1))))
            let started = ContinuousClock.now
            let error = try await #require(throws: AuthError.self) { try await auth.login(.workload) }
            let took = ContinuousClock.now - started
            #expect(error.code == .timeout && error.message.contains("was stopped"), "\(script): \(error)")
            #expect(
                took < .seconds(120),
                "\(script): \(took), not the child's 300 s (loose: the full suite can delay a 1 s deadline by 20 s)")
            let pid = try #require(
                Int32(String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            if killed {
                // SIGTERM at the deadline; give the kernel a moment to deliver it.
                var alive = true
                for _ in 0..<100 where alive {
                    alive = kill(pid, 0) == 0 && !Self.isZombie(pid)
                    if alive { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(!alive, "\(script): the wrapper's child \(pid) was left running")
            } else {
                kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(atPath: marker)
        }
        #expect(sandbox.requestCount(.token) == 0)
        await sandbox.stop()
    }

    /// Whether `pid` has ended and waits to be reaped (an orphan's parent may be slow to).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }

    @Test func tokensFromAnExchangeNeedTheSourceToBeRenewed() async throws {
        let sandbox = try await sandbox()
        let token = try federated.token(subject: Self.subject, audience: sandbox.issuer.absoluteString)
        let store = MemoryTokenStore()
        try await authenticator(sandbox, .tokenExchange(subject: .value(token)), store: store).login(.workload)
        // Another program with the same client but no subject token configured.
        let other = try authenticator(sandbox, nil, store: store)
        try await other.expireAccessToken()
        let error = try await #require(throws: AuthError.self) { try await other.accessToken() }
        #expect(error.code == .loginRequired)
        #expect(error.hint?.contains("`subject_token_file`") == true)
        #expect(sandbox.grantCount(.tokenExchange) == 1)
        await sandbox.stop()
    }

    @Test func theGitHubActionsTokenIsAskedOfTheRunnerWithTheAudience() async throws {
        // On sockets: the runner is another server, reached through the same transport.
        let sandbox = try await sandbox(mode: .live)
        let subjectToken = try federated.token(
            subject: "repo:acme/app:ref:refs/heads/main", audience: sandbox.issuer.absoluteString)
        let runner = try await TestHTTPServer.start { request in
            guard request.header("Authorization") == "Bearer runner-request-token",
                request.uri.contains("audience=sandbox-audience"), request.uri.contains("api-version=2.0")
            else { return TestResponse(status: 401) }
            return .json(#"{"count": 1, "value": "\#(subjectToken)"}"#)
        }
        let environment = [
            "ACTIONS_ID_TOKEN_REQUEST_URL": runner.url("/token?api-version=2.0").absoluteString,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "runner-request-token",
        ]
        let auth = try authenticator(
            sandbox,
            .tokenExchange(subject: .gitHubActions(audience: "sandbox-audience", environment: environment)))
        try await auth.login(.workload)
        #expect(sandbox.federatedSubjects == ["repo:acme/app:ref:refs/heads/main"])

        let outside = try authenticator(sandbox, .tokenExchange(subject: .gitHubActions(environment: [:])))
        let error = try await #require(throws: AuthError.self) { try await outside.login(.workload) }
        #expect(error.code == .configurationInvalid)
        #expect(error.hint?.contains("id-token: write") == true)
        let refused = try authenticator(
            sandbox, .tokenExchange(subject: .gitHubActions(audience: "other", environment: environment)))
        let refusal = try await #require(throws: AuthError.self) { try await refused.login(.workload) }
        #expect(refusal.message.contains("refused the OIDC token request (HTTP 401)"))
        #expect(!refusal.description.contains("runner-request-token"))
        await runner.stop()
        await sandbox.stop()
    }

    @Test func theSettingsDescribeOneWorkloadGrant() throws {
        let exchange = try ProviderConfiguration(
            json: [
                "client_id": "c", "subject_token_file": "/var/run/secrets/tokens/token",
                "subject_token_type": "id_token",
                "token_exchange_audience": "api://acme",
            ])
        #expect(exchange.workload?.kind == .tokenExchange)
        #expect(exchange.workload?.subjectTokenType == .idToken)
        #expect(exchange.workload?.audience == "api://acme")
        #expect("\(exchange.workload?.subject.description ?? "")" == "the file /var/run/secrets/tokens/token")
        let bearer = try ProviderConfiguration(
            json: ["client_id": "c", "subject_token_command": "cat '/tmp/a b'", "workload_grant": "jwt_bearer"])
        #expect(bearer.workload?.kind == .jwtBearer)
        #expect(bearer.workload?.subject.description == "the command `cat /tmp/a b`")
        #expect(try ProviderConfiguration(json: ["client_id": "c"]).workload == nil)
        let problems: [(JSONObject, String)] = [
            (["client_id": "c", "subject_token_file": "/a", "subject_token_command": "b"], "give one of"),
            (["client_id": "c", "workload_grant": "jwt_bearer"], "needs a subject token"),
            (["client_id": "c", "subject_token_file": "/a", "workload_grant": "saml"], "token_exchange or jwt_bearer"),
            (["client_id": "c", "subject_token_file": "/a", "subject_token_type": "saml2"], "subject_token_type"),
        ]
        for (object, text) in problems {
            let error = #expect(throws: AuthError.self) { try ProviderConfiguration(json: object) }
            #expect(error?.message.contains(text) == true, "\(error?.message ?? "")")
        }
    }

    @Test func theExchangeFormCarriesEveryParameterAndTheTokensAreSecrets() throws {
        let grant = Grant.tokenExchange(
            subjectToken: "subject-jwt", subjectTokenType: .jwt, actorToken: ("actor-jwt", .accessToken),
            audience: "api://acme", scopes: ["read", "write"])
        let request = OAuthRequest(tokenEndpoint: try #require(URL(string: "https://id.example/token")), grant: grant)
        #expect(
            request.form.map(\.name) == [
                "grant_type", "subject_token", "subject_token_type", "actor_token", "actor_token_type", "audience",
                "scope",
            ])
        #expect(Set(request.sentSecrets) == ["subject-jwt", "actor-jwt"])
        #expect(!"\(grant)".contains("subject-jwt"))
    }
}
