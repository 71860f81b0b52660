import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// An API's answer read once (`ResourceAnswer`) and what is done about it (`ResourceRetry`), case
/// by case, without a server.
@Suite(.testLogging) struct ResourceRetryTests {
    private func answer(_ status: Int, _ challenges: [String] = [], nonce: Bool = false) -> ResourceAnswer {
        var response = HTTPResponse(status: .init(code: status))
        for challenge in challenges {
            response.headerFields.append(HTTPField(name: .wwwAuthenticate, value: challenge))
        }
        return ResourceAnswer(response, gaveNonce: nonce)
    }

    private let fresh = ResourceRetry.Attempt(followsResourceMetadata: false)

    @Test func anAnswerIsReadFromAllItsChallengesOnce() {
        #expect(answer(200).reading == .done)
        #expect(answer(404, [#"Bearer error="invalid_token""#]).reading == .done, "only 401 and 403 are read")
        #expect(answer(401).reading == .tokenRefused)
        #expect(answer(401, [#"Bearer error="invalid_token""#]).reading == .tokenRefused)
        // A server that takes both schemes sends one challenge of each, in one field or two.
        #expect(
            answer(401, [#"Bearer realm="api", DPoP error="use_dpop_nonce", algs="ES256""#]).reading
                == .proofRefused(nonceAsked: true))
        #expect(
            answer(401, [#"Bearer realm="api""#, #"DPoP error="invalid_dpop_proof""#]).reading
                == .proofRefused(nonceAsked: false))
        let stepUp = answer(
            401, [#"Bearer error="insufficient_user_authentication", acr_values="mfa", max_age="300""#])
        #expect(stepUp.reading == .stepUpAsked(LoginOptions(maxAge: 300, acrValues: ["mfa"])))
        #expect(answer(403, [#"Bearer error="insufficient_scope", scope="write""#]).reading == .scopeMissing)
        #expect(answer(403).reading == .done, "a 403 without a challenge is the app's")
        let pointer = answer(
            401, [#"Bearer resource_metadata="https://api.test/.well-known/oauth-protected-resource""#])
        #expect(pointer.pointsToResourceMetadata)
        #expect(pointer.challenge?.parameters["resource_metadata"]?.hasPrefix("https://api.test/") == true)
    }

    @Test func aRefusedProofGetsOneNewProofAndNeverARefresh() {
        let nonce = answer(401, [#"DPoP error="use_dpop_nonce""#], nonce: true)
        #expect(ResourceRetry.next(after: nonce, fresh) == .newProof)
        var tried = fresh
        tried.newProofSent = true
        #expect(ResourceRetry.next(after: nonce, tried) == .fail(.tokenRefused))
        let withoutNonce = answer(401, [#"DPoP error="use_dpop_nonce""#])
        #expect(ResourceRetry.next(after: withoutNonce, fresh) == .fail(.nonceMissing))
        #expect(ResourceRetry.next(after: answer(401, [#"DPoP error="invalid_dpop_proof""#]), fresh) == .newProof)
    }

    @Test func aRefusedTokenGetsOneNewTokenThenFails() {
        #expect(ResourceRetry.next(after: answer(401), fresh) == .newToken)
        var tried = fresh
        tried.newTokenSent = true
        #expect(ResourceRetry.next(after: answer(401), tried) == .fail(.tokenRefused))
        #expect(ResourceRetry.next(after: answer(200), tried) == .deliver)
    }

    @Test func aStepUpOrAMissingScopeIsNeverRetried() {
        let stepUp = answer(401, [#"Bearer error="insufficient_user_authentication", acr_values="mfa""#])
        #expect(ResourceRetry.next(after: stepUp, fresh) == .fail(.stepUp(LoginOptions(acrValues: ["mfa"]))))
        #expect(
            ResourceRetry.next(after: answer(403, [#"Bearer error="insufficient_scope""#]), fresh)
                == .fail(.scopeMissing))
    }

    @Test func resourceMetadataIsFollowedOnlyWhenConfiguredAndOnlyOnce() {
        let pointer = answer(
            401, [#"Bearer resource_metadata="https://api.test/.well-known/oauth-protected-resource""#])
        #expect(ResourceRetry.next(after: pointer, fresh) == .newToken, "not followed unless configured")
        let following = ResourceRetry.Attempt(followsResourceMetadata: true)
        #expect(ResourceRetry.next(after: pointer, following) == .followResourceMetadata)
        // After following, the resource's own token is sent with an attempt that follows nothing.
        #expect(ResourceRetry.next(after: pointer, fresh) == .newToken)
        #expect(ResourceRetry.next(after: answer(401), following) == .newToken, "a plain 401 is not followed")
    }
}
