public import Foundation
internal import LenientJSON
public import NativeAuth

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

    /// Whether the agent's owner confirms each token handed out (`ssh-add -c`); without a way to
    /// ask (``AgentServer/Confirmation``), every token request is refused.
    public var requiresConfirmation: Bool

    /// A policy.
    public init(
        uids: Set<UInt32> = [UInt32(getuid())], accounts: Set<String>? = nil, resources: [URL]? = nil,
        admitsSignInTokens: Bool = true, maximumLifetime: TimeInterval? = nil, requiresConfirmation: Bool = false
    ) {
        self.uids = uids
        self.accounts = accounts
        self.resources = resources
        self.admitsSignInTokens = admitsSignInTokens
        self.maximumLifetime = maximumLifetime
        self.requiresConfirmation = requiresConfirmation
    }

    /// The policy a JSON file describes:
    ///
    /// ```json
    /// {
    ///   "uids": [1000],
    ///   "accounts": ["work"],
    ///   "resources": ["https://api.example.com/"],
    ///   "sign_in_tokens": false,
    ///   "max_lifetime": 600,
    ///   "confirm": true
    /// }
    /// ```
    ///
    /// Every member is optional, with the defaults of ``init(uids:accounts:resources:admitsSignInTokens:maximumLifetime:requiresConfirmation:)``;
    /// the agent's own uid is always served. A member this version does not know is an error, not
    /// ignored: a policy that says more than is understood must not be served as less.
    ///
    /// - Throws: `AuthError` (`configuration_invalid`) naming the file and what is wrong in it.
    public init(contentsOf path: String) throws {
        func invalid(_ problem: String) -> AuthError {
            AuthError(.configurationInvalid, "the agent's policy \(path) \(problem)", field: Setting.agentPolicy.key)
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw invalid("cannot be read") }
        guard let object = try? JSONValue.parse(data).objectValue else { throw invalid("is not a JSON object") }
        let known: Set = ["uids", "accounts", "resources", "sign_in_tokens", "max_lifetime", "confirm"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw invalid("has a member this version does not know: \(unknown)")
        }
        self.init()
        if let uids = object["uids"] {
            guard let list = uids.arrayValue else { throw invalid("has `uids` that is not an array of uids") }
            for value in list {
                guard case .integer(let uid) = value, let valid = UInt32(exactly: uid) else {
                    throw invalid("has `uids` that is not an array of uids")
                }
                self.uids.insert(valid)
            }
        }
        if let accounts = object["accounts"] {
            guard let names = accounts.arrayValue?.compactMap(\.stringValue), names.count == accounts.arrayValue?.count
            else { throw invalid("has `accounts` that is not an array of names") }
            self.accounts = Set(names)
        }
        if let resources = object["resources"] {
            let texts = resources.arrayValue?.compactMap(\.stringValue) ?? []
            let urls = texts.compactMap { text -> URL? in
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                    url.host != nil
                else { return nil }
                return url
            }
            guard urls.count == resources.arrayValue?.count else {
                throw invalid("has `resources` that is not an array of absolute http(s) URLs")
            }
            self.resources = urls
        }
        if let signIn = object["sign_in_tokens"] {
            guard case .bool(let value) = signIn else {
                throw invalid("has `sign_in_tokens` that is not true or false")
            }
            admitsSignInTokens = value
        }
        if let lifetime = object["max_lifetime"] {
            guard case .integer(let seconds) = lifetime, seconds >= 60 else {
                throw invalid("has `max_lifetime` that is not a number of seconds, 60 or more")
            }
            maximumLifetime = TimeInterval(seconds)
        }
        if let confirm = object["confirm"] {
            guard case .bool(let value) = confirm else { throw invalid("has `confirm` that is not true or false") }
            requiresConfirmation = value
        }
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

extension Setting where Value == String {
    /// `policy`: the agent's policy file (``AgentPolicy/init(contentsOf:)``), what its errors name.
    public static let agentPolicy = Setting(
        "policy", help: "A JSON policy file: which uids, accounts and resources the agent serves, and how.",
        valueName: "file", group: SettingGroup(rawValue: "agent"), isPath: true, parse: .text)
    /// `socket`: where the agent listens (``AgentServer``).
    public static let agentSocket = Setting(
        "socket", help: "Where the agent listens: a Unix socket in a directory only its owner can write.",
        valueName: "path", group: SettingGroup(rawValue: "agent"), isPath: true, parse: .text)
}
