public import Foundation

/// Whose access token a request carries, and where it may go.
///
/// ```swift
/// let sender = authenticator.sender(for: .resource(api, scopes: ["notes:read"]).confined(to: api))
/// ```
public struct TokenTarget: Sendable, Hashable {
    /// The resource (RFC 8707) whose token the request carries; `nil` for the sign-in's own.
    public let resource: URL?
    /// The scopes of the resource's token; `nil` for the sign-in's.
    public let scopes: [String]?
    /// The URL every request must lie under (RFC 9728: the same origin, a path at or below its
    /// path); `nil`: the app decides where its requests go.
    public let bound: URL?

    private init(resource: URL?, scopes: [String]?, bound: URL?) {
        self.resource = resource
        self.scopes = scopes
        self.bound = bound
    }

    /// The sign-in's own access token.
    public static let signIn = TokenTarget(resource: nil, scopes: nil, bound: nil)

    /// A token for `resource` (RFC 8707) under the sign-in, with `scopes` (`nil`: the sign-in's);
    /// see ``Authenticator/accessToken(for:scopes:minimumValidity:)``.
    public static func resource(_ resource: URL, scopes: [String]? = nil) -> TokenTarget {
        TokenTarget(resource: resource, scopes: scopes, bound: nil)
    }

    /// The same token, sent only to URLs under `url` (a request elsewhere is refused, and nothing
    /// is sent): for a stack that builds its own URLs, such as a generated client.
    public func confined(to url: URL) -> TokenTarget {
        TokenTarget(resource: resource, scopes: scopes, bound: url)
    }

    /// The same bound, for the sign-in's token got for `resource` (one its metadata named).
    func carrying(_ resource: URL) -> TokenTarget {
        TokenTarget(resource: resource, scopes: nil, bound: bound)
    }

    /// Refuses `url` when it does not lie under ``bound``.
    func check(_ url: URL?) throws(AuthError) {
        guard let bound else { return }
        guard let url, ProtectedResourceMetadata.covers(bound, url) else {
            let destination = url.map { Redaction.scrubURL($0.absoluteString) } ?? "no URL"
            throw AuthError(
                .configurationInvalid,
                "the request goes to \(destination), which is not under \(Redaction.scrubURL(bound.absoluteString)),"
                    + " the API its token is for; it was not sent",
                hint: "send to the API the token is for, or give the request's own resource",
                operation: .apiRequest)
        }
    }
}
