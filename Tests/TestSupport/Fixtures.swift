public import Foundation
import NIOConcurrencyHelpers
public import NativeAuth

/// Counts requests per path on a test server.
public final class RequestLog: Sendable {
    public init() {}

    private let entries = NIOLockedValueBox<[String]>([])

    public func record(_ path: String) { entries.withLockedValue { $0.append(path) } }
    public var paths: [String] { entries.withLockedValue { $0 } }
    public func count(_ path: String) -> Int { paths.filter { $0 == path }.count }
}

/// A discovery document for a test server at `issuer`.
public func discoveryDocument(issuer: String, omitting: Set<String> = [], extra: String = "") -> String {
    var members = [
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize/",
        "token_endpoint": issuer + "/token/",
        "userinfo_endpoint": issuer + "/userinfo/",
        "jwks_uri": issuer + "/jwks",
    ]
    for key in omitting { members[key] = nil }
    let body = members.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }
    return "{" + (body + (extra.isEmpty ? [] : [extra])).joined(separator: ", ") + "}"
}

/// A configuration for a generic OIDC provider at `issuer`.
public func testConfiguration(issuer: URL, clientID: String = "test-client", secret: String? = nil)
    -> ProviderConfiguration
{
    ProviderConfiguration(issuer: issuer, clientID: clientID, clientSecret: secret, scopes: ["openid", "profile"])
}

/// A fixed point in time for expiry checks.
public let fixedNow = Date(timeIntervalSince1970: 1_800_000_000)

/// Collects what a presenter writes for the person.
public final class OutputRecorder: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    public init() {}
    public var output: ConsoleOutput { ConsoleOutput { line in self.lines.withLockedValue { $0.append(line) } } }
    public var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }
}
