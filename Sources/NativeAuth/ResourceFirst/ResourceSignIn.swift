public import Foundation

extension ResourceClient.Held {
    /// The name of an account of its own, for when the sign-in tried first does not cover it: its
    /// host, port and path (`127.0.0.1:8000/mcp`).
    var ownAccountName: String {
        var name = (resource.host ?? "resource") + (resource.port.map { ":\($0)" } ?? "") + resource.path
        while name.hasSuffix("/") { name.removeLast() }
        return String(name.prefix(Accounts.maximumNameLength))
    }
}

/// A sign-in a ``ResourceClient`` is about to start: for which resource, at which server, why.
public struct ResourceSignIn: Sendable {
    /// Why the person signs in.
    public enum Reason: Sendable {
        /// No sign-in holds a token for the resource yet.
        case firstSignIn
        /// The sign-in tried does not cover the resource (the server refused it, or it ended).
        case notCovered(AuthError)
        /// The resource refused its token for want of these scopes (403 `insufficient_scope`).
        case moreScopes([String])
        /// The resource asked for a stronger or more recent sign-in, with these options (RFC 9470,
        /// a claims challenge).
        case strongerSignIn(LoginOptions)
    }

    /// Why.
    public var reason: Reason
    /// The resource the tokens are for.
    public var resource: URL
    /// The authorization server the person signs in at.
    public var issuer: URL
    /// The account the tokens go to.
    public var account: String
    /// The scopes asked for.
    public var scopes: [String]
    /// The loopback port the client was registered with (servers that match redirect URIs
    /// exactly take no other); `nil` for any (RFC 8252 §7.3), or before the registration.
    public var redirectPort: Int?
}

/// An existing sign-in a ``ResourceClient`` would get a resource's token from, though it was not
/// made for that resource: what its ``ResourceClient/Options/sharesSignIn`` is asked.
public struct SharedSignIn: Sendable {
    /// The resource that would get a token from it.
    public var resource: URL
    /// The authorization server of the sign-in, which the resource's metadata named.
    public var issuer: URL
    /// The account that holds the sign-in.
    public var account: String
    /// The resources the sign-in was made for (its token request's `resource`); empty when it
    /// named none.
    public var madeFor: [URL]
}

/// Where a ``ResourceClient`` signs in for a resource: what its ``ResourceClient/Options/authenticatorAt``
/// gets.
public struct ResourceServer: Sendable {
    /// The resource (RFC 8707) the tokens are for.
    public var resource: URL
    /// The authorization server its metadata named.
    public var issuer: URL
    /// The scopes to register the client for.
    public var scopes: [String]
    /// The client id configured for the server; `nil`: the client registers itself.
    public var clientID: String?
}
