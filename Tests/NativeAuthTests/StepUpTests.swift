import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Step-up (RFC 9470, and claims challenges as Microsoft Entra sends them): an API's challenge read
/// as the sign-in it asks for, and `send(_:stepUpWith:)` signing in again with it and retrying once,
/// against the in-process sandbox, whose protected resource asks for an `acr`, a recent sign-in
/// or a claims request.
@Suite(.testLogging) struct StepUpTests {
    func sandbox(
        clock: AuthClock = .system, _ change: (inout SandboxAuthorizationServer.Configuration) -> Void
    ) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true, clock: clock)
        configuration.acrValuesSupported = ["urn:sandbox:mfa"]
        change(&configuration)
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func signedIn(_ sandbox: SandboxAuthorizationServer, clock: AuthClock = .system) async throws -> Authenticator {
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "profile"])),
            store: MemoryTokenStore(), transport: sandbox.transport, clock: clock)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        return auth
    }

    @Test(arguments: [
        (
            #"Bearer error="insufficient_user_authentication", acr_values="urn:a urn:b", max_age="300""#,
            LoginOptions(maxAge: 300, acrValues: ["urn:a", "urn:b"])
        ),
        (
            // Entra's Conditional Access challenge: {"access_token":{"acrs":{"essential":true,"value":"cp1"}}}
            #"Bearer realm="", authorization_uri="https://login.example/authorize", error="insufficient_claims", claims="eyJhY2Nlc3NfdG9rZW4iOnsiYWNycyI6eyJlc3NlbnRpYWwiOnRydWUsInZhbHVlIjoiY3AxIn19fQ==""#,
            LoginOptions(claims: ["access_token": ["acrs": ["essential": true, "value": "cp1"]]])
        ),
    ])
    func aChallengeReadsAsTheSignInItAsksFor(header: String, expected: LoginOptions) throws {
        let challenge = try #require(BearerChallenge(headerValue: header))
        #expect(challenge.stepUp == expected)
    }

    @Test(arguments: [
        #"Bearer error="insufficient_user_authentication""#,
        #"Bearer error="insufficient_user_authentication", max_age="soon""#,
        #"Bearer error="insufficient_claims", claims="not base64 JSON!""#,
        #"Bearer error="invalid_token""#,
    ])
    func aChallengeThatAsksForNothingReadableIsNoStepUp(header: String) throws {
        #expect(try #require(BearerChallenge(headerValue: header)).stepUp == nil)
    }

    @Test func anACRChallengeIsSteppedUpOnceAndTheCallRetried() async throws {
        let sandbox = try await sandbox { $0.resourceACR = "urn:sandbox:mfa" }
        let auth = try await signedIn(sandbox)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))

        let error = await #expect(throws: AuthError.self) { try await auth.send(request) }
        #expect(error?.code == .stepUpRequired)
        #expect(error?.stepUp?.acrValues == ["urn:sandbox:mfa"])
        #expect(error?.message.contains("acr_values urn:sandbox:mfa") == true, "\(String(describing: error))")
        #expect(sandbox.grantCount(.refreshToken) == 0, "a refresh cannot make a sign-in stronger")

        // 20 callers meet the challenge at once: one stronger sign-in, then each call once more.
        let before = sandbox.requestCount(.authorization)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await auth.send(
                        request, stepUpWith: RedirectFollowingPresenter(transport: sandbox.transport)
                    ).0.status.code
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(sandbox.requestCount(.authorization) == before + 1)
        #expect(sandbox.lastAuthorizationQuery.first(named: "acr_values") == "urn:sandbox:mfa")
        #expect(try await auth.send(request).0.status.code == 200, "the stronger sign-in is the stored one")
        await sandbox.stop()
    }

    @Test func aMaxAgeChallengeSignsInAgainAndAnAPIThatAsksAgainIsAnError() async throws {
        let time = TestClock()
        let sandbox = try await sandbox(clock: time.clock) { $0.resourceMaxAge = .seconds(300) }
        let auth = try await signedIn(sandbox, clock: time.clock)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        #expect(try await auth.send(request).0.status.code == 200)
        time.advance(by: .seconds(600))
        let presenter = RedirectFollowingPresenter(transport: sandbox.transport)
        #expect(try await auth.send(request, stepUpWith: presenter).0.status.code == 200)
        #expect(sandbox.lastAuthorizationQuery.first(named: "max_age") == "300")

        // A resource that asks for what the server cannot give: one step-up, then the error.
        let stubborn = try await self.sandbox { $0.resourceACR = "urn:sandbox:hardware-key" }
        let other = try await signedIn(stubborn)
        let error = await #expect(throws: AuthError.self) {
            try await other.send(
                HTTPRequest(method: .get, url: stubborn.url(.resource)),
                stepUpWith: RedirectFollowingPresenter(transport: stubborn.transport))
        }
        #expect(error?.code == .idTokenInvalid, "the sign-in did not meet the acr: \(String(describing: error))")
        #expect(stubborn.requestCount(.authorization) == 2)
        await sandbox.stop()
        await stubborn.stop()
    }

    /// Step-up on scope, as the MCP authorization spec has it: a 403 `insufficient_scope` naming a
    /// scope signs in again asking for the union of the scopes held and those, once for every
    /// caller that meets it, and the call is retried; a server that keeps refusing gets one step-up,
    /// then an error that says so.
    @Test func aScopeChallengeSignsInAgainForTheUnionOnceAndNeverLoops() async throws {
        let sandbox = try await sandbox {
            $0.resourceScopes = ["tools:call"]
            $0.scopesSupported += ["tools:call", "tools:admin"]
        }
        let auth = try await signedIn(sandbox)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        let error = await #expect(throws: AuthError.self) { try await auth.send(request) }
        #expect(error?.code == .insufficientScope)
        #expect(error?.missingScopes == ["tools:call"])
        #expect(sandbox.grantCount(.refreshToken) == 0, "a refresh cannot widen the scope")

        let before = sandbox.requestCount(.authorization)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await auth.send(
                        request, stepUpWith: RedirectFollowingPresenter(transport: sandbox.transport)
                    ).0.status.code
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 10))
        #expect(sandbox.requestCount(.authorization) == before + 1)
        let asked = sandbox.lastAuthorizationQuery.first(named: "scope")?.split(separator: " ").map(String.init)
        #expect(Set(asked ?? []) == ["openid", "profile", "tools:call"], "\(asked ?? [])")
        #expect(try await auth.send(request).0.status.code == 200, "the wider sign-in is the stored one")

        // A server that names one scope and wants another: one step-up, then the error.
        let stubborn = try await self.sandbox {
            $0.resourceScopes = ["tools:admin"]
            $0.resourceNamedScopes = ["tools:call"]
            $0.scopesSupported += ["tools:call", "tools:admin"]
        }
        let other = try await signedIn(stubborn)
        let refused = await #expect(throws: AuthError.self) {
            try await other.send(
                HTTPRequest(method: .get, url: stubborn.url(.resource)),
                stepUpWith: RedirectFollowingPresenter(transport: stubborn.transport))
        }
        #expect(refused?.code == .insufficientScope)
        #expect(refused?.message.contains("still lacks a scope") == true, "\(String(describing: refused))")
        #expect(stubborn.requestCount(.authorization) == 2, "the sign-in and one step-up")
        // A 403 that names no scope is not stepped up: there is nothing to ask for.
        let silent = try await self.sandbox {
            $0.resourceScopes = ["tools:admin"]
            $0.resourceNamedScopes = []
        }
        let third = try await signedIn(silent)
        let unnamed = await #expect(throws: AuthError.self) {
            try await third.send(
                HTTPRequest(method: .get, url: silent.url(.resource)),
                stepUpWith: RedirectFollowingPresenter(transport: silent.transport))
        }
        #expect(unnamed?.code == .insufficientScope && unnamed?.missingScopes == nil)
        #expect(silent.requestCount(.authorization) == 1)
        await sandbox.stop()
        await stubborn.stop()
        await silent.stop()
    }

    @Test func aClaimsChallengeSignsInWithTheClaimsRequest() async throws {
        let claims: JSONObject = ["access_token": ["acrs": ["essential": true, "value": "cp1"]]]
        let sandbox = try await sandbox { $0.resourceClaimsChallenge = claims }
        let auth = try await signedIn(sandbox)
        let request = HTTPRequest(method: .get, url: sandbox.url(.resource))
        let (response, _) = try await auth.send(
            request, stepUpWith: RedirectFollowingPresenter(transport: sandbox.transport))
        #expect(response.status.code == 200)
        let sent = try #require(sandbox.lastAuthorizationQuery.first(named: "claims"))
        #expect(try JSONValue.parse(Data(sent.utf8)).objectValue == claims)
        await sandbox.stop()
    }
}
