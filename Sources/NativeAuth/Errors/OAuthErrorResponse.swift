package import LenientJSON

/// The error fields of an OAuth error response (RFC 6749 §5.2) or a `WWW-Authenticate` challenge
/// (RFC 6750 §3).
public struct OAuthErrorResponse: Sendable, Equatable {
    /// The `error` code, unchanged (`invalid_grant`, `bad_verification_code`, …).
    public var error: String
    /// The `error_description`, if any.
    public var errorDescription: String?
    /// The `error_uri`, if any.
    public var errorURI: String?

    /// Creates error fields.
    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    /// Reads the fields from a JSON object; `nil` when it has no usable `error` string.
    package init?(json object: JSONObject) {
        guard let error = try? object.string("error"), !error.isEmpty else { return nil }
        self.init(
            error: error,
            errorDescription: try? object.string("error_description"),
            errorURI: try? object.string("error_uri")
        )
    }

    /// Reads the fields from form fields (GitHub answers errors form-encoded); `nil` without `error`.
    package init?(form fields: [FormField]) {
        guard let error = fields.first(named: "error"), !error.isEmpty else { return nil }
        self.init(
            error: error,
            errorDescription: fields.first(named: "error_description"),
            errorURI: fields.first(named: "error_uri")
        )
    }
}
