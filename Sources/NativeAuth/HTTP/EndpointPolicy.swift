public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which URLs NativeAuth sends requests to: HTTPS everywhere, plain HTTP only to the loopback
/// interface (RFC 8252 §8.3 and the security defaults in the design).
///
/// The loopback interface is its IP literals (`127.0.0.0/8`, `::1`), and the name `localhost` only
/// where it resolves to them alone. `localhost` is a name, and whatever resolves it (a hosts file,
/// a resolver that answers for it) decides where the request goes (RFC 8252 §8.3); RFC 6761 §6.3
/// asks every resolver to answer it with loopback addresses, and where this machine's does not
/// (an address elsewhere among its answers, or none), it is refused. The check is made once per
/// process. MCP's own test servers listen on `http://localhost:PORT`.
///
/// Even on `127.0.0.1` a port is not an authenticated channel on a shared machine: another user
/// may have bound it first; ``Authenticator`` logs a warning once when its provider is reached
/// that way.
public enum EndpointPolicy {
    /// Whether `host` is an IP literal of this machine's loopback interface: `127.0.0.0/8` or `::1`
    /// (not the name `localhost`).
    public static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) else { return false }
        return octets[0] == "127"
    }

    /// Checks that `url` may carry OAuth traffic: `https`, or `http` to a loopback host.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/configurationInvalid`` naming the URL's
    ///   scheme and host (never its query).
    public static func validate(_ url: URL) throws(AuthError) {
        let scheme = url.scheme?.lowercased()
        guard let host = url.host, !host.isEmpty else {
            throw AuthError(.configurationInvalid, "the URL \(Redaction.scrubURL(url.absoluteString)) has no host")
        }
        switch scheme {
        case "https":
            return
        case "http" where isLoopback(host: host):
            return
        case "http" where host.lowercased() == "localhost" && localhostIsLoopback:
            return
        case "http":
            throw AuthError(
                .configurationInvalid,
                "refusing to send a request to \(host) over plain HTTP",
                hint: host.lowercased() == "localhost"
                    ? "localhost resolves to an address outside the loopback interface here; use http://127.0.0.1"
                        + " (or [::1])"
                    : "use an https:// URL; plain http:// is allowed only for 127.0.0.1, [::1] and localhost"
            )
        default:
            throw AuthError(
                .configurationInvalid,
                "the URL scheme \(scheme ?? "(none)") is not supported for \(host); use https"
            )
        }
    }

    /// Whether `localhost` resolves here to loopback addresses alone (and to one at least): read
    /// once, with the system's resolver, which the transports use too.
    static let localhostIsLoopback: Bool = resolvesToLoopbackOnly("localhost")

    /// Whether every address `name` resolves to is a loopback one (and there is one).
    package static func resolvesToLoopbackOnly(_ name: String) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &found) == 0, let first = found else { return false }
        defer { freeaddrinfo(first) }
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            guard let address = entry.pointee.ai_addr else { return false }
            switch Int32(entry.pointee.ai_family) {
            case AF_INET:
                let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                // The first octet, in network order.
                guard UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 else { return false }
            case AF_INET6:
                let ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                let bytes = withUnsafeBytes(of: ipv6) { Array($0) }
                guard bytes == Array(repeating: 0, count: 15) + [1] else { return false }
            default:
                return false
            }
            cursor = entry.pointee.ai_next
        }
        return true
    }
}
