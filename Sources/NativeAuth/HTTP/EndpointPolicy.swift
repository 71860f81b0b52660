public import Foundation

/// Which URLs NativeAuth sends requests to: HTTPS everywhere, plain HTTP only to the loopback
/// interface's IP literals (RFC 8252 §8.3 and the security defaults in the design).
///
/// `localhost` is not trusted for plain HTTP: it is a name, and whatever resolves it (a hosts file,
/// a resolver that answers for it) decides where the request goes (RFC 8252 §8.3). Even on
/// `127.0.0.1` a port is not an authenticated channel on a shared machine: another user may have
/// bound it first; ``Authenticator`` logs a warning once when its provider is reached that way.
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
        case "http":
            throw AuthError(
                .configurationInvalid,
                "refusing to send a request to \(host) over plain HTTP",
                hint: host.lowercased() == "localhost"
                    ? "use http://127.0.0.1 (or [::1]) instead of localhost, whose address a resolver decides"
                    : "use an https:// URL; plain http:// is allowed only for 127.0.0.1 and [::1]"
            )
        default:
            throw AuthError(
                .configurationInvalid,
                "the URL scheme \(scheme ?? "(none)") is not supported for \(host); use https"
            )
        }
    }
}
