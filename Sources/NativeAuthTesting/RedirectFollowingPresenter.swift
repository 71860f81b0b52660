internal import Foundation
@_spi(Provider) public import NativeAuth

/// A presenter that plays a person who approves at once, without a browser and without a
/// listener: it requests the authorization URL through a transport, follows the redirects the
/// way a browser would, and hands NativeAuth the redirect that comes back to its redirect URI.
///
/// With an in-memory ``SandboxAuthorizationServer`` (auto-approving) or ``TestHTTPServer`` whose
/// authorization endpoint redirects straight back, a whole sign-in runs in memory:
///
/// ```swift
/// let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: sandbox.transport)
/// try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
/// ```
///
/// It follows at most five redirects. The redirect URI is `http://127.0.0.1:PORT/callback` on a
/// port nothing listens on (a loopback redirect URI is registered for any port, RFC 8252 §7.3).
/// Use `LoopbackPresenter` with a ``RedirectFollowingBrowser`` to run the loopback receiver too.
public struct RedirectFollowingPresenter: UserAgentPresenter {
    private let transport: any HTTPTransport
    private let port: Int?
    private let callbackPath: String

    /// Creates a presenter.
    ///
    /// - Parameters:
    ///   - transport: What the "browser" requests pages with: the server's transport.
    ///   - callbackPath: The path of the redirect URI.
    ///   - port: The redirect URI's port, for a registration that names one (a server that
    ///     matches redirect URIs exactly); `nil`, the default, takes a new one each session.
    public init(transport: any HTTPTransport, callbackPath: String = "/callback", port: Int? = nil) {
        self.transport = transport
        self.callbackPath = callbackPath.hasPrefix("/") ? callbackPath : "/" + callbackPath
        self.port = port
    }

    /// Starts a session; it never fails.
    ///
    /// - Returns: A session that follows its authorization URL's redirects.
    public func beginSession() async throws -> any UserAgentSession {
        let port = self.port ?? InMemoryPorts.next()
        let redirect = URL(string: "http://127.0.0.1:\(port)\(callbackPath)") ?? URL(fileURLWithPath: "/")
        return Session(transport: transport, redirectURI: redirect)
    }

    struct Session: UserAgentSession {
        let transport: any HTTPTransport
        let redirectURI: URL

        func authorize<Outcome: Sendable>(
            _ authorizationURL: URL,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
        ) async throws -> Outcome {
            let browser = RedirectFollowingBrowser(transport: transport)
            let back = try await browser.follow(authorizationURL) { next in
                next.host == redirectURI.host && next.port == redirectURI.port && next.path == redirectURI.path
            }
            guard let back else {
                throw AuthError(
                    .authorizationFailed,
                    "the authorization page did not send the browser back to the redirect URI",
                    operation: .authorization
                )
            }
            guard case .complete(let result) = handler(.redirect(back)) else {
                throw AuthError(.invalidState, "the redirect back was not this sign-in's", operation: .authorization)
            }
            return try result.get()
        }

        func close() async {}
    }
}
