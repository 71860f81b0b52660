import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Pushed authorization requests (RFC 9126): the parameters go to the server with the client's
/// authentication, and the browser gets only `client_id` and `request_uri`; against the sandbox,
/// which keeps each pushed request once, until it expires.
@Suite(.testLogging) struct PushedAuthorizationTests {
    func sandbox(
        clock: AuthClock = .system, _ change: (inout SandboxAuthorizationServer.Configuration) -> Void = { _ in }
    ) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true, clock: clock)
        configuration.pushedAuthorizationRequests = true
        change(&configuration)
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func authenticator(
        _ sandbox: SandboxAuthorizationServer, clock: AuthClock = .system, store: any TokenStore = MemoryTokenStore(),
        _ change: (inout ProviderConfiguration) -> Void = { _ in }
    ) throws -> Authenticator {
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile"])
        change(&configuration)
        return Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport, clock: clock)
    }

    @Test func theRequestIsPushedAndTheBrowserGetsOnlyItsReference() async throws {
        let sandbox = try await sandbox { $0.dpopSigningAlgorithms = ["ES256"] }
        let auth = try authenticator(sandbox)
        let tokens = try await auth.login(
            .browser(RedirectFollowingPresenter(transport: sandbox.transport), options: LoginOptions(loginHint: "bob")))
        #expect(sandbox.requestCount(.pushedAuthorization) == 1)
        // The URL holds the reference, and repeats only what OIDC Core §6.2 asks for: no state, nonce,
        // PKCE challenge, dpop_jkt or hint.
        #expect(
            sandbox.lastBrowserQuery.map(\.name) == [
                "client_id", "request_uri", "response_type", "redirect_uri", "scope",
            ])
        #expect(
            sandbox.lastBrowserQuery.first(named: "request_uri")?.hasPrefix("urn:ietf:params:oauth:request_uri:")
                == true)
        let pushed = sandbox.lastAuthorizationQuery
        #expect(pushed.first(named: "code_challenge_method") == "S256")
        #expect(pushed.first(named: "login_hint") == "bob")
        #expect(pushed.first(named: "dpop_jkt") == tokens.dpopKey?.thumbprint)
        #expect(tokens.subject == SandboxAuthorizationServer.User.bob.subject)
        #expect(tokens.tokenType == "DPoP")
        await sandbox.stop()
    }

    /// A server that checks DPoP at the pushed authorization endpoint (RFC 9449 §10.1) gets a proof
    /// there, with its nonce on a second try, of the one key that then binds the code, the tokens
    /// and the refresh.
    @Test func aServerThatRequiresDPoPAtThePushGetsAProofOfTheOneKey() async throws {
        let sandbox = try await sandbox {
            $0.dpopSigningAlgorithms = ["ES256"]
            $0.requiresDPoPAtPushedRequests = true
            $0.requiresDPoPNonce = true
        }
        let auth = try authenticator(sandbox)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(sandbox.requestCount(.pushedAuthorization) == 2, "once for the nonce, once with it")
        let key = try #require(tokens.dpopKey)
        #expect(sandbox.lastAuthorizationQuery.first(named: "dpop_jkt") == key.thumbprint, "the code is bound to it")
        #expect(tokens.tokenType == "DPoP")
        let refreshed = try await auth.refresh()
        #expect(refreshed.dpopKey?.thumbprint == key.thumbprint)
        #expect(sandbox.dpopRefusals.allSatisfy { $0.contains("nonce") }, "\(sandbox.dpopRefusals)")
        await sandbox.stop()
    }

    @Test func aConfidentialClientAuthenticatesItsPush() async throws {
        let secret = "par-client-secret-0123456789abcdef"
        let sandbox = try await sandbox {
            $0.clients.append(SandboxAuthorizationServer.Client(id: "web", secret: secret))
        }
        let auth = try authenticator(sandbox) {
            $0.clientID = "web"
            $0.clientSecret = secret
        }
        _ = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(sandbox.requestCount(.pushedAuthorization) == 1)

        let wrong = try authenticator(sandbox) {
            $0.clientID = "web"
            $0.clientSecret = "not-the-secret"
        }
        let error = await #expect(throws: AuthError.self) {
            try await wrong.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.oauthError == "invalid_client")
        #expect(error?.operation == .pushedAuthorization)
        #expect(!"\(String(describing: error))".contains("not-the-secret"))
        #expect(sandbox.requestCount(.authorization) == 1, "the browser was not sent anywhere")
        await sandbox.stop()
    }

    @Test func aServerThatRequiresPushingGetsItWhateverTheConfigurationSays() async throws {
        let sandbox = try await sandbox { $0.requiresPushedAuthorizationRequests = true }
        let auth = try authenticator(sandbox) { $0.pushedAuthorizationRequests = .disabled }
        _ = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(sandbox.requestCount(.pushedAuthorization) == 1)

        // Off where the server does not require it: the parameters go in the URL.
        let optional = try await self.sandbox()
        let off = try authenticator(optional) { $0.pushedAuthorizationRequests = .disabled }
        _ = try await off.login(.browser(RedirectFollowingPresenter(transport: optional.transport)))
        #expect(optional.requestCount(.pushedAuthorization) == 0)
        #expect(optional.lastBrowserQuery.first(named: "code_challenge") != nil)
        await sandbox.stop()
        await optional.stop()
    }

    @Test func requiredOfAServerWithoutTheEndpointIsAClearError() async throws {
        let sandbox = try await sandbox { $0.pushedAuthorizationRequests = false }
        let auth = try authenticator(sandbox) { $0.pushedAuthorizationRequests = .required }
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.field == "pushed_authorization_requests")
        #expect(sandbox.requestCount(.authorization) == 0)
        await sandbox.stop()
    }

    @Test(arguments: [
        #"{"expires_in": 60}"#, #"{"request_uri": "", "expires_in": 60}"#, #"{"request_uri": "urn:x"}"#,
        #"{"request_uri": "urn:x", "expires_in": 0}"#,
    ])
    func anAnswerWithoutAUsableReferenceIsAClearErrorAndNothingIsStored(body: String) async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let auth = try authenticator(sandbox, store: store)
        sandbox.failNext(
            1, .pushedAuthorization, with: .response(status: 201, contentType: "application/json", body: body))
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.code == .responseMalformed, "\(String(describing: error))")
        #expect(error?.message.contains("RFC 9126") == true)
        #expect(sandbox.requestCount(.authorization) == 0)
        #expect(try await store.load(auth.key) == nil)
        await sandbox.stop()
    }

    @Test func anHTMLPageFromTheEndpointIsAClearError() async throws {
        let sandbox = try await sandbox()
        let auth = try authenticator(sandbox)
        sandbox.failNext(
            1, .pushedAuthorization,
            with: .response(status: 502, contentType: "text/html", body: "<html><body>Bad gateway</body></html>"))
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        }
        #expect(error?.code == .serverError, "\(String(describing: error))")
        #expect(error?.operation == .pushedAuthorization)
        await sandbox.stop()
    }

    @Test func aReferenceThatExpiredBeforeTheSignInEndedIsSaidSo() async throws {
        let time = TestClock()
        let sandbox = try await sandbox(clock: time.clock) { $0.pushedRequestLifetime = .seconds(30) }
        let auth = try authenticator(sandbox, clock: time.clock)
        let slow = SlowPresenter(inner: RedirectFollowingPresenter(transport: sandbox.transport), time: time)
        let error = await #expect(throws: AuthError.self) { try await auth.login(.browser(slow)) }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "invalid_request_uri")
        #expect(error?.message.contains("had expired") == true, "\(String(describing: error))")
        #expect(sandbox.grantCount(.authorizationCode) == 0)
        await sandbox.stop()
    }
}

/// A person who takes a minute on the authorization page.
private struct SlowPresenter: UserAgentPresenter {
    let inner: RedirectFollowingPresenter
    let time: TestClock

    func beginSession() async throws -> any UserAgentSession {
        Session(inner: try await inner.beginSession(), time: time)
    }

    struct Session: UserAgentSession {
        let inner: any UserAgentSession
        let time: TestClock
        var redirectURI: URL { inner.redirectURI }

        func authorize<Outcome: Sendable>(
            _ authorizationURL: URL,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
        ) async throws -> Outcome {
            time.advance(by: .seconds(60))
            return try await inner.authorize(authorizationURL, handler: handler)
        }

        func close() async { await inner.close() }
    }
}
