internal import LenientJSON
public import NativeAuth

/// Initech's error dialect: `{"status": "error", "errors": [{"code": "REFRESH_TOKEN_EXPIRED",
/// "detail": "…"}]}` with HTTP 400 or 401, instead of RFC 6749's `{"error": "invalid_grant"}`.
///
/// | Initech | NativeAuth |
/// | --- | --- |
/// | `AUTH_CODE_INVALID`, `AUTH_CODE_EXPIRED` | ``AuthError/Code/tokenExchangeFailed`` |
/// | `REFRESH_TOKEN_EXPIRED`, `REFRESH_TOKEN_REVOKED` | ``AuthError/Code/loginRequired``: sign in again |
/// | `CLIENT_UNKNOWN` | ``AuthError/Code/configurationInvalid``, with a hint |
///
/// The Initech code is kept in ``AuthError/oauthError``. Any other failure (an unknown code, an
/// HTML page from a proxy, a 503) is left to the standard mapper. The `detail` text is not copied
/// into the error: it is the server's prose, and it is not ours to vouch that it holds no secret.
public struct InitechErrorMapper: ErrorMapper {
    /// Creates the mapper.
    public init() {}

    /// Maps a failure with an Initech error code, or returns `nil`.
    ///
    /// - Parameter failure: What went wrong.
    /// - Returns: The error, or `nil` for the standard mapping.
    public func map(_ failure: AuthFailure) -> AuthError? {
        guard let code = Self.errorCode(in: failure) else { return nil }
        func error(_ kind: AuthError.Code, _ message: String, hint: String? = nil) -> AuthError {
            AuthError(kind, message, hint: hint, operation: failure.operation, status: failure.status, oauthError: code)
        }
        switch code {
        case "AUTH_CODE_INVALID", "AUTH_CODE_EXPIRED":
            return error(.tokenExchangeFailed, "Initech did not accept the authorization code (\(code))")
        case "REFRESH_TOKEN_EXPIRED", "REFRESH_TOKEN_REVOKED":
            return error(.loginRequired, "the Initech session has ended (\(code))", hint: "sign in again")
        case "CLIENT_UNKNOWN":
            return error(
                .configurationInvalid,
                "Initech does not know this client",
                hint: "check --client-id against the app's registration"
            )
        default:
            return nil
        }
    }

    /// The first `errors[].code` of a JSON body, if there is one.
    static func errorCode(in failure: AuthFailure) -> String? {
        guard let body = failure.body, let object = try? JSONValue.parse(body).objectValue,
            let errors = try? object.array("errors"), let first = errors.first?.objectValue
        else { return nil }
        return (try? first.string("code")) ?? nil
    }
}
