public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who may ask an agent for what, like `ssh-add`'s constraints.
///
/// By default only the agent's own uid is served (a socket forwarded over SSH is served by sshd
/// running as the same user on the other side), every account and resource, and tokens keep their
/// own lifetime.
public struct AgentPolicy: Sendable, Equatable {
    /// The uids whose processes may ask (checked with `SO_PEERCRED`).
    public var uids: Set<UInt32>
    /// The accounts that may be asked for; `nil`: all.
    public var accounts: Set<String>?
    /// The resources (RFC 8707) tokens may be asked for, each covering the URLs under it; `nil`:
    /// any.
    public var resources: [URL]?
    /// Whether the sign-in's own access token may be asked for (not only resources' tokens).
    public var admitsSignInTokens: Bool
    /// The longest a token handed out is said to be valid for, in seconds (its `expires_at` is cut
    /// to it, so that the remote side asks again sooner); `nil`: the token's own.
    public var maximumLifetime: TimeInterval?

    /// A policy.
    public init(
        uids: Set<UInt32> = [UInt32(getuid())], accounts: Set<String>? = nil, resources: [URL]? = nil,
        admitsSignInTokens: Bool = true, maximumLifetime: TimeInterval? = nil
    ) {
        self.uids = uids
        self.accounts = accounts
        self.resources = resources
        self.admitsSignInTokens = admitsSignInTokens
        self.maximumLifetime = maximumLifetime
    }

    func admits(uid: UInt32) -> Bool { uids.contains(uid) }

    func admits(account: String) -> Bool { accounts?.contains(account) ?? true }

    func admits(resource: URL) -> Bool {
        guard let resources else { return true }
        return resources.contains { Self.covers($0, resource) }
    }

    /// The validity a token request asks of the agent's authenticator: what was asked, at least a
    /// minute, and no more than the maximum lifetime allows (an hour without one: a caller cannot
    /// make every request a refresh by asking for a day).
    func minimumValidity(asked: TimeInterval) -> TimeInterval {
        max(60, min(asked, maximumLifetime ?? 3600))
    }

    /// Whether `url` lies under `resource`: same scheme, host and port, and its path under the
    /// resource's.
    static func covers(_ resource: URL, _ url: URL) -> Bool {
        guard resource.scheme?.lowercased() == url.scheme?.lowercased(),
            resource.host?.lowercased() == url.host?.lowercased(), resource.port == url.port
        else { return false }
        let base = resource.path.hasSuffix("/") ? resource.path : resource.path + "/"
        return url.path == resource.path || url.path.hasPrefix(base) || resource.path.isEmpty
    }
}
