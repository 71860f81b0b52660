package import Foundation
package import HTTPTypes

/// Who holds a sign-in's tokens: ``StoredTokens`` keeps them (in memory and in a store, refreshed
/// once however many callers and processes need it), ``BorrowedTokens`` borrows them from a
/// ``TokenSource`` (a token agent) and keeps nothing.
///
/// The ``Authenticator`` and the ``TokenSender`` ask a holder for tokens and credentials and
/// report refusals; only the holder knows where tokens come from. Signing in and out, and
/// refreshing on demand, need the tokens' owner: ``stored``.
package protocol TokenHolder: Sendable {
    /// The key of the tokens.
    var key: TokenKey { get }

    /// The holder that keeps the tokens, for signing in and out; `nil` for one that borrows them.
    var stored: StoredTokens? { get }

    /// A holder of the same kind, with the same store (or source), for the tokens of `account`.
    func holding(account: String) -> any TokenHolder

    /// The tokens held now (nothing refreshed); `nil` when signed out.
    func current() async throws -> TokenSet?

    /// The set, with an access token (and, with `idToken`, an ID token) valid for at least
    /// `minimumValidity` seconds.
    ///
    /// - Throws: ``AuthError/Code/loginRequired`` when none can be had.
    func validTokens(minimumValidity: TimeInterval, idToken: Bool) async throws -> TokenSet

    /// A token for `resource` (RFC 8707) with `scopes` (`nil`: the sign-in's), valid for at least
    /// `minimumValidity` seconds.
    func resourceToken(for resource: URL, scopes: [String]?, minimumValidity: TimeInterval) async throws
        -> ResourceToken

    /// The credential named `name` another service issues for the tokens (see
    /// ``Authenticator/derivedCredential(named:minimumValidity:idToken:obtain:)``).
    func derivedCredential(
        named name: String, minimumValidity: TimeInterval, idToken: Bool,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential

    /// The credential a request to `target` is sent with, valid for at least `minimumValidity`
    /// seconds.
    func credential(for target: TokenTarget, minimumValidity: TimeInterval) async throws -> AccessCredential

    /// The DPoP proof `request` goes with when the holder signs its proofs elsewhere (a token
    /// agent holds the key); `nil` when the ``ExchangeClient`` signs with the credential's key.
    func proof(for request: HTTPRequest, credential: AccessCredential, nonce: String?) async throws -> String?

    /// Makes the next ``credential(for:minimumValidity:)`` of `target` another than the `refused`
    /// token. `false` when nothing can give another (no refresh token, nor a grant to ask again).
    func renew(_ target: TokenTarget, refused: String) async throws -> Bool

    /// Drops the access token `token` because a server refused it (see
    /// ``Authenticator/discardAccessToken(_:)``); whether it was dropped.
    func discard(accessToken token: String) async throws -> Bool

    /// Forgets the tokens kept for `resource`; whether any were kept.
    func removeResourceTokens(for resource: URL) async throws -> Bool
}

extension TokenHolder {
    /// The holder that keeps the tokens: the one place where a borrowing authenticator refuses to
    /// sign in, sign out or refresh.
    ///
    /// - Throws: ``AuthError/Code/configurationInvalid`` for a holder that borrows its tokens.
    package func owner() throws(AuthError) -> StoredTokens {
        guard let stored else {
            throw AuthError(
                .configurationInvalid,
                "this authenticator borrows its tokens from a token agent, which signs in and refreshes them",
                hint: "sign in (or out) where the agent runs")
        }
        return stored
    }
}

/// The name of a flight or a kept token for `resource` with `scopes`: one per resource and scope
/// set.
func flightName(_ resource: URL, _ scopes: [String]?) -> String {
    resource.absoluteString + " " + (scopes ?? []).sorted().joined(separator: " ")
}
