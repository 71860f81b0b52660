import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthOkta
import NativeAuthTesting
import TestSupport
import Testing

@Suite(.testLogging) struct OktaProviderTests {
    func authenticator(_ okta: OktaSandbox, server: String) throws -> Authenticator {
        Authenticator(
            provider: try OktaProvider(
                configuration: ProviderConfiguration(
                    provider: OktaProvider.id, issuer: URL(string: okta.issuer(server)), clientID: OktaSandbox.clientID,
                    scopes: ["openid", "profile"])),
            store: MemoryTokenStore(), transport: okta.transport)
    }

    @Test func theIssuerComesFromTheDomainAndTheAuthorizationServer() throws {
        func issuer(_ additional: JSONObject) throws -> String? {
            try OktaProvider(configuration: ProviderConfiguration(clientID: "c", additional: additional))
                .configuration.issuer?.absoluteString
        }
        #expect(try issuer(["domain": "acme.okta.com"]) == "https://acme.okta.com/oauth2/default")
        #expect(
            try issuer(["domain": "https://acme.okta.com/", "authorization_server": "org"]) == "https://acme.okta.com")
        #expect(
            try issuer(["domain": "acme.okta.com", "authorization_server": .string(OktaSandbox.customServer)])
                == "https://acme.okta.com/oauth2/\(OktaSandbox.customServer)")
        let provider = try OktaProvider(
            configuration: ProviderConfiguration(clientID: "c", additional: ["domain": "a.okta.com"]))
        #expect(provider.configuration.scopes.contains("offline_access") && !provider.isOrgAuthorizationServer)
        let bad = #expect(throws: AuthError.self) {
            try OktaProvider(
                configuration: ProviderConfiguration(
                    clientID: "c", additional: ["domain": "acme.okta.com", "authorization_server": "../x"]))
        }
        #expect(bad?.field == "authorization_server")
        let missing = #expect(throws: AuthError.self) {
            try OktaProvider(configuration: ProviderConfiguration(clientID: "c"))
        }
        #expect(missing?.field == "domain")
    }

    /// Each server signs in with its own endpoints and issuer; the management API takes only the org
    /// server's tokens, and says why it refuses a custom server's.
    @Test func orgAndCustomAuthorizationServers() async throws {
        let okta = try await OktaSandbox.start()
        for server in ["org", "default", OktaSandbox.customServer] {
            let auth = try authenticator(okta, server: server)
            let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: okta.transport)))
            #expect(tokens.subject == "00uid4BxXw6I6TV4m0g3" && tokens.refreshToken != nil, "\(server)")
            try await auth.refresh()
            let me = URL(string: okta.host + "/api/v1/users/me")!
            if server == "org" {
                #expect(try await auth.send(HTTPRequest(method: .get, url: me)).0.status.code == 200)
            } else {
                let refused = await #expect(throws: AuthError.self) {
                    try await auth.send(HTTPRequest(method: .get, url: me))
                }
                #expect(refused?.code == .invalidToken && refused?.hint?.contains("org authorization server") == true)
            }
        }
        #expect(
            okta.servers.values.allSatisfy { $0.requestCount(.pushedAuthorization) == 0 },
            "no pushed request unless required")
    }

    /// A policy that does not allow the device flow, and the device flow where one does.
    @Test func theDeviceFlowAndAPolicyThatRefusesIt() async throws {
        let okta = try await OktaSandbox.start()
        struct Silent: DeviceCodeDisplay { func show(_ authorization: DeviceAuthorization) async {} }
        let auth = try authenticator(okta, server: "default")
        #expect(try await auth.login(.device(Silent())).refreshToken != nil)
        #expect(okta.server("default").requestLog.contains { $0.path == "/oauth2/default/v1/device/authorize" })

        okta.server("default").failNext(
            1, .deviceAuthorization,
            with: .oauthError("access_denied", status: 403, description: OktaSandbox.policyRefusal))
        let refused = await #expect(throws: AuthError.self) { try await auth.login(.device(Silent())) }
        #expect(refused?.code == .configurationInvalid, "\(String(describing: refused))")
        #expect(refused?.hint?.contains("Access Policies") == true)
    }

    @Test func logoutRevokesAndEndsTheSessionWithTheIDToken() async throws {
        let okta = try await OktaSandbox.start()
        let auth = try authenticator(okta, server: "default")
        try await auth.login(.browser(RedirectFollowingPresenter(transport: okta.transport)))
        let result = try await auth.logout()
        #expect(result.revocationAttempted && result.revocationError == nil)
        #expect(okta.revocationHints == ["refresh_token", "access_token"])
        let url = try #require(result.endSessionURL)
        #expect(url.path == "/oauth2/default/v1/logout" && url.query?.contains("id_token_hint=") == true)
    }

    @Test func theErrorMapperConforms() throws {
        try ErrorMapperConformance(
            OktaErrorMapper(),
            own: [
                .init(
                    .tokenExchange, status: 403,
                    form: "error=access_denied&error_description=Policy+evaluation+failed+for+this+request",
                    expecting: .configurationInvalid, oauthError: "access_denied"),
                .init(
                    .refresh, status: 400,
                    form:
                        "error=unauthorized_client&error_description=The+client+is+not+authorized+to+use+the+provided+grant+type.+Configured+grant+types%3A+%5Bauthorization_code%5D.",
                    expecting: .configurationInvalid, oauthError: "unauthorized_client"),
                .init(
                    .apiRequest, status: 401,
                    json: #"{"errorCode": "E0000011", "errorSummary": "Invalid token provided"}"#,
                    expecting: .invalidToken),
            ]
        ).run()
    }
}

/// The sample CLI against the stand-in on 127.0.0.1.
@Suite(.testLogging) struct OktaCLITests {
    @Test func oktaLoginRunsEveryCommandEndToEnd() async throws {
        let okta = try await OktaSandbox.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("okta-login")
        let connection = [
            "--issuer", okta.issuer("default"), "--client-id", OktaSandbox.clientID, "--scope", "openid profile",
            "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(status.stdout).objectValue?["signed_in"] == true)
        let token = try await run(cli, ["token"] + connection)
        #expect(token.stdout.hasPrefix("eyJraWQiOiJva3RhIn0.okta-access-"))
        let api = try await run(cli, ["api", okta.host + "/orders"] + connection)
        #expect(api.status == 0 && api.stdout.contains("alice@acme.test"), "\(api.stderr)")
        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0 && logout.stdout == "Signed out\n", "\(logout.stderr)")
        #expect(logout.stderr.contains("/oauth2/default/v1/logout?"))
        await okta.stop()
    }
}
