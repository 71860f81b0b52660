public import Foundation
public import HTTPTypes
internal import LenientJSON

/// Everything known about a failed operation, handed to an ``ErrorMapper``.
///
/// The raw ``body`` is there for mappers that must read a provider's own error format; it is never
/// part of this value's `description`.
public struct AuthFailure: Sendable, CustomStringConvertible {
    /// What NativeAuth was doing.
    public var operation: AuthOperation
    /// The response, when the server answered (status and header fields).
    public var response: HTTPResponse?
    /// The response body, when the server answered. May hold secrets: never print it.
    public var body: Data?
    /// The OAuth error fields found in a JSON body (RFC 6749 §5.2), if any.
    public var oauthError: OAuthErrorResponse?
    /// The `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750 §3), if any.
    @_spi(Provider) public var bearerChallenge: BearerChallenge?
    /// The error that stopped the operation, when there was one (transport error, parse error).
    public var underlying: (any Error)?

    /// Describes a failure; the OAuth error and the Bearer challenge are read from `response` and
    /// `body` here, so mappers need not parse them again.
    public init(
        operation: AuthOperation,
        response: HTTPResponse? = nil,
        body: Data? = nil,
        underlying: (any Error)? = nil
    ) {
        self.operation = operation
        self.response = response
        self.body = body
        self.underlying = underlying
        if let body, !body.isEmpty, let object = try? JSONValue.parse(body).objectValue {
            oauthError = OAuthErrorResponse(json: object)
        }
        if let header = response?.headerFields[.wwwAuthenticate] {
            bearerChallenge = BearerChallenge(headerValue: header)
        }
    }

    /// A failure whose challenge was read already (``ResourceAnswer``): the header is not parsed again.
    package init(
        operation: AuthOperation, response: HTTPResponse, body: Data, challenge: BearerChallenge?
    ) {
        self.init(operation: operation, body: body)
        self.response = response
        bearerChallenge = challenge
    }

    /// The HTTP status code, when the server answered.
    public var status: Int? { response?.status.code }

    /// The response's media type without parameters, lowercased (`"text/html"`), when stated.
    public var contentType: String? { response?.mediaType }

    /// An error of this failure with a provider's own code, message and hint, keeping its operation,
    /// HTTP status and OAuth error (`error`, `error_description`, `error_uri`): what a provider's
    /// ``ErrorMapper`` returns for a refusal it recognises.
    ///
    /// ```swift
    /// case "invalid_scope":
    ///     return failure.mapped(.configurationInvalid, "the server has no such scope", hint: "ask for fewer")
    /// ```
    public func mapped(_ code: AuthError.Code, _ message: String, hint: String) -> AuthError {
        AuthError(
            code, message, hint: hint, operation: operation, status: status, oauthError: oauthError?.error,
            oauthErrorDescription: oauthError?.errorDescription, oauthErrorURI: oauthError?.errorURI)
    }

    public var description: String {
        var parts = ["operation: \(operation.rawValue)"]
        if let status { parts.append("HTTP \(status)") }
        if let contentType { parts.append("content type \(contentType)") }
        if let body { parts.append("body \(body.count) bytes") }
        if let oauthError { parts.append("error \(Redaction.scrub(oauthError.error))") }
        if let underlying { parts.append("underlying \(type(of: underlying))") }
        return "AuthFailure(" + parts.joined(separator: ", ") + ")"
    }
}

extension HTTPResponse {
    /// The media type of `Content-Type` without parameters, lowercased; `nil` when absent.
    package var mediaType: String? {
        guard let value = headerFields[.contentType] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Whether the response says its body is JSON (`application/json` or any `+json` type).
    package var isJSON: Bool {
        guard let mediaType else { return false }
        return mediaType == "application/json" || mediaType.hasSuffix("+json")
    }
}
