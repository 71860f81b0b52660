public import Foundation

/// Gets the person through the provider's authorization page and brings the response back.
///
/// Presenting takes two steps, because the loopback receiver must listen before the authorization
/// URL (which names its port) can exist:
/// 1. ``beginSession()`` fixes the redirect URI (for the loopback presenter: binds the port);
/// 2. ``UserAgentSession/authorize(_:handler:)`` shows the URL and waits for the callback.
///
/// ### Implementation requirements
/// - Pass every callback that arrives to the handler; act on its ``CallbackDisposition``: keep
///   waiting after ``CallbackDisposition/ignore``, finish with the result of the first
///   ``CallbackDisposition/complete(_:)``.
/// - End the wait on Task cancellation with ``AuthError/Code/loginCancelled``.
/// - Release what the session holds (sockets, prompts) on every path.
public protocol UserAgentPresenter: Sendable {
    /// Starts a session and fixes its redirect URI.
    func beginSession() async throws -> any UserAgentSession
}

/// One sign-in's user-agent session, from ``UserAgentPresenter/beginSession()``.
public protocol UserAgentSession: Sendable {
    /// The redirect URI to put in the authorization request.
    var redirectURI: URL { get }

    /// Shows `authorizationURL` and waits for a callback that the handler completes.
    ///
    /// The handler decides what a completing callback yields: a sign-in's
    /// ``AuthorizationResponse``, or for a sign-out only that the provider's page came back
    /// (``EndSessionReturn``). The session hands that value back as it is.
    ///
    /// - Parameters:
    ///   - authorizationURL: The URL to send the person to.
    ///   - handler: Decides about each callback that arrives (a redirect, or a pasted code).
    /// - Returns: The value of the first callback the handler completes with.
    /// - Throws: The failure the handler completed with, ``AuthError/Code/timeout``, or
    ///   ``AuthError/Code/loginCancelled``.
    func authorize<Outcome: Sendable>(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
    ) async throws -> Outcome

    /// Ends the session early and releases what it holds; `authorize` does this by itself.
    func close() async
}

/// What came back from the authorization page.
public enum AuthorizationCallback: Sendable {
    /// The URL the browser was redirected to: a loopback request, or a URL the person pasted.
    /// Its `state` and `iss` are checked.
    case redirect(URL)
    /// A bare authorization code the person pasted from a page that shows only the code. It
    /// carries no `state` or `iss` to check: PKCE alone binds it to this sign-in, because only
    /// this client holds the verifier.
    case code(String)
}

/// What to do with a callback that arrived.
public enum CallbackDisposition<Outcome: Sendable>: Sendable {
    /// Not a response to this sign-in (wrong path or `state`): answer with an error page (or ask
    /// for another paste) and keep waiting, so a stray or hostile request cannot abort the real
    /// sign-in.
    case ignore
    /// The response to this sign-in: finish with its result.
    case complete(Result<Outcome, AuthError>)
}

/// What a provider's end-session page yields when it sends the browser back with the sign-out's
/// `state` (OpenID Connect RP-Initiated Logout §3): nothing but that it came back.
public struct EndSessionReturn: Sendable, Equatable {
    /// The redirect the page sent the browser to, `state` and all.
    public var redirect: URL

    /// A return to `redirect`.
    public init(redirect: URL) {
        self.redirect = redirect
    }
}
