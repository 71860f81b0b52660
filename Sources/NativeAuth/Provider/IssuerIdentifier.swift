public import Foundation

/// An authorization server's issuer identifier (RFC 8414 §2), compared as servers name themselves:
/// the same URL but for a trailing slash (`https://id.example.com` and `https://id.example.com/`
/// are one server; `https://id.example.com/tenant` is another).
///
/// Everything that asks "is this the same authorization server?" compares these: the issuer a
/// resource's metadata names and the configured one, the issuer of an agent's account and the
/// configuration's, a trusted issuer and the one an API names.
public struct IssuerIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The URL as it was given.
    public let url: URL
    /// The URL's text without a trailing slash: what equality compares.
    private let normalized: Substring

    /// The issuer at `url`.
    public init(_ url: URL) {
        self.url = url
        let text = url.absoluteString
        normalized = text.hasSuffix("/") ? text.dropLast() : Substring(text)
    }

    /// The issuer named by `text`; `nil` when it is not a URL.
    public init?(_ text: String) {
        guard let url = URL(string: text) else { return nil }
        self.init(url)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.normalized == rhs.normalized }

    public func hash(into hasher: inout Hasher) { hasher.combine(normalized) }

    public var description: String { url.absoluteString }

    /// Whether `one` and `other` name the same server.
    public static func same(_ one: URL, _ other: URL) -> Bool { Self(one) == Self(other) }
}
