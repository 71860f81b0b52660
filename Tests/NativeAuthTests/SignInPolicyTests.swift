import Foundation
import LenientJSON
import Logging
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// A provider whose metadata is the sandbox's without `code_challenge_methods_supported`, like
/// Cognito's; its configuration may require the announcement.
private struct SilentAboutPKCE: AuthProvider {
    static let id = "silent-pkce"
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
    func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        metadata.codeChallengeMethodsSupported = nil
        return metadata
    }
}

/// A provider whose metadata announces PKCE with `plain` only.
private struct PlainPKCEOnly: AuthProvider {
    static let id = "plain-pkce"
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
    func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        metadata.codeChallengeMethodsSupported = ["plain"]
        return metadata
    }
}

/// What a sign-in refuses by default, and how a careful configuration tightens it. In memory,
/// against the sandbox.
@Suite(.testLogging) struct SignInPolicyTests {
    static func configuration(_ sandbox: SandboxAuthorizationServer, requiresPKCE: Bool = false)
        -> ProviderConfiguration
    {
        ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile"], requiresAnnouncedPKCE: requiresPKCE)
    }

    /// A provider that does not say whether it supports PKCE: S256 is sent with a warning by
    /// default, and `require_pkce` refuses it before anything is presented.
    @Test func aProviderSilentAboutPKCEIsWarnedAboutOrRefusedWhenRequired() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let handler = RecordingLogHandler()
        let lenient = Authenticator(
            provider: try SilentAboutPKCE(configuration: Self.configuration(sandbox)), store: MemoryTokenStore(),
            transport: sandbox.transport, logger: Logger(label: "test") { _ in handler })
        try await lenient.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(handler.messages.value.contains { $0.0 == .warning && $0.1.contains("does not announce PKCE") })

        let strict = Authenticator(
            provider: try SilentAboutPKCE(configuration: Self.configuration(sandbox, requiresPKCE: true)),
            store: MemoryTokenStore(), transport: sandbox.transport)
        sandbox.resetCounts()
        let error = await #expect(throws: AuthError.self) {
            try await strict.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.code == .configurationInvalid && error?.field == "require_pkce")
        #expect(sandbox.requestCount(.authorization) == 0, "nothing was presented")
        #expect(try ProviderConfiguration(json: ["client_id": "c", "require_pkce": true]).requiresAnnouncedPKCE)
        #expect(throws: AuthError.self) { try ProviderConfiguration(json: ["client_id": "c", "require_pkce": "yes"]) }
        await sandbox.stop()
    }

    /// Required PKCE means S256 announced: a server that announces `plain` alone is refused too
    /// (the MCP authorization spec's MUST, which the resource-first client applies).
    @Test func requiredPKCEIsRefusedWhenTheServerAnnouncesPlainOnly() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let strict = Authenticator(
            provider: try PlainPKCEOnly(configuration: Self.configuration(sandbox, requiresPKCE: true)),
            store: MemoryTokenStore(), transport: sandbox.transport)
        let error = await #expect(throws: AuthError.self) {
            try await strict.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(
            error?.field == "require_pkce" && error?.message.contains("S256") == true, "\(String(describing: error))")
        #expect(sandbox.requestCount(.authorization) == 0, "nothing was presented")
        await sandbox.stop()
    }

    /// `openid` asked for, but granted less (the answer's `scope` names no `openid`, RFC 6749
    /// §3.3): no ID token is owed, and the sign-in stands, naming nobody.
    @Test func aSignInGrantedWithoutOpenIDOwesNoIDToken() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: Self.configuration(sandbox)), store: store,
            transport: sandbox.transport)
        let answer =
            #"{"access_token": "an-access-token-for-profile", "token_type": "Bearer", "expires_in": 3600, "scope": "profile"}"#
        sandbox.failNext(1, .token, with: .response(status: 200, contentType: "application/json", body: answer))
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(tokens.idToken == nil && tokens.scopes == ["profile"])
        #expect(await store.load(auth.key) != nil)
        await sandbox.stop()
    }

    /// `openid` was asked for and a nonce sent, but the answer has no ID token: nothing identifies
    /// who signed in, and the nonce was never checked. Refused, and nothing is stored.
    @Test func aSignInWithoutTheIDTokenItAskedForIsRefused() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: Self.configuration(sandbox)), store: store,
            transport: sandbox.transport)
        let answer = #"{"access_token": "an-access-token-without-id", "token_type": "Bearer", "expires_in": 3600}"#
        sandbox.failNext(1, .token, with: .response(status: 200, contentType: "application/json", body: answer))
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.code == .idTokenInvalid)
        #expect(error?.message.contains("no ID token") == true)
        #expect(await store.load(auth.key) == nil)
        await sandbox.stop()
    }
}
