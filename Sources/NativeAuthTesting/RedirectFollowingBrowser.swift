public import Foundation
internal import HTTPTypes
public import NativeAuth

/// A browser for tests that plays a person who approves at once: it fetches the URL and follows
/// the redirects, the way a browser would after a click on "Allow".
///
/// Give it to a `LoopbackPresenter` and point it at a local server whose authorization endpoint
/// redirects straight back: the whole sign-in then runs over real HTTP, the loopback receiver
/// included. It follows at most five redirects and stops at the first answer that is not one.
///
/// ```swift
/// let presenter = LoopbackPresenter(configuration: .init(opener: RedirectFollowingBrowser()))
/// let tokens = try await authenticator.login(presenter: presenter)
/// ```
public struct RedirectFollowingBrowser: BrowserOpener {
    private let transport: any HTTPTransport

    /// Creates the browser.
    ///
    /// - Parameter transport: What it requests pages with; default: a `URLSessionTransport`. Pass
    ///   an in-memory server's ``TestHTTPServer/transport`` to reach its pages without a socket
    ///   (the redirect back to the loopback receiver then needs a live request of its own, so use
    ///   ``RedirectFollowingPresenter`` for a sign-in entirely in memory).
    public init(transport: any HTTPTransport = URLSessionTransport()) {
        self.transport = transport
    }

    /// Fetches `url` and follows its redirects.
    ///
    /// - Parameter url: The authorization or end-session URL.
    /// - Throws: When a request fails.
    public func open(_ url: URL) async throws {
        _ = try await follow(url) { _ in false }
    }

    /// Fetches `url` and follows its redirects until one leads to a URL `stop` accepts, which is
    /// returned without being fetched; `nil` when a page answers without redirecting, or after
    /// five redirects.
    func follow(_ url: URL, until stop: (URL) -> Bool) async throws -> URL? {
        var current = url
        for _ in 0..<5 {
            try Task.checkCancellation()
            var request = HTTPRequest(method: .get, url: current)
            request.headerFields[.accept] = "text/html"
            let (response, _) = try await transport.send(request, body: nil)
            guard (300..<400).contains(response.status.code), let location = response.headerFields[.location],
                let next = URL(string: location, relativeTo: current)?.absoluteURL
            else { return nil }
            if stop(next) { return next }
            current = next
        }
        return nil
    }
}
