import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// Answers that are about someone else than the signed-in account: a refresh whose ID token names
/// another subject, a userinfo answer with another `sub`. In memory, against the sandbox.
@Suite(.testLogging) struct IdentityTests {
    /// Approves the device code as `user` as soon as it is shown.
    struct Approver: DeviceCodeDisplay {
        let sandbox: SandboxAuthorizationServer
        let user: String
        func show(_ authorization: DeviceAuthorization) async {
            try? sandbox.approveDevice(userCode: authorization.userCode, as: user)
        }
    }

    static func signedIn(
        _ user: String, _ sandbox: SandboxAuthorizationServer, store: any TokenStore = MemoryTokenStore()
    ) async throws -> (Authenticator, TokenSet) {
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                scopes: ["openid", "profile", "email"]))
        let auth = Authenticator(
            provider: provider, store: store, transport: sandbox.transport, clock: TestClock().clock)
        let tokens = try await auth.loginWithDevice(display: Approver(sandbox: sandbox, user: user))
        return (auth, tokens)
    }

    static func sandbox() async throws -> SandboxAuthorizationServer {
        try await SandboxAuthorizationServer.start(.init(devicePollingInterval: .zero), mode: .inMemory)
    }

    /// The server answers alice's refresh with tokens for bob (a validly signed ID token with bob's
    /// `sub`): nothing of the answer is kept, alice's refresh token is gone (the server may have
    /// spent it), and a sign-in is required.
    @Test func aRefreshThatNamesAnotherAccountIsDiscarded() async throws {
        let sandbox = try await Self.sandbox()
        let store = MemoryTokenStore()
        let (alice, aliceTokens) = try await Self.signedIn("alice", sandbox, store: store)
        let (_, bobTokens) = try await Self.signedIn("bob", sandbox)
        #expect(aliceTokens.subject == "sandbox-user-alice" && bobTokens.subject == "sandbox-user-bob")
        let answer: JSONValue = [
            "access_token": .string(bobTokens.accessToken), "token_type": "Bearer", "expires_in": 3600,
            "refresh_token": .string(bobTokens.refreshToken ?? ""), "id_token": .string(bobTokens.idToken ?? ""),
        ]
        sandbox.failNext(
            1, .token, with: .response(status: 200, contentType: "application/json", body: try answer.encodedString()))

        let error = await #expect(throws: AuthError.self) { try await alice.refresh() }
        #expect(error?.code == .loginRequired)
        #expect(error?.message.contains("another account") == true)
        let kept = try #require(await store.load(alice.key))
        #expect(kept.subject == "sandbox-user-alice")
        #expect(kept.accessToken == aliceTokens.accessToken, "alice's own access token stays")
        #expect(kept.refreshToken == nil, "nothing is refreshed any more")
        #expect(kept.idToken == aliceTokens.idToken)
        #expect(try await alice.currentTokens() == kept)
        await sandbox.stop()
    }

    /// A userinfo answer about another subject is refused (OIDC Core §5.3.4).
    @Test func aUserinfoAnswerAboutAnotherSubjectIsRefused() async throws {
        let sandbox = try await Self.sandbox()
        let (alice, _) = try await Self.signedIn("alice", sandbox)
        #expect(try await alice.userInfo().subject == "sandbox-user-alice")
        sandbox.failNext(
            1, .userInfo,
            with: .response(
                status: 200, contentType: "application/json",
                body: #"{"sub": "sandbox-user-bob", "email": "bob@example.test"}"#))
        let error = await #expect(throws: AuthError.self) { try await alice.userInfo() }
        #expect(error?.code == .requestFailed)
        #expect(error?.message.contains("sandbox-user-bob") == true)
        await sandbox.stop()
    }
}
