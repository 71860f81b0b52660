import Foundation
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// `logout` in the library, against the in-memory sandbox: what it sends, and what it says.
@Suite(.testLogging) struct LogoutTests {
    func authenticator(_ sandbox: SandboxAuthorizationServer, secret: String? = nil) throws -> Authenticator {
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: secret == nil ? SandboxAuthorizationServer.Client.defaultID : "private",
            scopes: ["openid", "offline_access"])
        configuration.clientSecret = secret
        return Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: sandbox.transport)
    }

    /// A presenter that fails the test when a session begins.
    struct UnusedPresenter: UserAgentPresenter {
        func beginSession() async throws -> any UserAgentSession {
            Issue.record("no page may be opened")
            throw AuthError(.loginCancelled, "unused")
        }
    }

    @Test func nothingStoredSendsNothingAndOpensNoPage() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let result = try await authenticator(sandbox).logout(presenter: UnusedPresenter())
        #expect(!result.removedTokens && !result.revocationAttempted && result.endSessionURL == nil)
        #expect(sandbox.requestCounts.isEmpty, "\(sandbox.requestCounts)")

        // Asked to end the session anyway: the page, without an ID token to hint with.
        let ended = try await authenticator(sandbox).logout(endingSessionWhenSignedOut: true)
        let url = try #require(ended.endSessionURL)
        #expect(url.path == "/end_session" && !url.absoluteString.contains("id_token_hint"))
        #expect(!ended.revocationAttempted && ended.revocationError == nil)
        await sandbox.stop()
    }

    @Test func revocationIsSkippedWhenTheMetadataExcludesTheClientsAuthentication() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(
            clients: [
                .init(id: SandboxAuthorizationServer.Client.defaultID),
                .init(id: "private", secret: "Logout-Test-Secret-0123456789"),
            ],
            autoApprove: true)
        configuration.revocationAuthMethods = ["client_secret_basic"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)

        let publicClient = try authenticator(sandbox)
        try await publicClient.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let skipped = try await publicClient.logout()
        #expect(skipped.removedTokens && !skipped.revocationAttempted && skipped.revocationError == nil)
        #expect(skipped.revocationSkipped?.contains("client_secret_basic") == true, "\(skipped)")
        #expect(sandbox.requestCount(.revocation) == 0)
        #expect(try await publicClient.currentTokens() == nil)

        // A confidential client with client_secret_basic revokes as before.
        let confidential = try authenticator(sandbox, secret: "Logout-Test-Secret-0123456789")
        try await confidential.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let revoked = try await confidential.logout()
        #expect(revoked.revocationAttempted && revoked.revocationError == nil && revoked.revocationSkipped == nil)
        #expect(sandbox.requestCount(.revocation) == 2, "the refresh token, then the access token")
        await sandbox.stop()
    }

    @Test func aRefusedRevocationNamesItsStatusOnce() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = try authenticator(sandbox)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        sandbox.failNext(2, .revocation, with: .response(status: 401, contentType: "text/html", body: "<p>no</p>"))
        let result = try await auth.logout()
        let error = try #require(result.revocationError)
        #expect(error.description.components(separatedBy: "HTTP 401").count == 2, "\(error.description)")
        #expect(error.status == 401)
        #expect(try await auth.currentTokens() == nil, "removed all the same")
        await sandbox.stop()
    }
}
