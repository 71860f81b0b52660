import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthKeycloak
import NativeAuthTesting
import TestSupport
import Testing

@Suite(.testLogging) struct KeycloakProviderTests {
    func configuration(_ keycloak: SandboxAuthorizationServer, _ more: JSONObject = [:]) -> ProviderConfiguration {
        var additional: JSONObject = [
            "base_url": .string(keycloak.host.absoluteString), "realm": .string(KeycloakSandbox.realm),
        ]
        for member in more { additional[member.key] = member.value }
        return ProviderConfiguration(
            provider: KeycloakProvider.id, clientID: KeycloakSandbox.clientID, scopes: ["openid", "email"],
            additional: additional)
    }

    func signedIn(_ keycloak: SandboxAuthorizationServer, _ more: JSONObject = [:]) async throws -> Authenticator {
        let auth = Authenticator(
            provider: try KeycloakProvider(configuration: configuration(keycloak, more)), store: MemoryTokenStore(),
            transport: keycloak.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: keycloak.transport)))
        return auth
    }

    @Test func theIssuerComesFromTheBaseURLAndRealm() throws {
        let modern = try KeycloakProvider(
            configuration: ProviderConfiguration(
                clientID: "c", additional: ["base_url": "https://sso.example.com/", "realm": "my realm"]))
        #expect(modern.configuration.issuer?.absoluteString == "https://sso.example.com/realms/my%20realm")
        let legacy = try KeycloakProvider(
            configuration: ProviderConfiguration(
                clientID: "c", additional: ["base_url": "https://sso.example.com/auth", "realm": "acme"]))
        #expect(legacy.configuration.issuer?.absoluteString == "https://sso.example.com/auth/realms/acme")
        let offline = try KeycloakProvider(
            configuration: ProviderConfiguration(
                issuer: URL(string: "https://sso.example.com/realms/acme"), clientID: "c",
                additional: ["offline_tokens": true]))
        #expect(offline.configuration.scopes == ["openid", "offline_access"])

        let missing = #expect(throws: AuthError.self) {
            try KeycloakProvider(
                configuration: ProviderConfiguration(clientID: "c", additional: ["base_url": "https://sso.example.com"])
            )
        }
        #expect(missing?.field == "realm")
        let slash = #expect(throws: AuthError.self) {
            try KeycloakProvider(
                configuration: ProviderConfiguration(
                    clientID: "c", additional: ["base_url": "https://sso.example.com", "realm": "a/../b"]))
        }
        #expect(slash?.field == "realm")
        let bad = #expect(throws: AuthError.self) {
            try KeycloakProvider(
                configuration: ProviderConfiguration(
                    issuer: URL(string: "https://sso.example.com/realms/acme"), clientID: "c",
                    additional: ["offline_tokens": "yes"]))
        }
        #expect(bad?.field == "offline_tokens")
    }

    /// `refresh_expires_in` is the session's idle limit, kept; an offline token's 0 means none.
    /// `kc_idp_hint` goes on the authorization request.
    @Test func refreshExpiryOfflineTokensAndTheIdentityProviderHint() async throws {
        let keycloak = try await KeycloakSandbox.start()
        let auth = try await signedIn(keycloak, ["idp_hint": "corporate-saml"])
        let tokens = try #require(try await auth.currentTokens())
        let idle = try #require(tokens.refreshExpiresAt).timeIntervalSinceNow
        #expect(idle > 1700 && idle <= 1800, "\(idle)")
        #expect(keycloak.lastAuthorizationQuery.first(named: "kc_idp_hint") == "corporate-saml")
        #expect(tokens.subject == "f3b1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d")

        let offline = try await signedIn(keycloak, ["offline_tokens": true])
        let offlineTokens = try #require(try await offline.currentTokens())
        #expect(offlineTokens.scopes.contains("offline_access"))
        #expect(offlineTokens.refreshExpiresAt == nil, "refresh_expires_in 0: no expiry")

        // An administrator signs every session out: the online sign-in must sign in again, with
        // Keycloak's reason; the offline one refreshes.
        keycloak.endSignIns { !$0.contains("offline_access") }
        let ended = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(ended?.code == .loginRequired)
        #expect(ended?.message.contains("Keycloak session ended") == true, "\(String(describing: ended))")
        #expect(ended?.hint?.contains("offline_tokens") == true)
        try await offline.refresh()

        keycloak.endSignIns { $0.contains("offline_access") }
        let revoked = await #expect(throws: AuthError.self) { try await offline.refresh() }
        #expect(revoked?.code == .loginRequired)
        #expect(revoked?.message.contains("offline token") == true, "\(String(describing: revoked))")
    }

    /// A realm that takes authorization requests by reference only: the sign-in pushes them.
    @Test func aRealmRequiringPushedRequestsGetsThem() async throws {
        let keycloak = try await KeycloakSandbox.start(requiresPushedRequests: true)
        _ = try await signedIn(keycloak)
        #expect(keycloak.requestLog.contains { $0.path == "/realms/acme/protocol/openid-connect/ext/par/request" })
        let query = keycloak.lastBrowserQuery
        #expect(query.first(named: "request_uri")?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
        #expect(query.first(named: "code_challenge") == nil, "the request itself was pushed")
    }

    @Test func theDeviceFlowAndLogoutWithRevocation() async throws {
        let keycloak = try await KeycloakSandbox.start()
        let auth = Authenticator(
            provider: try KeycloakProvider(configuration: configuration(keycloak)), store: MemoryTokenStore(),
            transport: keycloak.transport)
        struct Silent: DeviceCodeDisplay { func show(_ authorization: DeviceAuthorization) async {} }
        let tokens = try await auth.login(.device(Silent()))
        #expect(tokens.refreshToken != nil)

        // Keycloak's metadata lists no `none` for revocation, yet takes a public client's: it revokes.
        let result = try await auth.logout()
        #expect(result.revocationAttempted && result.revocationError == nil, "\(result)")
        #expect(keycloak.requestLog.contains { $0.path == "/realms/acme/protocol/openid-connect/revoke" })
        let url = try #require(result.endSessionURL)
        #expect(url.path == "/realms/acme/protocol/openid-connect/logout")
        let query = FormURLEncoding.decode(url.query ?? "")
        #expect(query.first(named: "client_id") == KeycloakSandbox.clientID)
        let refreshed = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(refreshed?.code == .loginRequired, "signed out")
    }

    @Test func theErrorMapperConforms() throws {
        try ErrorMapperConformance(
            KeycloakErrorMapper(),
            own: [
                .init(
                    .refresh, status: 400, form: "error=invalid_grant&error_description=Session+not+active",
                    expecting: .loginRequired, oauthError: "invalid_grant"),
                .init(
                    .tokenExchange, status: 400,
                    form: "error=unauthorized_client&error_description=Client+not+allowed+for+direct+access+grants",
                    expecting: .configurationInvalid, oauthError: "unauthorized_client"),
            ]
        ).run()
    }
}

/// The sample CLI against the stand-in on 127.0.0.1.
@Suite(.testLogging) struct KeycloakCLITests {
    @Test func keycloakLoginRunsEveryCommandEndToEnd() async throws {
        let keycloak = try await KeycloakSandbox.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("keycloak-login")
        let connection = [
            "--base-url", keycloak.host.absoluteString, "--realm", KeycloakSandbox.realm, "--client-id",
            KeycloakSandbox.clientID,
            "--scope", "openid email", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true)
        #expect(object["refresh_expires_at"]?.stringValue != nil, "refresh_expires_in shown: \(status.stdout)")
        let token = try await run(cli, ["token"] + connection)
        #expect(token.stdout.hasPrefix("eyJhbGciOiJSUzI1NiJ9.keycloak-access-"))
        let api = try await run(cli, ["api", "/protocol/openid-connect/userinfo"] + connection)
        #expect(api.status == 0 && api.stdout.contains("alice@acme.test"), "\(api.stderr)")
        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0 && logout.stdout == "Signed out\n", "\(logout.stderr)")
        #expect(logout.stderr.contains("/realms/acme/protocol/openid-connect/logout?"))
        let after = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(after.stdout).objectValue?["signed_in"] == false)
        await keycloak.stop()
    }
}
