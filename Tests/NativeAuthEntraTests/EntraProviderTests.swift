import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthEntra
import NativeAuthTesting
import TestSupport
import Testing

/// Records the user codes shown.
struct Recorder: DeviceCodeDisplay {
    let shown: Shared<[String]>
    func show(_ authorization: DeviceAuthorization) async { shown.update { $0.append(authorization.userCode) } }
}

@Suite(.testLogging) struct EntraProviderTests {
    func configuration(_ entra: EntraSandbox, tenant: String, scopes: [String] = ["openid", "profile"])
        -> ProviderConfiguration
    {
        ProviderConfiguration(
            provider: EntraProvider.id, clientID: EntraSandbox.clientID, scopes: scopes,
            additional: [
                "tenant": .string(tenant), "authority_host": .string(entra.host),
                "graph_url": .string(entra.host + "/v1.0"),
            ])
    }

    func signedIn(_ entra: EntraSandbox, tenant: String, scopes: [String] = ["openid", "profile"]) async throws
        -> Authenticator
    {
        let auth = Authenticator(
            provider: try EntraProvider(configuration: configuration(entra, tenant: tenant, scopes: scopes)),
            store: MemoryTokenStore(), transport: entra.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: entra.transport)))
        return auth
    }

    @Test func theIssuerComesFromTheTenant() throws {
        let provider = try EntraProvider(
            configuration: ProviderConfiguration(clientID: "c", additional: ["tenant": "organizations"]))
        #expect(provider.configuration.issuer?.absoluteString == "https://login.microsoftonline.com/organizations/v2.0")
        #expect(provider.tenantIssuerTemplate == "https://login.microsoftonline.com/{tenantid}/v2.0")
        #expect(provider.configuration.scopes == ["openid", "offline_access"], "a refresh token needs offline_access")
        #expect(provider.graphURL.absoluteString == "https://graph.microsoft.com/v1.0")

        let single = try EntraProvider(
            configuration: ProviderConfiguration(
                issuer: URL(string: "https://login.microsoftonline.us/\(EntraSandbox.homeTenant)/v2.0"), clientID: "c"))
        #expect(single.tenant == EntraSandbox.homeTenant && !single.isMultiTenant)
        #expect(single.tenantIssuerTemplate == nil, "a single tenant's issuer is checked exactly")

        for bad in ["../evil", "a/b", "tenant?x=1", ""] {
            let error = #expect(throws: AuthError.self) {
                try EntraProvider(
                    configuration: ProviderConfiguration(clientID: "c", additional: ["tenant": .string(bad)]))
            }
            #expect(error?.field == "tenant", "\(bad)")
        }
        let missing = #expect(throws: AuthError.self) {
            try EntraProvider(configuration: ProviderConfiguration(clientID: "c"))
        }
        #expect(missing?.message.contains("tenant") == true)
    }

    /// `organizations`: discovery names the `{tenantid}` template, and the ID token's `iss` must be
    /// the template with its own `tid`, checked, not skipped.
    @Test func aMultiTenantSignInChecksTheIssuerAgainstTheTokensOwnTenant() async throws {
        let entra = try await EntraSandbox.start()
        let auth = try await signedIn(entra, tenant: "organizations")
        let tokens = try #require(try await auth.currentTokens())
        #expect(tokens.subject == "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
        #expect(tokens.refreshToken != nil)

        // A token whose tid is not the tenant its iss names is refused, at refresh (the refreshed
        // tokens are discarded: a sign-in is needed) as at sign-in.
        entra.forgeTenant("ffffffff-eeee-dddd-cccc-bbbbbbbbbbbb")
        let refused = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(refused?.code == .loginRequired, "\(String(describing: refused))")
        let cause = refused?.underlying as? AuthError
        #expect(cause?.code == .idTokenInvalid)
        #expect(
            cause?.message.contains("tid \"ffffffff-eeee-dddd-cccc-bbbbbbbbbbbb\"") == true,
            "\(String(describing: cause))")
        let again = await #expect(throws: AuthError.self) {
            try await signedIn(entra, tenant: "organizations")
        }
        #expect(again?.code == .idTokenInvalid)

        // consumers: personal accounts, all in Microsoft's one consumer tenant.
        entra.forgeTenant(nil)
        entra.signInTo(EntraSandbox.consumersTenant)
        let personal = try await signedIn(entra, tenant: "consumers")
        #expect(try await personal.currentTokens()?.idToken != nil)
    }

    /// A tenant id is checked exactly: a token from another tenant is refused. A tenant's domain
    /// takes the id its discovery names, and then that id only.
    @Test func aSingleTenantIsCheckedExactly() async throws {
        let entra = try await EntraSandbox.start()
        _ = try await signedIn(entra, tenant: EntraSandbox.homeTenant)
        _ = try await signedIn(entra, tenant: EntraSandbox.homeDomain)

        entra.signInTo("ffffffff-eeee-dddd-cccc-bbbbbbbbbbbb")
        for tenant in [EntraSandbox.homeTenant, EntraSandbox.homeDomain] {
            let refused = await #expect(throws: AuthError.self) { try await signedIn(entra, tenant: tenant) }
            #expect(refused?.code == .idTokenInvalid, "\(tenant): \(String(describing: refused))")
        }
    }

    /// Entra wants `scope` on every refresh; a `.default` scope goes as it is.
    @Test func everyRefreshSendsTheScopes() async throws {
        let entra = try await EntraSandbox.start()
        let auth = try await signedIn(entra, tenant: "organizations", scopes: ["openid", "api://contoso-api/.default"])
        let before = try #require(try await auth.currentTokens()?.refreshToken)
        try await auth.refresh()
        let form = try #require(entra.refreshForms.last)
        #expect(form.first(named: "scope") == "openid api://contoso-api/.default offline_access")
        let after = try #require(try await auth.currentTokens())
        #expect(after.refreshToken != before, "Entra rotates refresh tokens")
        #expect(after.scopes.contains("api://contoso-api/.default"))
    }

    @Test func theDeviceFlowUsesTheDevicecodeEndpoint() async throws {
        let entra = try await EntraSandbox.start()
        let auth = Authenticator(
            provider: try EntraProvider(configuration: configuration(entra, tenant: "organizations")),
            store: MemoryTokenStore(), transport: entra.transport)
        let shown = Shared<[String]>([])
        let tokens = try await auth.login(.device(Recorder(shown: shown)))
        #expect(tokens.refreshToken != nil)
        #expect(shown.value.count == 1 && shown.value.first?.isEmpty == false)
        #expect(
            entra.tenant("organizations").requestLog.contains { $0.path == "/organizations/oauth2/v2.0/devicecode" })
    }

    /// AADSTS codes become clear errors; a claims challenge at the token endpoint is a step-up.
    @Test func aadstsCodesAtRefreshAreMapped() async throws {
        let entra = try await EntraSandbox.start()
        let auth = try await signedIn(entra, tenant: "organizations")
        let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        entra.refuseNext(.init(error: "interaction_required", code: 50076, text: "you must use MFA.", claims: claims))
        let stepUp = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(stepUp?.code == .stepUpRequired, "\(String(describing: stepUp))")
        #expect(stepUp?.stepUp?.claims?["access_token"] != nil)
        #expect(stepUp?.description.contains("AADSTS50076") == true)

        let cases: [(EntraSandbox.Refusal, AuthError.Code, String)] = [
            (
                .init(error: "interaction_required", code: 50076, text: "you must use MFA."), .loginRequired,
                "second factor"
            ),
            (
                .init(error: "invalid_grant", code: 700082, text: "The refresh token has expired."), .loginRequired,
                "sign in again"
            ),
            (
                .init(error: "invalid_grant", code: 65001, text: "The user has not consented."), .loginRequired,
                "--prompt consent"
            ),
            (
                .init(error: "invalid_grant", code: 50020, text: "User account does not exist in tenant."),
                .configurationInvalid, "tenant"
            ),
            (
                .init(error: "invalid_client", code: 7_000_218, text: "must contain client_secret."),
                .configurationInvalid, "public client flows"
            ),
        ]
        for (refusal, code, hint) in cases {
            entra.refuseNext(refusal)
            let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
            #expect(error?.code == code, "AADSTS\(refusal.code): \(String(describing: error))")
            #expect(error?.hint?.contains(hint) == true, "AADSTS\(refusal.code): \(String(describing: error?.hint))")
            // The refresh token is kept unless the error says a sign-in is needed.
            if code != .loginRequired {
                #expect(try await auth.currentTokens()?.refreshToken != nil)
            }
            if code == .loginRequired {
                try await auth.login(.browser(RedirectFollowingPresenter(transport: entra.transport)))
            }
        }
    }

    @Test func theErrorMapperConforms() throws {
        try ErrorMapperConformance(
            EntraErrorMapper(),
            own: [
                .init(
                    .refresh, status: 400,
                    json:
                        #"{"error": "invalid_grant", "error_description": "AADSTS700082: The refresh token has expired.", "error_codes": [700082]}"#,
                    expecting: .loginRequired, oauthError: "invalid_grant"),
                .init(
                    .tokenExchange, status: 400,
                    json:
                        #"{"error": "invalid_request", "error_description": "AADSTS50194: Application is not configured as a multi-tenant application."}"#,
                    expecting: .configurationInvalid, oauthError: "invalid_request"),
                .init(
                    .tokenExchange, status: 400,
                    json: #"{"error": "authorization_declined", "error_description": "AADSTS70000: declined"}"#,
                    expecting: .authorizationFailed, oauthError: "authorization_declined"),
            ]
        ).run()
    }

    /// RP-initiated logout at the tenant's end-session endpoint; no revocation endpoint exists.
    @Test func logoutEndsTheSessionAtTheTenantsEndpoint() async throws {
        let entra = try await EntraSandbox.start()
        let auth = try await signedIn(entra, tenant: "organizations")
        let result = try await auth.logout()
        #expect(result.removedTokens && !result.revocationAttempted)
        let url = try #require(result.endSessionURL)
        #expect(url.path == "/organizations/oauth2/v2.0/logout")
        #expect(url.query?.contains("id_token_hint=") == true)
    }
}

/// The sample CLI against the stand-in on 127.0.0.1: every command a person runs.
@Suite(.testLogging) struct EntraCLITests {
    @Test func entraLoginRunsEveryCommandEndToEnd() async throws {
        let entra = try await EntraSandbox.start(mode: .live)
        let directory = try TemporaryDirectory()
        let cli = cliPath("entra-login")
        let connection = [
            "--tenant", "organizations", "--authority-host", entra.host, "--graph-url", entra.host + "/v1.0",
            "--client-id", EntraSandbox.clientID, "--scope", "openid profile User.Read", "--store",
            directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")

        let status = try await run(cli, ["status", "--json"] + connection)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true, "\(status.stdout)")
        let token = try await run(cli, ["token"] + connection)
        #expect(token.status == 0 && token.stdout.hasPrefix("eyJ0eXAi.entra-access-"))
        let me = try await run(cli, ["api", "/me"] + connection)
        #expect(me.status == 0, "\(me.stderr)")
        #expect(me.stdout.contains("alice@contoso.onmicrosoft.com"))
        let refresh = try await run(cli, ["refresh"] + connection)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(entra.refreshForms.last?.first(named: "scope") == "openid profile User.Read offline_access")
        let logout = try await run(cli, ["logout", "--no-browser"] + connection)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "Signed out\n")
        #expect(logout.stderr.contains("/organizations/oauth2/v2.0/logout?"))
        let after = try await run(cli, ["status", "--json"] + connection)
        #expect(try JSONValue.parse(after.stdout).objectValue?["signed_in"] == false)
        for output in [login, status, token, me, refresh, logout] {
            #expect(!output.stderr.contains("entra-refresh-") && !output.stdout.contains("entra-refresh-"))
        }
        await entra.stop()
    }
}
