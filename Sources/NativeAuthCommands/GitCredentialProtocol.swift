internal import Foundation
@_spi(Provider) internal import NativeAuth

/// What git sends a credential helper on standard input (gitcredentials(7), "Custom helpers" and
/// git-credential(1), "Input/Output format"): `key=value` lines, ended by a blank line or the end of
/// the input. Keys ending in `[]` may repeat.
struct GitCredentialRequest: Equatable, Sendable {
    /// The single-valued attributes, by key.
    var attributes: [String: String] = [:]
    /// `wwwauth[]`: the server's `WWW-Authenticate` values.
    var wwwauth: [String] = []
    /// `capability[]`: what the calling git understands (`authtype`).
    var capabilities: [String] = []
    /// Keys that git-credential(1) does not define, in the order given (ignored, named in a notice).
    var unknownKeys: [String] = []

    /// The most a helper reads: git sends a few hundred bytes.
    static let inputLimit = 256 * 1024
    /// The longest line accepted.
    static let lineLimit = 64 * 1024

    /// The attributes git-credential(1) defines (git 2.39 to 2.47), besides the list-valued ones.
    static let knownKeys: Set<String> = [
        "protocol", "host", "path", "username", "password", "password_expiry_utc", "oauth_refresh_token", "url",
        "authtype", "credential", "ephemeral", "continue", "quit",
    ]
    static let knownListKeys: Set<String> = ["wwwauth[]", "capability[]", "state[]"]

    var `protocol`: String? { attributes["protocol"] }
    var host: String? { attributes["host"] }
    var username: String? { attributes["username"] }
    var password: String? { attributes["password"] }

    /// Parses `data`.
    ///
    /// - Throws: `AuthError` (`configuration_invalid`) for input longer than ``inputLimit``, a line
    ///   longer than ``lineLimit``, a NUL byte, text that is not UTF-8, a line that is not
    ///   `key=value`, an empty key, or a `url` that is not a URL.
    static func parse(_ data: Data) throws(AuthError) -> GitCredentialRequest {
        guard data.count <= inputLimit else {
            throw invalid("git sent more than \(inputLimit / 1024) KiB; a credential request is a few lines")
        }
        guard !data.contains(0) else { throw invalid("git sent a NUL byte") }
        var request = GitCredentialRequest()
        // Lines are split on the byte: as Characters, "\r\n" is one grapheme, not "\r" then "\n".
        for (index, rawLine) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            let bytes = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
            if bytes.isEmpty { break }  // the end of the request
            guard bytes.count <= lineLimit else {
                throw invalid("line \(index + 1) is longer than \(lineLimit / 1024) KiB")
            }
            guard let text = String(data: Data(bytes), encoding: .utf8) else {
                throw invalid("git sent text that is not UTF-8")
            }
            let line = Substring(text)
            guard let equals = line.firstIndex(of: "="), equals != line.startIndex else {
                throw invalid("line \(index + 1) is not key=value")
            }
            let key = String(line[..<equals])
            let value = String(line[line.index(after: equals)...])
            guard key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-[]".contains($0)) }) else {
                throw invalid("line \(index + 1) has a key with characters git does not use")
            }
            switch key {
            case "wwwauth[]": value.isEmpty ? request.wwwauth.removeAll() : request.wwwauth.append(value)
            case "capability[]": value.isEmpty ? request.capabilities.removeAll() : request.capabilities.append(value)
            case "url": try request.take(url: value)
            default:
                if !knownKeys.contains(key), !knownListKeys.contains(key) { request.unknownKeys.append(key) }
                if !key.hasSuffix("[]") { request.attributes[key] = value }
            }
        }
        return request
    }

    /// `url=…` sets the protocol, host, path, username and password it holds (git-credential(1)).
    private mutating func take(url text: String) throws(AuthError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            let host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { throw Self.invalid("the url attribute is not a URL") }
        attributes["protocol"] = scheme.lowercased()
        attributes["host"] = host + (components.port.map { ":\($0)" } ?? "")
        if !components.path.isEmpty { attributes["path"] = String(components.path.dropFirst()) }
        if let user = components.user { attributes["username"] = user }
        if let password = components.password { attributes["password"] = password }
    }

    private static func invalid(_ message: String) -> AuthError {
        AuthError(
            .configurationInvalid, "the credential request is malformed: \(message)",
            hint: "this command speaks git's credential-helper protocol (gitcredentials(7)); git runs it")
    }

    /// Whether git can take `authtype=Bearer` and `credential=` (git 2.46+, asked with
    /// `capability[]=authtype`) and the server offered a Bearer challenge.
    var wantsBearer: Bool {
        capabilities.contains("authtype")
            && wwwauth.contains { $0.lowercased().hasPrefix("bearer") }
    }
}

/// The host a git credential helper answers for: `https://HOST[:PORT]`, or `http://` on loopback.
struct GitTarget: Equatable, Sendable {
    var scheme: String
    /// The host in lower case, with `:PORT` when given (as git sends `host`).
    var host: String

    /// `HOST[:PORT]` (HTTPS) or a URL `https://HOST[:PORT]` (`http://` for a loopback host).
    init(_ text: String) throws(AuthError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let given = HostAddress(trimmed), let scheme = given.components.scheme?.lowercased(),
            given.components.path.isEmpty || given.components.path == "/", given.components.user == nil,
            given.components.query == nil
        else {
            throw AuthError(
                .configurationInvalid, "\(trimmed) is not a host name or an https:// URL of a host",
                hint: "give the host git pushes to, such as --git-host git.example.com", field: Setting.gitHost.key)
        }
        guard scheme == "https" || (scheme == "http" && EndpointPolicy.isLoopback(host: given.name)) else {
            throw AuthError(
                .configurationInvalid, "\(trimmed): tokens are only given to git over HTTPS (http:// only on loopback)",
                field: Setting.gitHost.key)
        }
        self.scheme = scheme
        self.host = given.host
    }

    /// The URL git's configuration names the helper under (`credential.<url>.helper`).
    var url: String { "\(scheme)://\(host)" }

    /// Whether git's request is for this host, over this scheme.
    func matches(_ request: GitCredentialRequest) -> Bool {
        request.protocol?.lowercased() == scheme && request.host?.lowercased() == host
    }
}

/// What a credential helper answers to `get` (git-credential(1)'s output format).
enum GitCredentialAnswer {
    static func lines(
        for target: GitTarget,
        username: String,
        tokens: TokenSet,
        request: GitCredentialRequest
    ) -> [String] {
        var lines = ["protocol=\(target.scheme)", "host=\(target.host)"]
        if request.wantsBearer {
            lines += ["capability[]=authtype", "authtype=Bearer", "credential=\(tokens.accessToken)"]
        } else {
            lines += ["username=\(username)", "password=\(tokens.accessToken)"]
        }
        if let expiry = tokens.expiresAt {
            lines.append("password_expiry_utc=\(Int64(expiry.timeIntervalSince1970.rounded(.down)))")
        }
        return lines
    }
}

/// A host as git and Docker name one: `HOST[:PORT]`, or a URL (`https://` when no scheme is given).
///
/// The host is read as written, never percent-decoded (`%0a` would be a new line in the helper
/// scripts these names go into, `%2f` a path): a DNS name (ASCII letters, digits, `-`, `_`, `.`;
/// an internationalised name in its `xn--` form), an IPv4 address, or an IPv6 address in brackets.
struct HostAddress {
    /// The parts of the URL.
    var components: URLComponents
    /// The host name in lower case.
    var name: String
    /// The host name in lower case, with `:PORT` when given.
    var host: String { name + (components.port.map { ":\($0)" } ?? "") }

    /// `nil` when `text` names no host, or a host in another form than those above.
    init?(_ text: String) {
        let url = text.contains("://") ? text : "https://" + text
        guard let components = URLComponents(string: url), let name = Self.hostName(in: url) else { return nil }
        self.components = components
        self.name = name
    }

    /// The host of a URL's authority as written, in lower case, when it has one of the forms above.
    static func hostName(in url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { !"/?#".contains($0) }
        guard !authority.contains("@") else { return nil }
        var host = Substring(authority)
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || Self.isPort(after.dropFirst()) && after.hasPrefix(":") else { return nil }
            let inside = host.dropFirst().dropLast()
            guard inside.contains(":"), inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return nil
            }
            return host.lowercased()
        }
        if let colon = authority.lastIndex(of: ":") {
            guard Self.isPort(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard !host.isEmpty, host.count <= 253,
            labels.allSatisfy({ label in
                !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            })
        else { return nil }
        return host.lowercased()
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
