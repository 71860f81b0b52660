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
        let tokens = try await auth.login(.device(Approver(sandbox: sandbox, user: user)))
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

/// A configuration that names the same issuer and client but other endpoints (a planted or edited
/// `--config`) must not receive the stored tokens: they are bound to the endpoints they were
/// issued for.
@Suite(.testLogging) struct EndpointBindingTests {
    static func authenticator(
        _ sandbox: SandboxAuthorizationServer, store: any TokenStore, endpoints: EndpointOverrides = EndpointOverrides()
    ) throws -> Authenticator {
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                scopes: ["openid", "profile"], endpoints: endpoints))
        return Authenticator(provider: provider, store: store, transport: sandbox.transport)
    }

    @Test func tokensAreNotSentToEndpointsOtherThanTheirOwn() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let own = try Self.authenticator(sandbox, store: store)
        let tokens = try await own.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(tokens.endpoints["token_endpoint"] == sandbox.url(.token))
        #expect(tokens.endpoints["revocation_endpoint"] == sandbox.url(.revocation))

        let elsewhere = try #require(URL(string: "https://attacker.example/collect"))
        var overrides = EndpointOverrides()
        overrides.token = elsewhere
        overrides.userInfo = elsewhere
        overrides.revocation = elsewhere
        let planted = try Self.authenticator(sandbox, store: store, endpoints: overrides)
        let refresh = await #expect(throws: AuthError.self) { try await planted.refresh() }
        #expect(refresh?.code == .configurationInvalid && refresh?.field == "token_endpoint")
        #expect(refresh?.message.contains("attacker.example") == true)
        let userInfo = await #expect(throws: AuthError.self) { try await planted.userInfo() }
        #expect(userInfo?.field == "userinfo_endpoint")
        let logout = try await planted.logout()
        #expect(logout.revocationError?.field == "revocation_endpoint", "nothing was revoked there")
        #expect(sandbox.grantCount(.refreshToken) == 0)
        await sandbox.stop()
    }

    /// A set stored before endpoints were kept loads, is used, and gets them on its next refresh.
    @Test func aSetStoredWithoutEndpointsGetsThemAtItsNextRefresh() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let auth = try Self.authenticator(sandbox, store: store)
        var tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        tokens.endpoints = [:]
        var json = try #require(tokens.storageJSON.objectValue)
        #expect(json["endpoints"] == nil, "the form stored before endpoints were kept")
        json["display_name"] = .string("stored-before")
        let old = try TokenSet(storageJSON: json)
        await store.save(old, for: auth.key)
        let reloaded = try Self.authenticator(sandbox, store: store)
        let refreshed = try await reloaded.refresh()
        #expect(refreshed.endpoints["token_endpoint"] == sandbox.url(.token))
        #expect(await store.load(auth.key)?.endpoints == refreshed.endpoints)
        await sandbox.stop()
    }
}
