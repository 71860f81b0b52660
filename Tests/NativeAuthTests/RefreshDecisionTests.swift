import Foundation
import NativeAuth
import TestSupport
import Testing

/// The refresh's decisions, without any I/O: every case of what a caller saw, what is held, the
/// time and the validity asked for.
@Suite(.testLogging) struct RefreshDecisionTests {
    private static let now = Date(timeIntervalSince1970: 1_800_000_000)

    private static func tokens(
        _ access: String,
        refresh: String? = "rt",
        expiresIn: TimeInterval? = 3600
    ) -> TokenSet {
        TokenSet(
            accessToken: access,
            refreshToken: refresh,
            expiresAt: expiresIn.map { now.addingTimeInterval($0) },
            issuedAt: now.addingTimeInterval(-60)
        )
    }

    private static func decide(seen: TokenSet?, current: TokenSet?, validity: TimeInterval? = 60) -> RefreshDecision {
        RefreshDecision.decide(seen: seen, current: current, now: now, minimumValidity: validity)
    }

    // MARK: A caller that wants a valid access token (seen: nil)

    @Test func nothingHeldMeansNotSignedIn() {
        guard case .signIn(let error) = Self.decide(seen: nil, current: nil) else {
            Issue.record("expected a sign-in")
            return
        }
        #expect(error.isLoginRequired)
        #expect(error.message == "not signed in")
    }

    @Test func aValidTokenIsUsed() {
        let held = Self.tokens("at")
        #expect(Self.decide(seen: nil, current: held) == .use(held))
    }

    @Test func aTokenExpiringWithinTheValidityAskedForIsRefreshed() {
        let held = Self.tokens("at", expiresIn: 30)
        #expect(Self.decide(seen: nil, current: held, validity: 60) == .refresh(held, refreshToken: "rt"))
        #expect(Self.decide(seen: nil, current: held, validity: 10) == .use(held))
    }

    @Test func aTokenWithoutAnExpiryIsUsed() {
        let held = Self.tokens("at", expiresIn: nil)
        #expect(Self.decide(seen: nil, current: held) == .use(held))
    }

    @Test func anEmptyAccessTokenIsRefreshed() {
        let held = Self.tokens("")
        #expect(Self.decide(seen: nil, current: held) == .refresh(held, refreshToken: "rt"))
    }

    @Test func anExpiredTokenWithoutARefreshTokenMeansSignIn() {
        guard case .signIn(let error) = Self.decide(seen: nil, current: Self.tokens("at", refresh: nil, expiresIn: -5))
        else {
            Issue.record("expected a sign-in")
            return
        }
        #expect(error.message.contains("expired and there is no refresh token"))
    }

    // MARK: A caller whose request was based on `seen` (a forced refresh, a 401, under the lock)

    @Test func aSetThatChangedSinceTheCallerLookedIsUsed() {
        let seen = Self.tokens("old")
        let current = Self.tokens("new")
        #expect(Self.decide(seen: seen, current: current, validity: nil) == .use(current))
    }

    @Test func theSetTheCallerSawIsRefreshedEvenWhenItLooksValid() {
        let seen = Self.tokens("at")
        #expect(Self.decide(seen: seen, current: seen, validity: nil) == .refresh(seen, refreshToken: "rt"))
    }

    @Test func aChangedSetThatHasExpiredIsRefreshedWithItsOwnRefreshToken() {
        let seen = Self.tokens("old", refresh: "rt-old")
        let current = Self.tokens("new", refresh: "rt-new", expiresIn: -1)
        #expect(Self.decide(seen: seen, current: current, validity: nil) == .refresh(current, refreshToken: "rt-new"))
    }

    @Test func withoutARefreshTokenTheCallerMustSignIn() {
        let seen = Self.tokens("at", refresh: nil)
        guard case .signIn(let error) = Self.decide(seen: seen, current: seen, validity: nil) else {
            Issue.record("expected a sign-in")
            return
        }
        #expect(error.message == "there is no refresh token")
    }

    // MARK: After the server refused a refresh token

    @Test func anotherProcessStoredAGoodSetWhichIsUsed() {
        let stored = Self.tokens("theirs", refresh: "rt-2")
        let decision = RefreshDecision.afterRefusal(
            of: "rt-1", reloaded: stored, now: Self.now, minimumValidity: nil)
        #expect(decision == .use(stored))
    }

    @Test func anotherProcessStoredANewerRefreshTokenWhichIsSent() {
        let stored = Self.tokens("theirs", refresh: "rt-2", expiresIn: -1)
        let decision = RefreshDecision.afterRefusal(
            of: "rt-1", reloaded: stored, now: Self.now, minimumValidity: nil)
        #expect(decision == .retry(stored, refreshToken: "rt-2"))
    }

    @Test func theSameRefreshTokenStoredMeansItIsDeadAndCleared() {
        let current = Self.tokens("mine", refresh: "rt-1", expiresIn: -1)
        var cleared = current
        cleared.refreshToken = nil
        let decision = RefreshDecision.afterRefusal(
            of: "rt-1", reloaded: current, now: Self.now, minimumValidity: nil)
        #expect(decision == .clear(cleared))
    }

    @Test func nothingStoredMeansSignedOutAndNothingIsWrittenBack() {
        // The store was emptied by a logout elsewhere: the set being refreshed must not come back.
        let decision = RefreshDecision.afterRefusal(of: "rt-1", reloaded: nil, now: Self.now, minimumValidity: nil)
        #expect(decision == .signedOut)
    }

    // MARK: A caller that needs the ID token too (a Kubernetes API server takes it)

    /// An ID token (unsigned: the decision reads `iat` and `exp`, never the signature) expiring
    /// `expiresIn` from now, of `lifetime`.
    private static func idToken(expiresIn: TimeInterval, lifetime: TimeInterval = 3600) -> String {
        let expiry = Int(now.timeIntervalSince1970 + expiresIn)
        let claims = #"{"iat":\#(expiry - Int(lifetime)),"exp":\#(expiry)}"#
        return Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
    }

    private static func decideForIDToken(seen: TokenSet?, current: TokenSet?) -> RefreshDecision {
        RefreshDecision.decide(seen: seen, current: current, now: now, minimumValidity: 60, idToken: true)
    }

    @Test func anExpiringIDTokenIsRefreshedWhenAskedForEvenWithAGoodAccessToken() {
        var held = Self.tokens("at")
        held.idToken = Self.idToken(expiresIn: 30)
        #expect(Self.decide(seen: nil, current: held) == .use(held), "the access token alone was asked for")
        #expect(Self.decideForIDToken(seen: nil, current: held) == .refresh(held, refreshToken: "rt"))
        held.idToken = Self.idToken(expiresIn: 600)
        #expect(Self.decideForIDToken(seen: nil, current: held) == .use(held))
        held.idToken = nil
        #expect(Self.decideForIDToken(seen: nil, current: held) == .refresh(held, refreshToken: "rt"))
    }

    @Test func aNewIDTokenAnotherProcessStoredIsUsed() {
        var seen = Self.tokens("at")
        seen.idToken = Self.idToken(expiresIn: 30)
        var stored = seen
        stored.idToken = Self.idToken(expiresIn: 3000)  // the same access token: only the ID token is new
        #expect(Self.decideForIDToken(seen: seen, current: stored) == .use(stored))
        #expect(Self.decideForIDToken(seen: seen, current: seen) == .refresh(seen, refreshToken: "rt"))
    }

    @Test func anIDTokenExpiryIsReadFromItsClaims() {
        var held = Self.tokens("at")
        held.idToken = Self.idToken(expiresIn: 120)
        #expect(held.idTokenExpiresAt == Self.now.addingTimeInterval(120))
        #expect(held.idTokenIsValid(at: Self.now, leeway: 60) && !held.idTokenIsValid(at: Self.now, leeway: 121))
        held.idToken = "not a JWT"
        #expect(held.idTokenExpiresAt == nil)
    }
}
