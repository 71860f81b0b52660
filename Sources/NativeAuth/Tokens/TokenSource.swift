public import Foundation

/// Where an authenticator borrows its tokens instead of keeping them: a token agent on this
/// machine or, through a socket forwarded over SSH, on another (NativeAuthAgent's
/// `AgentTokenSource`).
///
/// An authenticator made with one
/// (``Authenticator/init(provider:borrowingFrom:transport:account:logger:clock:observability:)``)
/// never holds a refresh token or a DPoP private key: it asks the source for access tokens (and ID
/// tokens) valid for as long as it needs, and for each DPoP proof. Refreshing is the source's: one
/// refresh however many borrowers ask. When the source cannot answer, every call fails with its
/// error; nothing falls back to a copy of the tokens.
public protocol TokenSource: Sendable {
    /// Tokens of `account` valid for at least `minimumValidity` seconds: the sign-in's (with its
    /// ID token, when `idToken`), or, with `resource`, a token for that resource (RFC 8707) with
    /// `scopes` (`nil`: the sign-in's).
    ///
    /// The set returned has no refresh token and no key: an access token, its type (`DPoP` for
    /// a token whose proofs come from ``proof(account:method:url:accessToken:nonce:)``), its expiry,
    /// and, when asked, the ID token.
    func tokens(
        account: String, resource: URL?, scopes: [String]?, minimumValidity: TimeInterval, idToken: Bool
    ) async throws -> TokenSet

    /// A DPoP proof (RFC 9449) of `account`'s key for a request of `method` to `url` carrying
    /// `accessToken`, with the server's `nonce`.
    func proof(account: String, method: String, url: URL, accessToken: String, nonce: String?) async throws
        -> String

    /// Says that a server refused `accessToken` (of `account`'s sign-in, or of `resource`): the next
    /// ``tokens(account:resource:scopes:minimumValidity:idToken:)`` brings another one.
    func refused(account: String, accessToken: String, resource: URL?) async throws
}
