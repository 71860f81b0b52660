import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthGitLab
import NativeAuthTesting
import TestSupport
import Testing

@Suite(.testLogging) struct GitLabProviderTests {
    func authenticator(
        _ gitlab: SandboxAuthorizationServer, store: any TokenStore = MemoryTokenStore()
    ) throws -> Authenticator {
        Authenticator(
            provider: try GitLabProvider(
                configuration: ProviderConfiguration(
                    provider: GitLabProvider.id, clientID: GitLabSandbox.clientID,
                    scopes: ["openid", "read_user", "api"], additional: ["host": .string(gitlab.issuer.absoluteString)])
            ),
            store: store, transport: gitlab.transport)
    }

    @Test func theHostIsTheIssuer() throws {
        let hosted = try GitLabProvider(configuration: ProviderConfiguration(clientID: "c"))
        #expect(hosted.configuration.issuer?.absoluteString == "https://gitlab.com")
        #expect(hosted.apiBaseURL?.absoluteString == "https://gitlab.com/api/v4")
        let managed = try GitLabProvider(
            configuration: ProviderConfiguration(clientID: "c", additional: ["host": "https://gitlab.example.com/"]))
        #expect(managed.configuration.issuer?.absoluteString == "https://gitlab.example.com")
        let bad = #expect(throws: AuthError.self) {
            try GitLabProvider(configuration: ProviderConfiguration(clientID: "c", additional: ["host": "gitlab"]))
        }
        #expect(bad?.field == "host")
    }

    /// Rotating refresh tokens: the old one is spent at each refresh, and many callers in several
    /// authenticators sharing one store cause one refresh and no `invalid_grant`.
    @Test func rotatingRefreshTokensAreSpentOnce() async throws {
        let gitlab = try await GitLabSandbox.start()
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let first = try authenticator(gitlab, store: store)
        try await first.login(.browser(RedirectFollowingPresenter(transport: gitlab.transport)))
        try await first.expireAccessToken()
        let instances = try (0..<4).map { _ in try authenticator(gitlab, store: store) }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for instance in instances {
                for _ in 0..<10 { group.addTask { try await instance.accessToken() } }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(gitlab.refreshCount(subject: GitLabSandbox.alice.subject) == 1, "one refresh for 40 callers")
        #expect(tokens.count == 1 && gitlab.isActive(accessToken: tokens.first ?? ""))
    }

    @Test func theDeviceFlowUsesItsUnlistedEndpointAndLogoutRevokes() async throws {
        let gitlab = try await GitLabSandbox.start()
        let auth = try authenticator(gitlab)
        struct Silent: DeviceCodeDisplay { func show(_ authorization: DeviceAuthorization) async {} }
        let tokens = try await auth.login(.device(Silent()))
        #expect(gitlab.requestLog.contains { $0.path == "/oauth/authorize_device" })
        #expect(tokens.refreshToken != nil)
        let result = try await auth.logout()
        #expect(result.revocationAttempted && result.revocationError == nil)
        #expect(result.endSessionURL == nil, "GitLab has no end-session endpoint")
        #expect(!gitlab.isActive(accessToken: tokens.accessToken))
    }
}

/// The sample CLI against the stand-in on 127.0.0.1, and git's credential helper with GitLab's
/// documented user name.
@Suite(.testLogging) struct GitLabCLITests {
    @Test func gitlabLoginRunsEveryCommandAndServesGit() async throws {
        let gitlab = try await GitLabSandbox.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("gitlab-login")
        let connection = [
            "--host", gitlab.issuer.absoluteString, "--client-id", GitLabSandbox.clientID, "--scope",
            "openid read_user api",
            "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == true)
        let token = try await run(cli, ["token"] + connection)
        #expect(token.stdout.hasPrefix("glpat-oauth-"))
        let api = try await run(cli, ["api", "/user"] + connection)
        #expect(api.status == 0 && api.stdout.contains("alice"), "\(api.stderr)")
        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(gitlab.refreshCount(subject: GitLabSandbox.alice.subject) == 1)

        let port = gitlab.port
        let credential = try await run(
            cli, ["git-credential", "get"] + connection, input: "protocol=http\nhost=127.0.0.1:\(port)\n\n")
        #expect(credential.status == 0, "\(credential.stderr)")
        let fresh = try await run(cli, ["token"] + connection)
        #expect(credential.stdout.contains("username=oauth2\n"), "\(credential.stdout.count) bytes")
        #expect(credential.stdout.contains("password=\(fresh.stdout.trimmingCharacters(in: .newlines))\n"))

        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0 && logout.stdout == "Signed out\n", "\(logout.stderr)")
        #expect(!gitlab.isActive(accessToken: fresh.stdout.trimmingCharacters(in: .newlines)), "revoked")
        await gitlab.stop()
    }
}
