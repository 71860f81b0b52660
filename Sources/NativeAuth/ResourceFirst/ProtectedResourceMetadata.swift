public import Foundation
public import HTTPTypes
internal import LenientJSON

/// What a protected resource says about itself (RFC 9728, OAuth 2.0 Protected Resource Metadata):
/// its identifier and the authorization servers that issue its tokens. An API (an MCP server, say)
/// that answers 401 with `WWW-Authenticate: Bearer resource_metadata="…"` points to it.
///
/// A document is taken only for the resource it was asked about: its `resource` must be a resource
/// indicator (``ProviderConfiguration/resourceIndicator(_:)``) identical to the URL the request
/// went to, its query and fragment left out (RFC 9728 §3.3): not a parent path, never with a user
/// part. The one exception is RFC 9728's own: a document found at the origin's well-known URL
/// (`/.well-known/oauth-protected-resource`, with no path after it, and not named by the 401) is
/// about the origin, whose `resource` is then the origin, and covers every URL on it. A metadata document may name any authorization server; which
/// one the app trusts is the app's choice, never made silently
/// (``ProviderConfiguration/followsResourceMetadata``).
public struct ProtectedResourceMetadata: Sendable, Equatable {
    /// The resource's identifier (`resource`): the value of `resource` in token requests.
    public var resource: URL
    /// The issuers of the authorization servers that issue its tokens (`authorization_servers`).
    public var authorizationServers: [URL]
    /// The scopes it uses (`scopes_supported`), when it says.
    public var scopesSupported: [String]
    /// A name to show for it (`resource_name`), when it has one.
    public var resourceName: String?

    /// Reads a document asked for on behalf of a request to `requestURL`.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/responseMalformed`` for a document that is not a
    ///   JSON object or lacks `resource`; ``AuthError/Code/configurationInvalid`` for a `resource`
    ///   that is not the requested URL, or an authorization server that is not an `https` URL.
    public init(document: Data, requestURL: URL) throws(AuthError) {
        try self.init(document: document, requestURL: requestURL, identifier: requestURL)
    }

    /// Reads a document whose `resource` must be `identifier`: the URL its well-known location was
    /// made from (RFC 9728 §3.3), which for the origin's `/.well-known/oauth-protected-resource` is
    /// the origin itself (a trailing slash aside), and otherwise the requested URL.
    init(document: Data, requestURL: URL, identifier: URL) throws(AuthError) {
        let object: JSONObject
        do {
            guard
                let parsed = try JSONValue.parse(document, options: JSONParseOptions(maxBytes: 256 * 1024)).objectValue
            else {
                throw AuthError(
                    .responseMalformed, "the protected resource metadata is not a JSON object", operation: .discovery)
            }
            object = parsed
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(
                .responseMalformed, "the protected resource metadata is not valid JSON", operation: .discovery,
                underlying: error)
        }
        guard let text = (try? object.string("resource")) ?? nil else {
            throw AuthError(
                .responseMalformed, "the protected resource metadata has no resource", operation: .discovery)
        }
        let resource = try ProviderConfiguration.resourceIndicator(text)
        guard Self.identifies(resource, identifier) else {
            throw AuthError(
                .configurationInvalid,
                "the protected resource metadata is for \(Redaction.scrubURL(text)), not for the URL requested"
                    + " (\(Redaction.scrubURL(requestURL.absoluteString))); RFC 9728 §3.3 asks them to be the same,"
                    + " and it is not used",
                hint: "the API points to metadata about another resource: ask its operator", operation: .discovery)
        }
        var servers: [URL] = []
        for value in ((try? object.stringList("authorization_servers")) ?? nil) ?? [] {
            guard let url = URL(string: value), url.host?.isEmpty == false, url.query == nil, url.fragment == nil
            else {
                throw AuthError(
                    .configurationInvalid,
                    "the protected resource metadata names an authorization server that is not an issuer URL",
                    operation: .discovery)
            }
            try EndpointPolicy.validate(url)
            servers.append(url)
        }
        self.resource = resource
        self.authorizationServers = servers
        self.scopesSupported = ((try? object.stringList("scopes_supported")) ?? nil) ?? []
        self.resourceName = (try? object.string("resource_name")) ?? nil
    }

    /// Whether `resource` is the URL a request went to, its query and fragment left out, character
    /// for character (RFC 9728 §3.3); one with a user part never is.
    package static func identifies(_ resource: URL, _ url: URL) -> Bool {
        guard resource.user == nil, resource.password == nil,
            var asked = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return false }
        asked.query = nil
        asked.fragment = nil
        if asked.path.isEmpty || asked.path == "/" {
            // An origin: with or without the slash of its empty path.
            guard var named = URLComponents(url: resource, resolvingAgainstBaseURL: false),
                named.path.isEmpty || named.path == "/"
            else { return false }
            (asked.path, named.path) = ("", "")
            return asked.url?.absoluteString == named.url?.absoluteString
        }
        return asked.url?.absoluteString == resource.absoluteString
    }

    /// The origin of `url` (its scheme, host and port), for the metadata at the origin's
    /// well-known URL.
    static func origin(of url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        (components.path, components.query, components.fragment) = ("", nil, nil)
        return components.url
    }

    /// Whether `resource` is `url`, or a parent of it, on the same origin: whether a token for
    /// `resource` may go to `url`.
    public static func covers(_ resource: URL, _ url: URL) -> Bool {
        guard resource.scheme?.lowercased() == url.scheme?.lowercased(),
            resource.host?.lowercased() == url.host?.lowercased(), resource.port == url.port
        else { return false }
        let parent = resource.path.hasSuffix("/") ? String(resource.path.dropLast()) : resource.path
        return url.path == parent || url.path.hasPrefix(parent + "/") || parent.isEmpty
    }

    /// Where a resource's metadata lives (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
    /// between the origin and the path of `resource`; its query and fragment dropped.
    public static func wellKnownURL(for resource: URL) -> URL? {
        guard var components = URLComponents(url: resource, resolvingAgainstBaseURL: false) else { return nil }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        components.path = "/.well-known/oauth-protected-resource" + path
        components.query = nil
        components.fragment = nil
        return components.url
    }

    /// The metadata URLs to try for a 401 from `requestURL`: the challenge's `resource_metadata`
    /// when it has one on the request's origin, or over `https`; else the well-known URL of the
    /// request's path, then of its origin (RFC 9728 §3.1, §5.1). A plain-HTTP pointer elsewhere,
    /// another loopback port say, is not followed: a hostile API would make its client send
    /// requests to the machine's local services.
    @_spi(Provider) public static func candidateURLs(for requestURL: URL, challenge: BearerChallenge?) -> [URL] {
        if let named = challenge?.parameters["resource_metadata"], let url = URL(string: named),
            (try? EndpointPolicy.validate(url)) != nil,
            url.scheme?.lowercased() == "https" || Self.sameOrigin(url, requestURL)
        {
            return [url]
        }
        var urls = [wellKnownURL(for: requestURL)].compactMap { $0 }
        if var origin = URLComponents(url: requestURL, resolvingAgainstBaseURL: false) {
            origin.path = "/.well-known/oauth-protected-resource"
            origin.query = nil
            origin.fragment = nil
            if let url = origin.url, !urls.contains(url) { urls.append(url) }
        }
        return urls
    }

    /// Whether the two URLs have one origin: scheme, host and port (the scheme's default when
    /// none is written).
    package static func sameOrigin(_ one: URL, _ other: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int)? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            return (scheme, host, url.port ?? (scheme == "https" ? 443 : 80))
        }
        guard let first = origin(one), let second = origin(other) else { return false }
        return first == second
    }

    /// The metadata of the resource behind `requestURL`, found from its 401 answer.
    ///
    /// - Parameters:
    ///   - requestURL: The URL the request went to.
    ///   - response: Its 401 answer (its `WWW-Authenticate` is read).
    ///   - transport: Sends the metadata requests (no token goes with them).
    /// - Throws: ``AuthError``: ``AuthError/Code/metadataUnavailable`` naming each URL tried and
    ///   what it answered; what ``init(document:requestURL:)`` throws for a document that is there.
    public static func discover(
        for requestURL: URL,
        response: HTTPResponse,
        transport: any HTTPTransport
    ) async throws -> ProtectedResourceMetadata {
        try await discover(
            for: requestURL,
            challenge: response.headerFields[.wwwAuthenticate].flatMap { BearerChallenge(headerValue: $0) },
            transport: transport)
    }

    /// ``discover(for:response:transport:)`` with the challenge read already.
    package static func discover(
        for requestURL: URL,
        challenge: BearerChallenge?,
        transport: any HTTPTransport
    ) async throws -> ProtectedResourceMetadata {
        var attempts: [String] = []
        let candidates = candidateURLs(for: requestURL, challenge: challenge)
        let named = challenge?.parameters["resource_metadata"].flatMap(URL.init(string:))
        for url in candidates {
            var request = HTTPRequest(method: .get, url: url)
            request.headerFields[.accept] = "application/json"
            let (answer, body) = try await transport.send(request, body: nil)
            guard (200..<300).contains(answer.status.code) else {
                attempts.append("\(Redaction.scrubURL(url.absoluteString)) answered HTTP \(answer.status.code)")
                continue
            }
            // The origin's document (found at its well-known URL, not named by the challenge) is
            // the origin's, as RFC 9728 §3.3 and MCP's discovery have it: the URL is below it.
            let atOrigin = url != named && url.path == "/.well-known/oauth-protected-resource"
            let identifier = atOrigin ? Self.origin(of: requestURL) ?? requestURL : requestURL
            return try ProtectedResourceMetadata(document: body, requestURL: requestURL, identifier: identifier)
        }
        throw AuthError(
            .metadataUnavailable,
            "no protected resource metadata for \(Redaction.scrubURL(requestURL.absoluteString)): "
                + attempts.joined(separator: "; "),
            hint: "the API does not say which authorization server issues its tokens; configure the issuer",
            operation: .discovery)
    }
}
