import Foundation
import HTTPTypes
import Logging
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// The one step-up decision (`StepUpPlan`), as a pure value: what it asks for after each refusal,
/// once per operation, and the error it ends with.
@Suite(.testLogging) struct StepUpPlanTests {
    /// The sender's reading of an API's answer with `challenge`.
    private func refusal(_ status: Int, _ challenge: String) throws -> AuthError {
        let client = ExchangeClient(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(issuer: URL(string: "https://id.test"), clientID: "c")),
            transport: FakeTransport { _, _ in (HTTPResponse(status: .ok), Data()) }, clock: .system,
            logger: .init(label: "test"))
        var response = HTTPResponse(status: .init(code: status))
        response.headerFields[.wwwAuthenticate] = challenge
        return try #require(client.stepUpRefusal(response))
    }

    private func scopes(_ step: StepUpPlan.Step) -> [String]? {
        if case .signIn(let scopes, _) = step { return scopes }
        return nil
    }

    @Test func aScopeRefusalAsksOnceForTheUnionAndTheSecondIsRewritten() throws {
        let error = try refusal(403, #"Bearer error="insufficient_scope", scope="tools:call openid""#)
        var plan = StepUpPlan()
        #expect(scopes(plan.next(after: error, held: ["openid", "profile"])) == ["openid", "profile", "tools:call"])
        #expect(plan.steppedUp && plan.asked == ["openid", "profile", "tools:call"])
        guard case .stop(let again) = plan.next(after: error, held: ["openid", "profile"]) else {
            Issue.record("a second refusal must stop")
            return
        }
        #expect(again.code == .insufficientScope && again.missingScopes == ["tools:call", "openid"])
        #expect(again.message.contains("still lacks a scope"), "\(again.message)")
        #expect(again.message.contains("still refused after a sign-in for openid profile tools:call, not asking again"))
        #expect(again.message.contains("(granted: openid profile)"), "\(again.message)")
    }

    @Test func aRefusalNamingNothingNewStopsWithTheErrorAsItIs() throws {
        let held = try refusal(403, #"Bearer error="insufficient_scope", scope="openid""#)
        var plan = StepUpPlan()
        guard case .stop(let error) = plan.next(after: held, held: ["openid"]) else {
            Issue.record("nothing to ask for")
            return
        }
        #expect(error.message == held.message && !plan.steppedUp)
        // Naming none: the scopes the resource lists, else nothing.
        let silent = try refusal(403, #"Bearer error="insufficient_scope""#)
        #expect(scopes(plan.next(after: silent, held: ["openid"], listed: ["openid", "mcp"])) == ["openid", "mcp"])
        var unlisted = StepUpPlan()
        if case .signIn = unlisted.next(after: silent, held: ["openid"]) { Issue.record("nothing named or listed") }
    }

    @Test func aHostileChallengeNamingTooManyScopesIsNotAskedFor() throws {
        let many = (0..<StepUpPlan.maximumScopes).map { "s\($0)" }.joined(separator: " ")
        let error = try refusal(403, #"Bearer error="insufficient_scope", scope=""# + many + "\"")
        var plan = StepUpPlan()
        guard case .stop = plan.next(after: error, held: ["openid"]) else {
            Issue.record("\(StepUpPlan.maximumScopes + 1) scopes are not asked for")
            return
        }
    }

    @Test func aStrongerSignInIsAskedOnceWithItsOptionsAndTheScopesHeld() throws {
        let error = try refusal(401, #"Bearer error="insufficient_user_authentication", acr_values="mfa""#)
        #expect(error.code == .stepUpRequired)
        var plan = StepUpPlan()
        guard case .signIn(let scopes, let options) = plan.next(after: error, held: ["openid"]) else {
            Issue.record("a stronger sign-in")
            return
        }
        #expect(scopes == ["openid"] && options.acrValues == ["mfa"])
        guard case .stop(let again) = plan.next(after: error, held: ["openid"]) else {
            Issue.record("once per operation")
            return
        }
        #expect(again.code == .stepUpRequired && again.message == error.message)
        // Any other refusal stops as it is.
        var other = StepUpPlan()
        guard case .stop(let refused) = other.next(after: AuthError(.invalidToken, "refused"), held: []) else {
            Issue.record("not a step-up")
            return
        }
        #expect(refused.code == .invalidToken)
    }

    @Test func onlyAnAnswerAskingForMoreIsReadAsARefusalToStepUp() throws {
        let client = ExchangeClient(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(issuer: URL(string: "https://id.test"), clientID: "c")),
            transport: FakeTransport { _, _ in (HTTPResponse(status: .ok), Data()) }, clock: .system,
            logger: .init(label: "test"))
        for (status, challenge) in [
            (401, #"Bearer error="invalid_token""#), (403, ""), (200, ""), (401, #"DPoP error="use_dpop_nonce""#),
        ] {
            var response = HTTPResponse(status: .init(code: status))
            if !challenge.isEmpty { response.headerFields[.wwwAuthenticate] = challenge }
            #expect(client.stepUpRefusal(response) == nil, "\(status) \(challenge)")
        }
    }
}
