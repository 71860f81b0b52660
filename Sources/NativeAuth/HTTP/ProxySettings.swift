public import Foundation

/// Which proxy a request goes through: read from the environment the way curl reads it.
///
/// - `https_proxy` / `HTTPS_PROXY` for `https://` requests (tunnelled with `CONNECT`),
///   `http_proxy` / `HTTP_PROXY` for `http://` requests, and `all_proxy` / `ALL_PROXY` for both
///   when the scheme's own variable is unset. The lowercase name wins when both are set.
/// - A proxy is `http://[user:password@]host[:port]` (no scheme means `http://`; no port means
///   1080, as curl has it) or `socks5://host[:port]` / `socks5h://host[:port]`.
/// - `no_proxy` / `NO_PROXY` is a comma-separated list: `*` (no proxy at all), host names that
///   match themselves and every subdomain (`example.com` and `.example.com` both match
///   `idp.example.com`), IP addresses, and IPv4 ranges in CIDR form (`10.0.0.0/8`).
/// - Loopback hosts (`127.0.0.0/8`, `::1`, `localhost`) are never proxied, unless
///   ``proxiesLoopback`` is set (`NATIVEAUTH_PROXY_LOOPBACK=1`), which tests behind a proxy need.
///
/// A malformed variable is not ignored: the first request fails with
/// ``AuthError/Code/configurationInvalid`` naming the variable (never its credentials).
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for `https://` requests.
    public var httpsProxy: ProxyServer?
    /// The proxy for `http://` requests.
    public var httpProxy: ProxyServer?
    /// The `no_proxy` entries, lowercased, without leading dots or brackets.
    public var noProxy: [String]
    /// Whether loopback hosts are proxied too. Default `false`.
    public var proxiesLoopback: Bool
    /// The variable that could not be read, and why; thrown by the first request.
    var problem: String?

    /// No proxy for any request.
    public static let none = ProxySettings()

    /// Creates settings.
    ///
    /// - Parameters:
    ///   - httpsProxy: The proxy for `https://` requests.
    ///   - httpProxy: The proxy for `http://` requests.
    ///   - noProxy: Hosts, domains, IP addresses and IPv4 ranges that are reached directly.
    ///   - proxiesLoopback: Whether loopback hosts are proxied too.
    public init(
        httpsProxy: ProxyServer? = nil, httpProxy: ProxyServer? = nil, noProxy: [String] = [],
        proxiesLoopback: Bool = false
    ) {
        self.httpsProxy = httpsProxy
        self.httpProxy = httpProxy
        self.noProxy = noProxy.compactMap(Self.normalized)
        self.proxiesLoopback = proxiesLoopback
    }

    /// The settings this process's environment gives, as curl reads them.
    public static var environment: ProxySettings { ProxySettings(environment: ProcessInfo.processInfo.environment) }

    /// The settings an environment gives, as curl reads them.
    ///
    /// - Parameter environment: A process environment.
    public init(environment: [String: String]) {
        self.init()
        func value(_ name: String) -> (name: String, value: String)? {
            for candidate in [name.lowercased(), name.uppercased()] {
                if let value = environment[candidate]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
                    return (candidate, value)
                }
            }
            return nil
        }
        func server(_ names: String...) -> ProxyServer? {
            guard let (name, text) = names.lazy.compactMap(value).first else { return nil }
            do {
                return try ProxyServer(parsing: text)
            } catch {
                problem = problem ?? "\(name): \(error.message)"
                return nil
            }
        }
        httpsProxy = server("https_proxy", "all_proxy")
        httpProxy = server("http_proxy", "all_proxy")
        noProxy = (value("no_proxy")?.value ?? "").split(separator: ",").compactMap { Self.normalized(String($0)) }
        proxiesLoopback = environment["NATIVEAUTH_PROXY_LOOPBACK"] == "1"
    }

    /// The proxy a request to `url` goes through, or `nil` to connect directly.
    ///
    /// - Throws: ``AuthError/Code/configurationInvalid`` when a proxy variable is malformed.
    public func proxy(for url: URL) throws(AuthError) -> ProxyServer? {
        if let problem {
            throw AuthError(
                .configurationInvalid, "the proxy setting \(problem)",
                hint: "set it to http://[user:password@]host:port, or unset it")
        }
        let server: ProxyServer? =
            switch url.scheme?.lowercased() {
            case "https": httpsProxy
            case "http": httpProxy
            default: nil
            }
        guard let server, let host = url.host.flatMap(Self.normalized) else { return nil }
        if !proxiesLoopback, host == "localhost" || EndpointPolicy.isLoopback(host: host) { return nil }
        return bypasses(host) ? nil : server
    }

    /// Whether `host` (normalized) matches a `no_proxy` entry.
    func bypasses(_ host: String) -> Bool {
        noProxy.contains { entry in
            if entry == "*" || entry == host { return true }
            if let range = IPv4Range(entry) { return IPv4Range.address(host).map(range.contains) ?? false }
            return host.hasSuffix("." + entry)
        }
    }

    /// An entry or host lowercased, without spaces, a leading dot or IPv6 brackets; `nil` when empty.
    private static func normalized(_ text: String) -> String? {
        var text = text.trimmingCharacters(in: .whitespaces).lowercased()
        if text.hasPrefix("[") {
            text = String(text.dropFirst().prefix { $0 != "]" })
        }
        while text.hasPrefix(".") { text.removeFirst() }
        return text.isEmpty ? nil : text
    }
}

/// A proxy server: where it is, how to speak to it, and its credentials.
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    /// How the proxy is spoken to.
    public enum Kind: Sendable, Hashable {
        /// An HTTP proxy: `CONNECT` tunnels for HTTPS, absolute URLs for plain HTTP.
        case http
        /// A SOCKS5 proxy (without authentication).
        case socks5
    }

    /// The proxy's host.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// How it is spoken to.
    public var kind: Kind
    /// The user name for `Proxy-Authorization: Basic`, if any.
    public var username: String?
    /// The password for `Proxy-Authorization: Basic`, if any. Never logged or printed.
    public var password: String?

    /// Creates a proxy server.
    ///
    /// - Parameters:
    ///   - host: The host.
    ///   - port: The port.
    ///   - kind: How it is spoken to.
    ///   - username: The user name for Basic proxy authentication.
    ///   - password: The password for Basic proxy authentication.
    public init(host: String, port: Int, kind: Kind = .http, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.kind = kind
        self.username = username
        self.password = password
    }

    /// Reads a proxy as curl does: `[scheme://][user:password@]host[:port]`, `http` and port 1080
    /// when left out.
    ///
    /// - Throws: ``AuthError/Code/configurationInvalid`` for another scheme, a missing host or a
    ///   bad port; the message never repeats the credentials.
    public init(parsing text: String) throws(AuthError) {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            throw AuthError(.configurationInvalid, "it is not a proxy address")
        }
        let kind: Kind
        switch components.scheme?.lowercased() {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        case let scheme:
            throw AuthError(
                .configurationInvalid, "the proxy scheme \(scheme ?? "(none)") is not supported (http, socks5)")
        }
        guard components.port.map({ (1...65_535).contains($0) }) ?? true else {
            throw AuthError(.configurationInvalid, "the proxy port is not a port number")
        }
        if kind == .socks5, components.user != nil {
            throw AuthError(.configurationInvalid, "a SOCKS5 proxy with a user name is not supported")
        }
        let unbracketed = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.init(
            host: unbracketed, port: components.port ?? 1080, kind: kind,
            username: components.percentEncodedUser.flatMap { $0.removingPercentEncoding },
            password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding })
    }

    /// `host:port`, for messages and logs: never the credentials.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// An IPv4 address range in CIDR form, or one address.
private struct IPv4Range {
    var network: UInt32
    var mask: UInt32

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let address = Self.address(String(parts[0])) else { return nil }
        let bits = parts.count == 2 ? Int(parts[1]) : 32
        guard let bits, (0...32).contains(bits) else { return nil }
        mask = bits == 0 ? 0 : UInt32.max << UInt32(32 - bits)
        network = address & mask
    }

    func contains(_ address: UInt32) -> Bool { address & mask == network }

    static func address(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard let byte = UInt8(octet) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }
}
