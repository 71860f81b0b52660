package import Foundation
package import LenientJSON

/// A pushed authorization request's answer (RFC 9126 §2.2): the `request_uri` the browser takes
/// instead of the parameters, and when it expires.
package struct PushedAuthorizationRequest: Sendable {
    /// The reference to the pushed request.
    package let requestURI: String
    /// When the reference expires: the answer's `expires_in` after it was received.
    package let expiresAt: Date

    /// Reads the answer's fields.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/responseMalformed``) when `request_uri` is missing
    ///   or empty, or `expires_in` is not a positive number of seconds.
    package init(answer fields: JSONObject, receivedAt: Date) throws(AuthError) {
        func malformed(_ what: String) -> AuthError {
            AuthError(
                .responseMalformed, "the pushed authorization request's answer \(what) (RFC 9126 §2.2)",
                hint: "the server's pushed_authorization_request_endpoint misbehaves; set"
                    + " pushed_authorization_requests to off if the server does not require it",
                operation: .pushedAuthorization)
        }
        guard let uri = (try? fields.string("request_uri")) ?? nil, !uri.isEmpty else {
            throw malformed("has no request_uri")
        }
        guard let lifetime = (try? fields.integer("expires_in")) ?? nil, lifetime > 0 else {
            throw malformed("has no positive expires_in")
        }
        requestURI = uri
        expiresAt = receivedAt.addingTimeInterval(TimeInterval(min(lifetime, 86_400)))
    }
}
