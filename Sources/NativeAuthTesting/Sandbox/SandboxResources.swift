import Foundation
import LenientJSON
import NativeAuth

/// Resource indicators (RFC 8707): the protected resources the sandbox serves, the audience of
/// the tokens it issues, and the resources' refusal of tokens issued for another.
extension SandboxCore {
    /// A token request's refusal, as the answer to send.
    struct Refusal: Error {
        let response: TestResponse
    }

    /// The resource indicators of ``SandboxAuthorizationServer/Configuration/protectedResources``.
    var knownResources: [String] {
        let base = URL(string: host) ?? URL(fileURLWithPath: "/")
        return configuration.protectedResources.map {
            base.appendingPathComponent("resources").appendingPathComponent($0).absoluteString
        } + dialect.resourceIdentifiers
    }

    /// The audience of a token asked for `asked` under a grant for `granted`: each asked resource
    /// must be one the sandbox serves and, when the grant named resources, one of them
    /// (`invalid_target`, RFC 8707 §2). None asked: the grant's.
    func audience(asked: [String], granted: [String]) -> Result<[String], Refusal> {
        for resource in asked {
            guard knownResources.contains(resource) else {
                return .failure(Refusal(response: oauthError("invalid_target", "unknown resource \(resource)")))
            }
            guard granted.isEmpty || granted.contains(resource) else {
                return .failure(
                    Refusal(
                        response: oauthError(
                            "invalid_target", "the grant does not cover the resource \(resource)")))
            }
        }
        return .success(asked.isEmpty ? granted : asked)
    }

    /// The metadata (RFC 9728) of a protected resource of the configuration: the sandbox issues its tokens.
    func protectedResourceMetadata(_ request: TestRequest) -> TestResponse {
        let path = String(request.path.dropFirst(Endpoint.protectedResourceMetadata.rawValue.count))
        guard path.hasPrefix("resources/") else { return .text("not found", status: 404) }
        let name = String(path.dropFirst("resources/".count))
        guard configuration.protectedResources.contains(name) else { return .text("not found", status: 404) }
        if let body = configuration.protectedResourceMetadataBodies[name] {
            let filled = body.replacingOccurrences(of: "$RESOURCE", with: host + "/resources/" + name)
                .replacingOccurrences(of: "$ISSUER", with: issuer).replacingOccurrences(of: "$HOST", with: host)
            return .json(filled, status: 200, headers: [])
        }
        return json([
            "resource": .string(host + "/resources/" + name),
            "authorization_servers": [.string(issuer)],
            "scopes_supported": .array(configuration.scopesSupported.map { .string($0) }),
            "bearer_methods_supported": ["header"],
            "resource_name": .string("The sandbox's \(name)"),
        ])
    }

    /// A protected resource of the configuration: a valid access token issued for it (its
    /// `resource`) gets who it belongs to; any other gets a 401.
    func protectedResource(_ request: TestRequest) -> TestResponse {
        // A resource answers at its URL and under it (`/resources/mcp/tools`).
        let rest = request.path.dropFirst(Endpoint.protectedResource.rawValue.count)
        let name = String(rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        guard configuration.protectedResources.contains(name),
            let url = URL(string: host)?.appendingPathComponent("resources").appendingPathComponent(name)
        else { return .text("not found", status: 404) }
        // The 401 points to the resource's metadata (RFC 9728 §5.1).
        let pointer = (
            "WWW-Authenticate",
            #"Bearer realm="sandbox", error="invalid_token", resource_metadata=""#
                + host + Endpoint.protectedResourceMetadata.rawValue + "resources/" + name + "\""
        )
        let presented = presentedToken(request)
        // A proof's refusal (a nonce to use, a bad proof) is answered as such.
        if case .failure(let refusal) = presented, request.header("DPoP") != nil { return refusal.response }
        guard case .success(let (_, record)) = presented, record.audience.contains(url.absoluteString)
        else {
            return json(
                ["error": "invalid_token", "error_description": "no valid access token issued for this resource"],
                status: 401, headers: [pointer])
        }
        return json([
            "resource": .string(url.absoluteString),
            "sub": .string(record.authorization.subject),
            "scope": .string(record.authorization.scopes.joined(separator: " ")),
        ])
    }
}
