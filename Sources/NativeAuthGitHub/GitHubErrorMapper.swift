public import NativeAuth

/// GitHub's error dialect (docs: "Troubleshooting OAuth app access token request errors" and the
/// device-flow error codes), on top of the standard mapping.
///
/// | GitHub | NativeAuth |
/// | --- | --- |
/// | `bad_verification_code` | ``AuthError/Code/tokenExchangeFailed``: the code is invalid or expired |
/// | `incorrect_client_credentials` | ``AuthError/Code/configurationInvalid``, with a hint |
/// | `redirect_uri_mismatch` | ``AuthError/Code/configurationInvalid``, with a hint |
/// | `bad_refresh_token` | ``AuthError/Code/loginRequired`` |
/// | `unsupported_grant_type` | ``AuthError/Code/configurationInvalid`` |
/// | `device_flow_disabled` | ``AuthError/Code/configurationInvalid``, with a hint |
/// | `incorrect_device_code` | ``AuthError/Code/tokenExchangeFailed`` |
/// | 401 `Bad credentials` | ``AuthError/Code/invalidToken`` |
///
/// The device-flow codes `authorization_pending`, `slow_down`, `expired_token` and
/// `access_denied` keep their OAuth code, which the polling loop reads.
public struct GitHubErrorMapper: ErrorMapper {
    /// Creates the mapper.
    public init() {}

    public func map(_ failure: AuthFailure) -> AuthError? {
        let operation = failure.operation
        if let oauth = failure.oauthError {
            func error(_ code: AuthError.Code, _ message: String, hint: String? = nil) -> AuthError {
                AuthError(
                    code,
                    message,
                    hint: hint,
                    operation: operation,
                    status: failure.status,
                    oauthError: oauth.error,
                    oauthErrorDescription: oauth.errorDescription,
                    oauthErrorURI: oauth.errorURI
                )
            }
            switch oauth.error {
            case "bad_verification_code":
                return error(.tokenExchangeFailed, "the authorization code is invalid or has expired")
            case "incorrect_client_credentials":
                return error(
                    .configurationInvalid,
                    "GitHub did not accept the client id or secret",
                    hint: "check --client-id and --client-secret against the app's settings on GitHub"
                )
            case "redirect_uri_mismatch":
                return error(
                    .configurationInvalid,
                    "the redirect URI is not the app's callback URL",
                    hint: "set the app's callback URL on GitHub to http://127.0.0.1/callback (any port is accepted)"
                )
            case "bad_refresh_token":
                return error(.loginRequired, "the refresh token is invalid or has expired", hint: "sign in again")
            case "unsupported_grant_type":
                return error(.configurationInvalid, "GitHub does not support this grant type for the app")
            case "device_flow_disabled":
                return error(
                    .configurationInvalid,
                    "the device flow is not enabled for this app",
                    hint: "enable \"Device Flow\" in the app's settings on GitHub, or sign in without --device"
                )
            case "incorrect_device_code":
                return error(.tokenExchangeFailed, "the device code is not valid")
            default:
                return nil
            }
        }
        if failure.status == 401, operation == .apiRequest || operation == .userInfo {
            return AuthError(
                .invalidToken,
                "GitHub refused the token (Bad credentials)",
                hint: "sign in again",
                operation: operation,
                status: 401
            )
        }
        return nil
    }
}
