import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Sign-in options (OIDC Core §3.1.2.1): sent on the authorization request, winning over the
/// provider's, and checked in the ID token (`acr` against `acr_values`, `auth_time` against
/// `max_age`), against the in-process sandbox.
@Suite(.testLogging) struct LoginOptionsTests {
    func sandbox(clock: AuthClock = .system) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true, clock: clock)
        configuration.acrValuesSupported = ["urn:sandbox:mfa"]
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func authenticator(_ sandbox: SandboxAuthorizationServer, store: MemoryTokenStore) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "profile"])),
            store: store, transport: sandbox.transport)
    }

    func idTokenClaims(_ tokens: TokenSet) throws -> JSONObject {
        let idToken = try #require(tokens.idToken)
        return try #require(JOSEParsing.parts(ofCompactJWS: idToken)?.claims)
    }

    @Test func theOptionsAreSentAndTheIDTokenMeetsThem() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let options = LoginOptions(
            prompt: "login", loginHint: "bob", maxAge: 300, acrValues: ["urn:sandbox:mfa", "urn:sandbox:pwd"],
            claims: ["id_token": ["acr": ["essential": true]]], uiLocales: ["fr-CA", "en"])
        let tokens = try await authenticator(sandbox, store: store).login(
            .browser(RedirectFollowingPresenter(transport: sandbox.transport), options: options))
        let query = sandbox.lastAuthorizationQuery
        #expect(query.first(named: "prompt") == "login")
        #expect(query.first(named: "login_hint") == "bob")
        #expect(query.first(named: "max_age") == "300")
        #expect(query.first(named: "acr_values") == "urn:sandbox:mfa urn:sandbox:pwd")
        #expect(query.first(named: "claims") == #"{"id_token":{"acr":{"essential":true}}}"#)
        #expect(query.first(named: "ui_locales") == "fr-CA en")
        #expect(tokens.subject == SandboxAuthorizationServer.User.bob.subject, "the login_hint chose the account")
        #expect(try idTokenClaims(tokens).string("acr") == "urn:sandbox:mfa")
        await sandbox.stop()
    }

    @Test func anACRTheServerDidNotMeetIsRefusedAndNothingIsStored() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let error = await #expect(throws: AuthError.self) {
            try await authenticator(sandbox, store: store).login(
                .browser(
                    RedirectFollowingPresenter(transport: sandbox.transport),
                    options: LoginOptions(acrValues: ["urn:sandbox:hardware-key"])))
        }
        #expect(error?.code == .idTokenInvalid)
        #expect(
            error?.message.contains("acr is missing, not one of the acr_values") == true, "\(String(describing: error))"
        )
        #expect(await store.keys().isEmpty)
        await sandbox.stop()
    }

    @Test func anAuthenticationOlderThanMaxAgeIsRefused() async throws {
        // The sandbox's clock says the person authenticated ten minutes before the client's does.
        let server = TestClock(Date().addingTimeInterval(-600))
        let sandbox = try await sandbox(clock: server.clock)
        let store = MemoryTokenStore()
        let error = await #expect(throws: AuthError.self) {
            try await authenticator(sandbox, store: store).login(
                .browser(RedirectFollowingPresenter(transport: sandbox.transport), options: LoginOptions(maxAge: 60)))
        }
        #expect(error?.code == .idTokenInvalid)
        #expect(error?.message.contains("max_age 60") == true, "\(String(describing: error))")
        #expect(await store.keys().isEmpty)
        await sandbox.stop()
    }

    /// OIDC Core §11: `offline_access` is ignored without `prompt=consent`, so the generic provider
    /// adds it; a provider that asks for consent itself (Google's module) sends it once; the
    /// `offline_access_consent` setting turns it off; `prompt=none` is left alone.
    @Test func offlineAccessAsksForConsent() async throws {
        let sandbox = try await sandbox()
        func prompts(
            _ provider: any AuthProvider, _ options: LoginOptions = LoginOptions()
        ) async throws -> [String] {
            let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: sandbox.transport)
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport), options: options))
            return sandbox.lastAuthorizationQuery.filter { $0.name == "prompt" }.map(\.value)
        }
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "offline_access"])
        #expect(try await prompts(GenericOIDCProvider(configuration: configuration)) == ["consent"])
        #expect(
            try await prompts(GenericOIDCProvider(configuration: configuration), LoginOptions(prompt: "login"))
                == ["login consent"])
        #expect(try await prompts(PromptingProvider(configuration: configuration)) == ["consent"], "once")
        configuration.offlineAccessConsent = .off
        #expect(try await prompts(GenericOIDCProvider(configuration: configuration)) == [])
        configuration.offlineAccessConsent = nil
        configuration.scopes = ["openid"]
        #expect(try await prompts(GenericOIDCProvider(configuration: configuration)) == [], "no offline_access")
        let fromFile = try ProviderConfiguration(json: [
            "issuer": .string(sandbox.issuer.absoluteString), "client_id": "sandbox-client",
            "offline_access_consent": "off",
        ])
        #expect(fromFile.offlineAccessConsent == .off)
        await sandbox.stop()
    }

    @Test func theCallersOptionsWinOverTheProvidersParameters() async throws {
        let sandbox = try await sandbox()
        let provider = try PromptingProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: ["openid"]))
        let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: sandbox.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(sandbox.lastAuthorizationQuery.filter { $0.name == "prompt" }.map(\.value) == ["consent"])
        try await auth.login(
            .browser(
                RedirectFollowingPresenter(transport: sandbox.transport),
                options: LoginOptions(prompt: "select_account")))
        #expect(sandbox.lastAuthorizationQuery.filter { $0.name == "prompt" }.map(\.value) == ["select_account"])
        await sandbox.stop()
    }
}

/// A provider that always asks for consent (as Google's module asks for `prompt=consent`).
private struct PromptingProvider: AuthProvider {
    static let id = "prompting"
    let configuration: ProviderConfiguration

    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }

    func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] {
        [FormField("prompt", "consent")]
    }
}
