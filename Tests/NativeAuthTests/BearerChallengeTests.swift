@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct BearerChallengeTests {
    @Test func parsesRFC6750Example() throws {
        // RFC 6750 §3
        let challenge = try #require(
            BearerChallenge(
                headerValue:
                    #"Bearer realm="example", error="invalid_token", error_description="The access token expired""#
            )
        )
        #expect(challenge.parameters["realm"] == "example")
        #expect(challenge.error == "invalid_token")
        #expect(challenge.errorDescription == "The access token expired")
    }

    @Test func findsBearerAmongOtherSchemesAndHandlesEscapesAndTokens() throws {
        let challenge = try #require(
            BearerChallenge(headerValue: #"Basic realm="x, y", BEARER error=insufficient_scope, scope="a \"b\" c""#)
        )
        #expect(challenge.error == "insufficient_scope")
        #expect(challenge.scope == #"a "b" c"#)
    }

    @Test func noBearerChallenge() {
        #expect(BearerChallenge(headerValue: #"Basic realm="x""#) == nil)
        #expect(BearerChallenge(headerValue: "") == nil)
        #expect(BearerChallenge(headerValue: "Bearer")?.error == nil)
    }
}
