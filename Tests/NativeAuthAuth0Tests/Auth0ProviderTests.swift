import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthAuth0
import NativeAuthTesting
import TestSupport
import Testing

@Suite(.testLogging) struct Auth0ProviderTests {
    func authenticator(
        _ auth0: SandboxAuthorizationServer, audience: String? = Auth0Sandbox.apiAudience, logout: String? = nil,
        store: any TokenStore = MemoryTokenStore()
    ) throws -> Authenticator {
        var additional: JSONObject = [:]
        if let audience { additional["audience"] = .string(audience) }
        if let logout { additional["logout"] = .string(logout) }
        return Authenticator(
            provider: try Auth0Provider(
                configuration: ProviderConfiguration(
                    provider: Auth0Provider.id, issuer: auth0.issuer, clientID: Auth0Sandbox.clientID,
                    scopes: ["openid", "profile", "email"], additional: additional)),
            store: store, transport: auth0.transport)
    }

    @Test func theIssuerIsTheDomainWithItsTrailingSlash() throws {
        for domain in ["acme.eu.auth0.com", "https://acme.eu.auth0.com/", "login.acme.com"] {
            let provider = try Auth0Provider(
                configuration: ProviderConfiguration(clientID: "c", additional: ["domain": .string(domain)]))
            let host = domain.replacingOccurrences(of: "https://", with: "").replacingOccurrences(of: "/", with: "")
            #expect(provider.configuration.issuer?.absoluteString == "https://\(host)/")
            #expect(provider.configuration.scopes.contains("offline_access"))
        }
        for (key, value) in [("domain", "acme.auth0.com/path"), ("logout", "sometimes")] {
            let error = #expect(throws: AuthError.self) {
                try Auth0Provider(
                    configuration: ProviderConfiguration(
                        clientID: "c", additional: ["domain": "acme.auth0.com", .init(key): .string(value)]))
            }
            #expect(error?.field == key)
        }
    }

    /// The audience goes on the authorization request, and the token it brings is one the API takes;
    /// without it the token is opaque, the API refuses it, and the mapper says to set the audience.
    @Test func theAudienceMakesATokenTheAPITakes() async throws {
        let auth0 = try await Auth0Sandbox.start()
        let auth = try authenticator(auth0)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        #expect(auth0.lastAuthorizationQuery.first(named: "audience") == Auth0Sandbox.apiAudience)
        let api = auth0.issuer.appendingPathComponent("api/resource")
        #expect(try await auth.send(HTTPRequest(method: .get, url: api)).0.status.code == 200)

        let opaque = try authenticator(auth0, audience: nil)
        try await opaque.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        let mapped = await #expect(throws: AuthError.self) {
            try await opaque.send(HTTPRequest(method: .get, url: api))
        }
        #expect(mapped?.code == .invalidToken)
        #expect(mapped?.hint?.contains("audience") == true, "\(String(describing: mapped))")

        let unknown = try authenticator(auth0, audience: "https://nobody.test")
        let refused = await #expect(throws: AuthError.self) {
            try await unknown.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        }
        #expect(refused?.code == .configurationInvalid && refused?.hint?.contains("audience") == true)
    }

    /// Rotation with reuse detection: 40 callers in 4 authenticators sharing a store spend the
    /// refresh token once, and the family lives on. A stale copy sent again (what a store without
    /// a lock lets happen) revokes the whole sign-in, which the stand-in shows.
    @Test func rotationWithReuseDetectionIsNeverTripped() async throws {
        let auth0 = try await Auth0Sandbox.start()
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let first = try authenticator(auth0, store: store)
        try await first.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        let stale = try #require(try await first.currentTokens()?.refreshToken)
        try await first.expireAccessToken()
        let instances = try (0..<4).map { _ in try authenticator(auth0, store: store) }
        _ = try await withThrowingTaskGroup(of: String.self) { group in
            for instance in instances {
                for _ in 0..<10 { group.addTask { try await instance.accessToken() } }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(auth0.grantCount(.refreshToken) == 1 && auth0.reuseDetections == 0)
        try await first.refresh()
        #expect(auth0.reuseDetections == 0, "the family lives on")

        // What the lock prevents: the spent token sent again logs everything out.
        var request = HTTPRequest(method: .post, url: auth0.url(.token))
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        let form = [
            FormField("grant_type", "refresh_token"), FormField("refresh_token", stale),
            FormField("client_id", Auth0Sandbox.clientID),
        ]
        _ = try await auth0.transport.send(request, body: Data(FormURLEncoding.encode(form).utf8))
        #expect(auth0.reuseDetections == 1)
        let revoked = await #expect(throws: AuthError.self) { try await first.refresh() }
        #expect(revoked?.code == .loginRequired)
        #expect(revoked?.hint?.contains("twice") == true, "\(String(describing: revoked))")
    }

    @Test func theDeviceFlowAsksForTheAudience() async throws {
        let auth0 = try await Auth0Sandbox.start()
        let auth = try authenticator(auth0)
        struct Silent: DeviceCodeDisplay { func show(_ authorization: DeviceAuthorization) async {} }
        try await auth.login(.device(Silent()))
        let api = auth0.issuer.appendingPathComponent("api/resource")
        #expect(try await auth.send(HTTPRequest(method: .get, url: api)).0.status.code == 200)
    }

    @Test func logoutAtOIDCOrTheLegacyEndpoint() async throws {
        let auth0 = try await Auth0Sandbox.start()
        let modern = try authenticator(auth0)
        try await modern.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        let result = try await modern.logout()
        #expect(result.revocationAttempted && result.revocationError == nil)
        #expect(result.endSessionURL?.path == "/oidc/logout")

        let legacy = try authenticator(auth0, logout: "legacy")
        try await legacy.login(.browser(RedirectFollowingPresenter(transport: auth0.transport)))
        let ended = try await legacy.logout()
        let url = try #require(ended.endSessionURL)
        #expect(url.path == "/v2/logout" && url.query == "client_id=\(Auth0Sandbox.clientID)")
    }
}

/// The sample CLI against the stand-in on 127.0.0.1.
@Suite(.testLogging) struct Auth0CLITests {
    @Test func auth0LoginRunsEveryCommandAndExplainsAnOpaqueToken() async throws {
        let auth0 = try await Auth0Sandbox.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("auth0-login")
        let connection = [
            "--issuer", auth0.issuer.absoluteString, "--client-id", Auth0Sandbox.clientID, "--audience",
            Auth0Sandbox.apiAudience,
            "--scope", "openid email", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == true)
        let token = try await run(cli, ["token"] + connection)
        #expect(token.stdout.hasPrefix("eyJhbGciOiJSUzI1NiJ9.auth0-"))
        let api = try await run(cli, ["api", "/api/resource"] + connection)
        #expect(api.status == 0 && api.stdout.contains("#1042"), "\(api.stderr)")
        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0 && logout.stdout == "Signed out\n", "\(logout.stderr)")
        #expect(logout.stderr.contains("/oidc/logout?"))

        // Without --audience: the API refuses the opaque token, and the hint says why.
        let opaque = connection.filter { $0 != "--audience" && $0 != Auth0Sandbox.apiAudience }
        let again = try await run(cli, ["login"] + opaque, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(again.status == 0, "\(again.stderr)")
        let refused = try await run(cli, ["api", "/api/resource"] + opaque)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("hint:") && refused.stderr.contains("--audience"), "\(refused.stderr)")
        await auth0.stop()
    }
}
