import Foundation
import NIOConcurrencyHelpers
import NativeAuth

/// Counts requests per path on a test server.
final class RequestLog: Sendable {
    private let entries = NIOLockedValueBox<[String]>([])

    func record(_ path: String) { entries.withLockedValue { $0.append(path) } }
    var paths: [String] { entries.withLockedValue { $0 } }
    func count(_ path: String) -> Int { paths.filter { $0 == path }.count }
}

/// A discovery document for a test server at `issuer`.
func discoveryDocument(issuer: String, omitting: Set<String> = [], extra: String = "") -> String {
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
func testConfiguration(issuer: URL, clientID: String = "test-client", secret: String? = nil) -> ProviderConfiguration {
    ProviderConfiguration(issuer: issuer, clientID: clientID, clientSecret: secret, scopes: ["openid", "profile"])
}

/// A fixed point in time for expiry checks.
let fixedNow = Date(timeIntervalSince1970: 1_800_000_000)
