import Foundation
import HTTPTypes
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct TokenResponseTests {
    private let context = TokenResponseDecoder.Context(requestedScopes: ["openid", "profile"], receivedAt: fixedNow)

    private func decode(
        _ body: String,
        status: HTTPResponse.Status = .ok,
        contentType: String = "application/json",
        context: TokenResponseDecoder.Context? = nil
    ) throws -> TokenSet {
        // As the exchange path reads a token endpoint's answer, with the standard provider's hooks.
        let client = try ExchangeClient.forTests(issuer: try #require(URL(string: "https://idp.example")))
        let context = context ?? self.context
        let result = client.read(
            HTTPResponse(status: status, headerFields: [.contentType: contentType]),
            Data(body.utf8),
            operation: context.previous == nil ? .tokenExchange : .refresh,
            requiredKey: "access_token"
        ) { fields in try TokenResponseDecoder.decode(fields, context: context) }
        return try result.mapError(\.error).get()
    }

    @Test func theRefreshLeewayIsAtMostHalfTheTokensLifetime() {
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        let short = TokenSet(accessToken: "a", expiresAt: issued.addingTimeInterval(30), issuedAt: issued)
        #expect(
            short.isValid(at: issued.addingTimeInterval(10)), "a 30 s token is used for 15 s, not refreshed at once")
        #expect(!short.isValid(at: issued.addingTimeInterval(16)))
        let long = TokenSet(accessToken: "a", expiresAt: issued.addingTimeInterval(3600), issuedAt: issued)
        #expect(long.isValid(at: issued.addingTimeInterval(3530)))
        #expect(!long.isValid(at: issued.addingTimeInterval(3541)), "the full 60 s leeway for a long-lived token")
        #expect(!long.isValid(at: issued.addingTimeInterval(3000), leeway: 601))
    }

    @Test func decodesAStandardResponse() throws {
        let tokens = try decode(
            #"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"openid email"}"#
        )
        #expect(tokens.accessToken == "at")
        #expect(tokens.refreshToken == "rt")
        #expect(tokens.scopes == ["openid", "email"])
        #expect(tokens.expiresAt == fixedNow.addingTimeInterval(3600))
        #expect(tokens.issuedAt == fixedNow)
    }

    @Test func expiresInAsAStringIsAccepted() throws {
        let tokens = try decode(#"{"access_token":"at","token_type":"bearer","expires_in":"3600"}"#)
        #expect(tokens.expiresAt == fixedNow.addingTimeInterval(3600))
        #expect(tokens.tokenType == "bearer")
    }

    /// Found by the token-response fuzz target: a huge `expires_in` used to trap converting the
    /// expiry to milliseconds, so any server could crash the client.
    @Test(arguments: [
        "9223372036854775807", #""9223372036854775807""#, #""5127914462427101""#, "-9223372036854775808",
    ])
    func anAbsurdExpiresInIsCappedNotACrash(expiresIn: String) throws {
        let tokens = try decode(#"{"access_token":"at","expires_in":\#(expiresIn)}"#)
        let expiresAt = try #require(tokens.expiresAt)
        #expect(expiresAt >= fixedNow)
        #expect(expiresAt <= fixedNow.addingTimeInterval(100 * 365 * 24 * 3600))
        let stored = try #require(try JSONValue.parse(tokens.storageJSON.encoded()).objectValue)
        #expect(try TokenSet(storageJSON: stored) == tokens, "it can be stored")
    }

    @Test func datesBeyondSixtyFourBitsOfMillisecondsAreClamped() {
        let far = TokenSet(accessToken: "at", expiresAt: .distantFuture.addingTimeInterval(1e300), issuedAt: fixedNow)
        #expect(far.expiresAt != nil)
        let past = TokenSet(accessToken: "at", expiresAt: Date(timeIntervalSince1970: -1e300), issuedAt: fixedNow)
        #expect(past.expiresAt != nil)
    }

    @Test func aMissingScopeMeansTheRequestedOnesAndMissingTypeMeansBearer() throws {
        let tokens = try decode(#"{"access_token":"at"}"#)
        #expect(tokens.scopes == ["openid", "profile"])
        #expect(tokens.tokenType == "Bearer")
        #expect(tokens.expiresAt == nil)
    }

    @Test func aMissingAccessTokenIsMalformed() {
        let error = #expect(throws: AuthError.self) { try decode(#"{"token_type":"Bearer","expires_in":3600}"#) }
        #expect(error?.code == .responseMalformed)
        #expect(error?.message.contains("access_token") == true)
    }

    @Test func aWrongKindIsMalformedWithoutTheValue() {
        let error = #expect(throws: AuthError.self) {
            try decode(#"{"access_token":"at","expires_in":"soon-ish-value"}"#)
        }
        #expect(error?.code == .responseMalformed)
        #expect(error?.message.contains("expires_in") == true)
        #expect(error?.message.contains("soon-ish-value") == false)
    }

    @Test func anHTMLBodyIsMalformed() {
        let error = #expect(throws: AuthError.self) {
            try decode("<html>login to the proxy</html>", contentType: "text/html")
        }
        #expect(error?.code == .responseMalformed)
    }

    @Test func anErrorWithHTTP200IsAnError() {
        let error = #expect(throws: AuthError.self) { try decode(#"{"error":"invalid_grant"}"#) }
        #expect(error?.code == .tokenExchangeFailed)
        #expect(error?.oauthError == "invalid_grant")
    }

    @Test func anErrorResponseIsMapped() {
        let error = #expect(throws: AuthError.self) {
            try decode(#"{"error":"invalid_client"}"#, status: .unauthorized)
        }
        #expect(error?.code == .configurationInvalid)
    }

    @Test func aRefreshResponseWithoutRefreshTokenKeepsTheOldOne() throws {
        let previous = TokenSet(accessToken: "old", refreshToken: "keep-me", idToken: "old-id", issuedAt: fixedNow)
        let refresh = TokenResponseDecoder.Context(requestedScopes: [], receivedAt: fixedNow, previous: previous)
        let tokens = try decode(#"{"access_token":"new","expires_in":60}"#, context: refresh)
        #expect(tokens.accessToken == "new")
        #expect(tokens.refreshToken == "keep-me")
        #expect(tokens.idToken == "old-id")
    }

    /// The account is named by the claims of a validated ID token (the flows set it); an unverified
    /// payload names nobody.
    @Test func anUnverifiedIDTokenNamesNoAccount() throws {
        let payload = Data(#"{"sub":"248289761001","preferred_username":"janedoe"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        let tokens = try decode(#"{"access_token":"at","id_token":"eyJhbGciOiJub25lIn0.\#(payload).sig"}"#)
        #expect(tokens.idToken != nil)
        #expect(tokens.subject == nil)
        #expect(tokens.displayName == nil)
    }

    @Test func tokenSetsNeverPrintTheirTokens() throws {
        let tokens = TokenSet(
            accessToken: "secret-access-value",
            refreshToken: "secret-refresh-value",
            idToken: "secret-id-value",
            scopes: ["openid"],
            expiresAt: fixedNow,
            issuedAt: fixedNow
        )
        var dumped = ""
        dump(tokens, to: &dumped)
        for text in [tokens.description, String(reflecting: tokens), "\(tokens)", dumped] {
            #expect(!text.contains("secret-"), "leaked in \(text)")
        }
    }

    @Test func datesWithSubMillisecondPartsRoundTripThroughTheStore() throws {
        let now = Date()  // microseconds, and an offset from the reference date
        let tokens = TokenSet(accessToken: "a", expiresAt: now.addingTimeInterval(3599.9999), issuedAt: now)
        let object = try #require(try JSONValue.parse(tokens.storageJSON.encoded()).objectValue)
        #expect(try TokenSet(storageJSON: object) == tokens)
        #expect(abs(tokens.issuedAt.timeIntervalSince(now)) <= 0.0005)
        var changed = tokens
        changed.expiresAt = now.addingTimeInterval(1.23456789)
        #expect(
            try TokenSet(storageJSON: try #require(try JSONValue.parse(changed.storageJSON.encoded()).objectValue))
                == changed)
        for _ in 0..<2_000 {
            let moment = Date(timeIntervalSince1970: Double.random(in: 1_000_000_000...4_000_000_000))
            let random = TokenSet(
                accessToken: "a", expiresAt: moment.addingTimeInterval(.random(in: 0...1e5)), issuedAt: moment)
            let loaded = try TokenSet(
                storageJSON: try #require(try JSONValue.parse(random.storageJSON.encoded()).objectValue))
            #expect(loaded == random)
        }
    }

    @Test func storageJSONRoundTrips() throws {
        let tokens = TokenSet(
            accessToken: "a",
            tokenType: "Bearer",
            refreshToken: "r",
            idToken: "i",
            scopes: ["openid", "email"],
            expiresAt: fixedNow.addingTimeInterval(0.5),
            issuedAt: fixedNow,
            subject: "s",
            displayName: "d"
        )
        let object = try #require(try JSONValue.parse(tokens.storageJSON.encoded()).objectValue)
        #expect(try TokenSet(storageJSON: object) == tokens)
    }
}
