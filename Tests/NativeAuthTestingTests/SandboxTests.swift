import Foundation
import HTTPTypes
import HTTPTypesFoundation
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// A person at the approval page: loads it, picks a user, clicks Approve or Deny, and follows the
/// redirect back to the loopback receiver.
struct ClickingBrowser: BrowserOpener {
    var decision = "approve"
    var user: String?
    let pages = PageLog()

    final class PageLog: Sendable {
        let html = NIOLockedValueBox<[String]>([])
    }

    func open(_ start: URL) async throws {
        // The presenter's one-time start address redirects to the authorization page (or, for an
        // end-session URL, posts a form, which the redirect-following browser does to the end).
        guard let url = try await RedirectFollowingBrowser().follow(start, until: { $0.path.hasSuffix("/authorize") })
        else { return }
        let transport = URLSessionTransport()
        let (response, body) = try await transport.send(HTTPRequest(method: .get, url: url), body: nil)
        let page = String(decoding: body, as: UTF8.self)
        pages.html.withLockedValue { $0.append(page) }
        guard response.status.code == 200, let transaction = Self.value(of: "transaction", in: page) else {
            return try await RedirectFollowingBrowser().open(url)
        }
        var fields = [FormField("transaction", transaction), FormField("decision", decision)]
        if let user { fields.append(FormField("user", user)) }
        var post = HTTPRequest(method: .post, url: url)
        post.headerFields[.contentType] = FormURLEncoding.mediaType
        let (answer, _) = try await transport.send(post, body: Data(FormURLEncoding.encode(fields).utf8))
        guard let location = answer.headerFields[.location], let next = URL(string: location) else { return }
        try await RedirectFollowingBrowser().open(next)
    }

    static func value(of name: String, in page: String) -> String? {
        guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }
}

/// Builds an authenticator for the sandbox's default client.
func authenticator(
    _ sandbox: SandboxAuthorizationServer,
    scopes: [String] = ["openid", "profile", "email"],
    store: any TokenStore = MemoryTokenStore(),
    clock: AuthClock = .system
) throws -> Authenticator {
    let configuration = ProviderConfiguration(
        issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: scopes)
    return Authenticator(
        provider: try GenericOIDCProvider(configuration: configuration), store: store, transport: sandbox.transport,
        clock: clock)
}

func loopback(_ opener: any BrowserOpener = RedirectFollowingBrowser()) -> LoopbackPresenter {
    LoopbackPresenter(configuration: .init(timeout: .seconds(30), opener: opener, output: ConsoleOutput { _ in }))
}

/// A presenter that approves at once: through the loopback receiver for a live sandbox, by
/// following the redirects in memory otherwise.
func approving(_ sandbox: SandboxAuthorizationServer) -> any UserAgentPresenter {
    switch sandbox.mode {
    case .live: loopback()
    case .inMemory: RedirectFollowingPresenter(transport: sandbox.transport)
    }
}

/// A raw request, for what the library would never send.
func raw(
    _ method: HTTPRequest.Method, _ url: URL, form: [FormField]? = nil, bearer: String? = nil,
    via transport: any HTTPTransport = URLSessionTransport()
) async throws -> (Int, JSONObject?, HTTPResponse) {
    var request = HTTPRequest(method: method, url: url)
    if form != nil { request.headerFields[.contentType] = FormURLEncoding.mediaType }
    if let bearer { request.headerFields[.authorization] = "Bearer \(bearer)" }
    let (response, body) = try await transport.send(
        request, body: form.map { Data(FormURLEncoding.encode($0).utf8) })
    return (response.status.code, try? JSONValue.parse(body).objectValue, response)
}

@Suite(.testLogging) struct SandboxSignInTests {
    @Test func signsInWithAutoApprovalAndEveryOIDCCheckPasses() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let auth = try authenticator(sandbox)
        let tokens = try await auth.login(.browser(loopback()))
        #expect(tokens.subject == "sandbox-user-alice", "the ES256 ID token validated (signature, nonce, at_hash, iss)")
        #expect(tokens.displayName == "alice", "preferred_username")
        #expect(tokens.refreshToken != nil)
        #expect(sandbox.requestCount(.discovery) == 1)
        #expect(sandbox.requestCount(.authorization) == 1)
        #expect(sandbox.requestCount(.jwks) == 1)
        #expect(sandbox.grantCount(.authorizationCode) == 1)

        let user = try await auth.userInfo()
        #expect(user.subject == "sandbox-user-alice")
        #expect(user.email == "alice@example.test")

        let (response, body) = try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource)))
        #expect(response.status.code == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("Hello, alice"))
        await sandbox.stop()
    }

    @Test func aPersonApprovesOnThePageAsTheUserTheyChoose() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(mode: .live)
        let browser = ClickingBrowser(user: "bob")
        let tokens = try await authenticator(sandbox).login(.browser(loopback(browser)))
        #expect(tokens.subject == "sandbox-user-bob")
        let page = try #require(browser.pages.html.withLockedValue { $0.first })
        #expect(page.contains("Approve") && page.contains("Deny"))
        #expect(page.contains("<code>openid</code>"))
        await sandbox.stop()
    }

    @Test func aPersonDenies() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(mode: .live)
        let auth = try authenticator(sandbox)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(loopback(ClickingBrowser(decision: "deny"))))
        }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
        #expect(sandbox.grantCount(.authorizationCode) == 0)
        #expect(try await auth.currentTokens() == nil)
        await sandbox.stop()
    }

    @Test func rs256AndKeyRotationWithTheJWKSRefetchedOnce() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(autoApprove: true, signingAlgorithm: .rs256), mode: .live)
        let auth = try authenticator(sandbox)
        let first = try await auth.login(.browser(loopback()))
        #expect(first.subject == "sandbox-user-alice")
        let oldKey = sandbox.currentKeyID
        try sandbox.rotateSigningKey()
        #expect(sandbox.currentKeyID != oldKey)
        let refreshed = try await auth.refresh()
        #expect(await auth.lastRefreshIDTokenError == nil, "the new key's ID token validated")
        #expect(refreshed.idToken != first.idToken)
        #expect(sandbox.requestCount(.jwks) == 2, "one refetch for the unknown kid")
        let (status, jwks, _) = try await raw(.get, sandbox.url(.jwks))
        #expect(status == 200)
        #expect(try jwks?.array("keys")?.count == 2, "the previous key stays published")
        await sandbox.stop()
    }
}

@Suite(.testLogging) struct SandboxProtocolTests {
    /// Starts an authorization by hand; returns the code the sandbox redirected with.
    func code(
        _ sandbox: SandboxAuthorizationServer, pkce: PKCE, redirect: String = "http://127.0.0.1:4242/callback"
    ) async throws -> String {
        let query = FormURLEncoding.encode([
            FormField("response_type", "code"), FormField("client_id", SandboxAuthorizationServer.Client.defaultID),
            FormField("redirect_uri", redirect), FormField("scope", "openid"), FormField("state", "s1"),
            FormField("code_challenge", pkce.challenge), FormField("code_challenge_method", "S256"),
        ])
        let url = try #require(URL(string: sandbox.url(.authorization).absoluteString + "?" + query))
        let (status, _, response) = try await raw(.get, url, via: sandbox.transport)
        #expect(status == 303)
        let location = try #require(response.headerFields[.location])
        let fields = FormURLEncoding.decode(try #require(URLComponents(string: location)?.percentEncodedQuery))
        #expect(fields.first(named: "state") == "s1")
        #expect(fields.first(named: "iss") == sandbox.issuer.absoluteString, "RFC 9207")
        #expect(location.hasPrefix(redirect + "?"), "any loopback port is accepted (RFC 8252 §7.3)")
        return try #require(fields.first(named: "code"))
    }

    func exchange(_ sandbox: SandboxAuthorizationServer, code: String, verifier: String) async throws -> (
        Int, JSONObject?
    ) {
        let (status, object, _) = try await raw(
            .post, sandbox.url(.token),
            form: [
                FormField("grant_type", "authorization_code"), FormField("code", code),
                FormField("redirect_uri", "http://127.0.0.1:4242/callback"),
                FormField("client_id", SandboxAuthorizationServer.Client.defaultID),
                FormField("code_verifier", verifier),
            ], via: sandbox.transport)
        return (status, object)
    }

    @Test func pkceIsVerifiedAndACodeWorksOnce() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let pkce = PKCE()
        let wrong = try await exchange(sandbox, code: try await code(sandbox, pkce: pkce), verifier: PKCE().verifier)
        #expect(wrong.0 == 400)
        #expect(try wrong.1?.string("error") == "invalid_grant")

        let good = try await code(sandbox, pkce: pkce)
        let first = try await exchange(sandbox, code: good, verifier: pkce.verifier)
        #expect(first.0 == 200)
        #expect(try first.1?.string("id_token") != nil)
        let again = try await exchange(sandbox, code: good, verifier: pkce.verifier)
        #expect(again.0 == 400, "a code is single use")
        #expect(sandbox.grantCount(.authorizationCode) == 3)
        await sandbox.stop()
    }

    @Test func badAuthorizationRequestsAreRefusedWithoutRedirectingElsewhere() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let base = sandbox.url(.authorization).absoluteString
        let client = SandboxAuthorizationServer.Client.defaultID
        // A redirect URI that is not registered: a page, never a redirect.
        let evil = try #require(
            URL(string: base + "?response_type=code&client_id=\(client)&redirect_uri=https://evil.example/cb"))
        let (status, _, response) = try await raw(.get, evil, via: sandbox.transport)
        #expect(status == 400)
        #expect(response.headerFields[.location] == nil)
        // No PKCE: back to the client with invalid_request.
        let noPKCE = try #require(
            URL(string: base + "?response_type=code&client_id=\(client)&redirect_uri=http://127.0.0.1:5/callback"))
        let (noPKCEStatus, _, noPKCEResponse) = try await raw(.get, noPKCE, via: sandbox.transport)
        #expect(noPKCEStatus == 303)
        #expect(noPKCEResponse.headerFields[.location]?.contains("error=invalid_request") == true)
        // A scope it does not know, reflected nowhere.
        let scope = try #require(
            URL(
                string: base + "?response_type=code&client_id=\(client)&redirect_uri=http://127.0.0.1:5/callback"
                    + "&code_challenge=x&code_challenge_method=S256&scope=%3Cscript%3E"))
        let (_, _, scopeResponse) = try await raw(.get, scope, via: sandbox.transport)
        #expect(scopeResponse.headerFields[.location]?.contains("error=invalid_scope") == true)
        await sandbox.stop()
    }

    @Test func refreshTokensRotateAndARotatedOneIsRefused() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = try authenticator(sandbox)
        let first = try await auth.login(.browser(approving(sandbox)))
        let second = try await auth.refresh()
        #expect(second.refreshToken != first.refreshToken)
        let (status, object, _) = try await raw(
            .post, sandbox.url(.token),
            form: [
                FormField("grant_type", "refresh_token"), FormField("refresh_token", first.refreshToken ?? ""),
                FormField("client_id", SandboxAuthorizationServer.Client.defaultID),
            ], via: sandbox.transport)
        #expect(status == 400)
        #expect(try object?.string("error") == "invalid_grant")
        #expect(sandbox.errorCount("invalid_grant") == 1)

        sandbox.rotatesRefreshTokens = false
        let third = try await auth.refresh()
        #expect(third.refreshToken == second.refreshToken, "kept when the sandbox does not rotate")
        #expect(sandbox.grantCount(.refreshToken) == 3)
        await sandbox.stop()
    }

    @Test func logoutRevokesAndEndsTheSessionBackAtTheApp() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = try authenticator(sandbox)
        let tokens = try await auth.login(.browser(approving(sandbox)))
        let result = try await auth.logout(presenter: approving(sandbox))
        #expect(result.revocationAttempted && result.revocationError == nil)
        #expect(result.endSessionCompleted, "the sandbox redirected back with our state")
        #expect(sandbox.requestCount(.revocation) >= 1)
        #expect(sandbox.requestCount(.endSession) == 1)
        let (status, _, response) = try await raw(
            .get, sandbox.url(.resource), bearer: tokens.accessToken, via: sandbox.transport)
        #expect(status == 401)
        #expect(response.headerFields[.wwwAuthenticate]?.contains("invalid_token") == true)
        await sandbox.stop()
    }
}

@Suite(.testLogging) struct SandboxControlTests {
    @Test func deviceFlowPendingThenApprovedThroughThePage() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(devicePollingInterval: .zero), mode: .inMemory)
        // Polls every 50 ms, whatever interval the sandbox names.
        let auth = try authenticator(
            sandbox, clock: AuthClock(now: { Date() }, sleep: { _ in try await Task.sleep(for: .milliseconds(50)) }))
        struct Approver: DeviceCodeDisplay {
            let sandbox: SandboxAuthorizationServer
            func show(_ authorization: DeviceAuthorization) async {
                let page = try? await raw(
                    .get, authorization.verificationURIComplete ?? authorization.verificationURI, via: sandbox.transport
                )
                #expect(page?.0 == 200)
                // A person types the code (in lower case, without the dash) and approves.
                let typed = authorization.userCode.lowercased().replacingOccurrences(of: "-", with: "")
                Task {
                    try await Task.sleep(for: .milliseconds(300))
                    _ = try await raw(
                        .post, sandbox.url(.deviceVerification),
                        form: [FormField("user_code", typed), FormField("decision", "approve")], via: sandbox.transport)
                }
            }
        }
        let tokens = try await auth.login(.device(Approver(sandbox: sandbox)))
        #expect(tokens.subject == "sandbox-user-alice")
        #expect(sandbox.grantCount(.deviceCode) >= 2, "at least one authorization_pending first")
        #expect(sandbox.requestCount(.deviceAuthorization) == 1)
        await sandbox.stop()
    }

    @Test func deviceFlowDenied() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(devicePollingInterval: .zero), mode: .inMemory)
        struct Denier: DeviceCodeDisplay {
            let sandbox: SandboxAuthorizationServer
            func show(_ authorization: DeviceAuthorization) async {
                #expect(throws: Never.self) { try sandbox.denyDevice(userCode: authorization.userCode) }
            }
        }
        let error = await #expect(throws: AuthError.self) {
            try await authenticator(sandbox, clock: AuthClock(now: { Date() }, sleep: { _ in }))
                .login(.device(Denier(sandbox: sandbox)))
        }
        #expect(error?.oauthError == "access_denied")
        await sandbox.stop()
    }

    @Test func injectedFailuresAreAnsweredThenTheRealThing() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = try authenticator(sandbox)
        let tokens = try await auth.login(.browser(approving(sandbox)))
        sandbox.failNext(
            2, .token, with: .response(status: 502, contentType: "text/html", body: "<html>Bad Gateway</html>"))
        for _ in 0..<2 {
            let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
            #expect(error?.code == .serverError)
            #expect(try await auth.currentTokens()?.refreshToken == tokens.refreshToken, "nothing lost")
        }
        sandbox.failNext(1, .token, with: .oauthError("invalid_grant"))
        let dead = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(dead?.code == .loginRequired)
        #expect(sandbox.grantCount(.refreshToken) == 3)
        #expect(sandbox.errorCount("invalid_grant") == 0, "injected failures are not counted as the sandbox's own")
        sandbox.resetCounts()
        #expect(sandbox.requestCount(.token) == 0)
        await sandbox.stop()
    }

    @Test func anInjectedClockExpiresTokensWithoutWaiting() async throws {
        let clock = TestClock()
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(autoApprove: true, accessTokenLifetime: .seconds(600), clock: clock.clock), mode: .inMemory)
        let auth = try authenticator(sandbox, clock: clock.clock)
        let tokens = try await auth.login(.browser(approving(sandbox)))
        #expect(try await auth.accessToken() == tokens.accessToken)
        clock.advance(by: .seconds(601))
        let (status, _, _) = try await raw(
            .get, sandbox.url(.resource), bearer: tokens.accessToken, via: sandbox.transport)
        #expect(status == 401, "expired for the sandbox")
        let fresh = try await auth.accessToken()
        #expect(fresh != tokens.accessToken, "and for the authenticator, which refreshed")
        #expect(sandbox.grantCount(.refreshToken) == 1)
        await sandbox.stop()
    }

    @Test func concurrentCallersAfterExpiryCauseOneRefresh() async throws {
        let clock = TestClock()
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(autoApprove: true, clock: clock.clock), mode: .inMemory)
        let auth = try authenticator(sandbox, clock: clock.clock)
        _ = try await auth.login(.browser(approving(sandbox)))
        clock.advance(by: .seconds(3600))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await auth.send(HTTPRequest(method: .get, url: sandbox.url(.resource))).0.status.code
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(sandbox.grantCount(.refreshToken) == 1)
        #expect(sandbox.requestCount(.resource) == 50)
        await sandbox.stop()
    }

    @Test func aConfidentialClientMustAuthenticate() async throws {
        let client = SandboxAuthorizationServer.Client(id: "confidential", secret: "s3cret-sandbox")
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .inMemory)
        let good = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: "confidential", clientSecret: "s3cret-sandbox")),
            store: MemoryTokenStore(), transport: sandbox.transport)
        _ = try await good.login(.browser(approving(sandbox)))
        let bad = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: "confidential", clientSecret: "nope")),
            store: MemoryTokenStore(), transport: sandbox.transport)
        let error = await #expect(throws: AuthError.self) { try await bad.login(.browser(approving(sandbox))) }
        #expect(error?.code == .configurationInvalid, "invalid_client")
        await sandbox.stop()
    }

    @Test func fakeTransportAnswersWithoutANetwork() async throws {
        let seen = NIOLockedValueBox<[String]>([])
        let transport = FakeTransport { request, _ in
            seen.withLockedValue { $0.append(request.path ?? "") }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data("{}".utf8))
        }
        let (response, body) = try await transport.send(
            HTTPRequest(method: .get, url: try #require(URL(string: "https://id.example.test/x"))), body: nil)
        #expect(response.status == .ok)
        #expect(body == Data("{}".utf8))
        #expect(seen.withLockedValue { $0 } == ["/x"])
    }
}
