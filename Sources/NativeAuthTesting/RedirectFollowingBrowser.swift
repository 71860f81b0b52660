public import Foundation
internal import HTTPTypes
@_spi(Provider) public import NativeAuth
public import NativeAuthPresenters
public import NativeAuthURLSession

/// A browser for tests that plays a person who approves at once: it fetches the URL and follows
/// the redirects, the way a browser would after a click on "Allow"; a page that is a form posting
/// itself (the one-time start page a `LoopbackPresenter` serves for an end-session URL that carries
/// an ID token) is posted, as a browser running the page's script would.
///
/// Give it to a `LoopbackPresenter` and point it at a local server whose authorization endpoint
/// redirects straight back: the whole sign-in then runs over real HTTP, the loopback receiver
/// included. It follows at most five redirects and stops at the first answer that is not one.
///
/// ```swift
/// let presenter = LoopbackPresenter(configuration: .init(opener: RedirectFollowingBrowser()))
/// let tokens = try await authenticator.login(.browser(presenter))
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
    ///
    /// A browser that plays more of the person's part (clicking on a consent page) starts with this:
    /// the URL a `LoopbackPresenter` hands a browser is a one-time start address that redirects to
    /// the authorization page, and a second fetch of it ends the sign-in.
    ///
    /// - Parameters:
    ///   - url: The URL to fetch first.
    ///   - stop: Whether to stop at a URL, before fetching it.
    /// - Returns: The first URL `stop` accepted.
    /// - Throws: When a request fails.
    public func follow(_ url: URL, until stop: (URL) -> Bool) async throws -> URL? {
        var request = HTTPRequest(method: .get, url: url)
        var body: Data?
        for _ in 0..<5 {
            try Task.checkCancellation()
            request.headerFields[.accept] = "text/html"
            let (response, page) = try await transport.send(request, body: body)
            guard let current = request.url else { return nil }
            if response.status.code == 200, let form = SelfPostingForm(page, at: current) {
                request = HTTPRequest(method: .post, url: form.action)
                request.headerFields[.contentType] = "application/x-www-form-urlencoded"
                body = Data(form.body.utf8)
                continue
            }
            guard (300..<400).contains(response.status.code), let location = response.headerFields[.location],
                let next = URL(string: location, relativeTo: current)?.absoluteURL
            else { return nil }
            if stop(next) { return next }
            request = HTTPRequest(method: .get, url: next)
            body = nil
        }
        return nil
    }
}

/// A page whose only job is to post a form with hidden fields: `<form method="post" action="…">`
/// and `<input type="hidden" name="…" value="…">`, the shape of NativeAuth's start pages.
struct SelfPostingForm {
    let action: URL
    let body: String

    init?(_ page: Data, at url: URL) {
        let html = String(decoding: page, as: UTF8.self)
        guard html.contains("document.forms[0].submit()"),
            let action = Self.attribute("action", in: Self.tags("form", in: html).first ?? ""),
            let target = URL(string: action, relativeTo: url)?.absoluteURL
        else { return nil }
        let fields = Self.tags("input", in: html).compactMap { input in
            Self.attribute("name", in: input).map { FormField($0, Self.attribute("value", in: input) ?? "") }
        }
        self.action = target
        self.body = FormURLEncoding.encode(fields)
    }

    /// The opening tags named `name`, each from `<name` to `>`.
    private static func tags(_ name: String, in html: String) -> [Substring] {
        html.components(separatedBy: "<\(name) ").dropFirst().compactMap { rest in
            rest.split(separator: ">", maxSplits: 1).first
        }
    }

    /// The double-quoted attribute `name` of a tag, its entities decoded.
    private static func attribute(_ name: String, in tag: Substring) -> String? {
        let text = " " + tag
        guard let start = text.range(of: " \(name)=\""),
            let end = text[start.upperBound...].firstIndex(of: "\"")
        else { return nil }
        return String(text[start.upperBound..<end])
            .replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
