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
        let base = URL(string: issuer) ?? URL(fileURLWithPath: "/")
        return configuration.protectedResources.map {
            base.appendingPathComponent("resources").appendingPathComponent($0).absoluteString
        }
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

    /// A protected resource of the configuration: a valid access token issued for it (its
    /// `resource`) gets who it belongs to; any other gets a 401.
    func protectedResource(_ request: TestRequest) -> TestResponse {
        let name = String(request.path.dropFirst(Endpoint.protectedResource.rawValue.count))
        guard configuration.protectedResources.contains(name),
            let url = URL(string: issuer)?.appendingPathComponent("resources").appendingPathComponent(name)
        else { return .text("not found", status: 404) }
        guard let (_, record) = bearer(request) else { return invalidToken("the access token is not valid") }
        guard record.audience.contains(url.absoluteString) else {
            return invalidToken("the access token was not issued for this resource")
        }
        return json([
            "resource": .string(url.absoluteString),
            "sub": .string(record.authorization.subject),
            "scope": .string(record.authorization.scopes.joined(separator: " ")),
        ])
    }
}
