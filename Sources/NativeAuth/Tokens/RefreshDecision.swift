package import Foundation

/// What to do when a caller needs tokens: the pure half of refreshing, decided from what the
/// caller saw, what is held, the time and the validity asked for. ``TokenLifecycle`` carries the
/// decisions out (the store, the lock, the token request); this type does no I/O, so every case is
/// tested on its own.
///
/// Two moments need a decision:
/// - ``decide(seen:current:now:minimumValidity:)``: before a refresh, with the set held in memory
///   (or, under the lock, the set just loaded from the store).
/// - ``afterRefusal(of:reloaded:now:minimumValidity:)``: after the server refused the
///   refresh token (`invalid_grant`), with the set loaded again.
package enum RefreshDecision: Equatable, Sendable {
    /// The set is good: use it, send nothing.
    case use(TokenSet)
    /// Send this refresh token; the set is the one being refreshed.
    case refresh(TokenSet, refreshToken: String)
    /// Ask for the set's grant again (client credentials, ``TokenSet/renewableGrant``): no refresh
    /// token, no person; the set is the one being renewed.
    case renew(TokenSet)
    /// Nothing can be refreshed: the person must sign in (the error says why).
    case signIn(AuthError)

    /// What to do after the server refused a refresh token.
    package enum AfterRefusal: Equatable, Sendable {
        /// Another process stored a set that is good: use it, send nothing.
        case use(TokenSet)
        /// Another process stored a newer refresh token: send that one.
        case retry(TokenSet, refreshToken: String)
        /// The refresh token is dead and nobody stored a newer one: store this set (the refresh
        /// token removed) and ask for a sign-in.
        case clear(TokenSet)
        /// The store is empty: the person signed out meanwhile (in another process). Nothing is
        /// written back; a sign-in is needed.
        case signedOut
    }

    /// The decision before a refresh.
    ///
    /// - Parameters:
    ///   - seen: The set the caller's need is based on; `nil` when the caller simply wants a valid
    ///     access token (then a valid `current` is used as it is).
    ///   - current: What is held now (in memory, or under the lock in the store).
    ///   - now: The time.
    ///   - minimumValidity: How long the access token must still be valid; `nil` for a forced
    ///     refresh, which uses `current` only when it changed since `seen` and has not expired.
    ///   - idToken: Whether the ID token must be valid that long too (a Kubernetes API server
    ///     takes the ID token): a set whose ID token expires is refreshed, even with a good access
    ///     token.
    package static func decide(
        seen: TokenSet?,
        current: TokenSet?,
        now: Date,
        minimumValidity: TimeInterval?,
        idToken: Bool = false
    ) -> RefreshDecision {
        guard let current else { return .signIn(Self.notSignedIn) }
        let changed = seen.map { $0.accessToken != current.accessToken || $0.idToken != current.idToken } ?? true
        if changed, current.isUsable(at: now, leeway: minimumValidity ?? 0, idToken: idToken) {
            return .use(current)
        }
        guard let refreshToken = current.refreshToken else {
            if current.renewableGrant != nil { return .renew(current) }
            return .signIn(
                seen == nil
                    ? AuthError(
                        .loginRequired, "the access token has expired and there is no refresh token",
                        hint: "sign in again")
                    : AuthError(.loginRequired, "there is no refresh token", hint: "sign in again")
            )
        }
        return .refresh(current, refreshToken: refreshToken)
    }

    /// The decision after the server refused `refused` as no longer valid: another process may
    /// have won a rotation race and stored a newer refresh token, or signed out (the store is
    /// empty); else the refresh token is dead.
    ///
    /// - Parameters:
    ///   - refused: The refresh token the server refused.
    ///   - reloaded: What the store holds now.
    ///   - now: The time.
    ///   - minimumValidity: As in ``decide(seen:current:now:minimumValidity:)``.
    package static func afterRefusal(
        of refused: String,
        reloaded: TokenSet?,
        now: Date,
        minimumValidity: TimeInterval?,
        idToken: Bool = false
    ) -> AfterRefusal {
        guard let reloaded else { return .signedOut }
        if let newer = reloaded.refreshToken, newer != refused {
            if reloaded.isUsable(at: now, leeway: minimumValidity ?? 0, idToken: idToken) {
                return .use(reloaded)
            }
            return .retry(reloaded, refreshToken: newer)
        }
        var cleared = reloaded
        cleared.refreshToken = nil
        return .clear(cleared)
    }

    static let notSignedIn = AuthError(.loginRequired, "not signed in", hint: "sign in first")

    /// The store was emptied while this process held the tokens in memory: a logout elsewhere.
    static let signedOutElsewhere = AuthError(
        .loginRequired, "signed out: the stored tokens were removed (by a logout)", hint: "sign in again")
}

extension TokenSet {
    /// Whether the set serves as it is: an access token valid `leeway` from `now`, and the ID token
    /// too when `idToken` asks for it.
    func isUsable(at now: Date, leeway: TimeInterval, idToken: Bool) -> Bool {
        !accessToken.isEmpty && isValid(at: now, leeway: leeway)
            && (!idToken || idTokenIsValid(at: now, leeway: leeway))
    }
}
