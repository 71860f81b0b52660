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
    /// - Parameters:
    ///   - authorizationURL: The URL to send the person to.
    ///   - handler: Decides about each callback that arrives (a redirect, or a pasted code).
    /// - Returns: The authorization response of the completing callback.
    /// - Throws: The failure the handler completed with, ``AuthError/Code/timeout``, or
    ///   ``AuthError/Code/loginCancelled``.
    func authorize(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition
    ) async throws -> AuthorizationResponse

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
public enum CallbackDisposition: Sendable {
    /// Not a response to this sign-in (wrong path or `state`): answer with an error page (or ask
    /// for another paste) and keep waiting, so a stray or hostile request cannot abort the real
    /// sign-in.
    case ignore
    /// The response to this sign-in: finish with its result.
    case complete(Result<AuthorizationResponse, AuthError>)
}

/// Where presenters write what the person must see: the URL to open, hints, prompts.
public struct ConsoleOutput: Sendable {
    /// Writes one message.
    public let write: @Sendable (String) -> Void

    /// Creates an output from a closure.
    public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Standard error, one message per line (stdout stays free for the program's output).
    public static let standardError = ConsoleOutput { message in
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// The query parameters that carry a token and are never printed: `id_token_hint`, which
    /// ``Authenticator/logout(presenter:)`` puts in an end-session URL.
    public static let tokenBearingParameters: Set<String> = ["id_token_hint"]

    /// Writes `url` for the person to open, as one message, without its
    /// ``tokenBearingParameters``. A presenter hands the whole URL to a browser, but what it
    /// prints can end up in a terminal's scrollback, a CI log or a bug report. Without
    /// `id_token_hint` an end-session page asks the person to confirm the logout.
    public func writeURL(_ url: URL) {
        write(Self.printable(url))
    }

    /// `url` as text without its ``tokenBearingParameters``; `url` unchanged when it has none.
    public static func printable(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let query = components.percentEncodedQuery
        else { return url.absoluteString }
        let fields = FormURLEncoding.decode(query)
        guard fields.contains(where: { tokenBearingParameters.contains($0.name) }) else { return url.absoluteString }
        let kept = fields.filter { !tokenBearingParameters.contains($0.name) }
        components.percentEncodedQuery = kept.isEmpty ? nil : FormURLEncoding.encode(kept)
        if let text = components.string { return text }
        components.percentEncodedQuery = nil
        return components.string ?? "(the URL cannot be shown without the token it holds)"
    }
}
