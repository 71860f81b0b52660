@_spi(Provider) internal import NativeAuth

/// STS's refusals, as `AuthError`s with a hint each. The STS error code stays in
/// `AuthError.oauthError` (`InvalidIdentityToken`, `AccessDenied`, …) and STS's
/// message in `oauthErrorDescription`.
enum STSError {
    /// The error codes STS documents for AssumeRoleWithWebIdentity, and the common ones.
    static let knownCodes: Set<String> = [
        "InvalidIdentityToken", "ExpiredTokenException", "AccessDenied", "AccessDeniedException", "IDPRejectedClaim",
        "IDPCommunicationError", "Throttling", "ThrottlingException", "RequestLimitExceeded",
        "RegionDisabledException", "InvalidParameterValue", "ValidationError", "MalformedPolicyDocument",
        "PackedPolicyTooLarge",
    ]

    /// The error for a non-200 answer of STS (`refusal`: its error's code and message, when it
    /// was STS's error).
    static func mapped(status: Int, refusal: (code: String, message: String?)?, roleARN: String) -> AuthError {
        guard let (code, message) = refusal else {
            return AuthError(
                status >= 500 ? .serverError : .responseMalformed,
                "STS answered HTTP \(status) without an STS error",
                hint: "check the STS endpoint (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the region)", status: status)
        }
        // A code STS documents is one of its names, not a secret, though it is a long camel-case
        // word that the scrubbing of AuthError's text would take for one; any other is scrubbed.
        let shownCode = knownCodes.contains(code) ? code : AuthError(.requestFailed, code).message
        let said = message.map { ": " + AuthError(.requestFailed, $0).message } ?? ""
        func error(_ kind: AuthError.Code, _ text: String, hint: String, retryable: Bool? = nil) -> AuthError {
            var error = AuthError(kind, text, status: status, oauthErrorDescription: message, isRetryable: retryable)
            error.message += " (\(shownCode))" + said
            error.oauthError = shownCode
            error.hint = hint  // written here, naming STS's actions
            return error
        }
        switch code {
        case "InvalidIdentityToken":
            return error(
                .invalidToken, "STS refused the token as a web identity",
                hint: "the AWS account needs an IAM OIDC identity provider for this issuer, with the client id"
                    + " among its audiences")
        case "ExpiredTokenException":
            return error(
                .invalidToken, "STS found the token expired",
                hint: "check this machine's clock, then sign in again")
        case "AccessDenied", "AccessDeniedException":
            return error(
                .authorizationFailed, "STS refused to let this sign-in assume \(roleARN)",
                hint: "the role's trust policy must allow sts:AssumeRoleWithWebIdentity for the issuer's IAM OIDC"
                    + " provider, with conditions (aud, sub) that this sign-in meets")
        case "IDPRejectedClaim":
            return error(
                .authorizationFailed, "the identity provider's claims were refused",
                hint: "check the role's trust policy conditions against the ID token's claims")
        case "IDPCommunicationError":
            return error(
                .serverError, "STS could not reach the identity provider",
                hint: "try again: STS fetches the issuer's keys", retryable: true)
        case "Throttling", "ThrottlingException", "RequestLimitExceeded":
            return error(.rateLimited, "STS asks to slow down", hint: "try again in a moment", retryable: true)
        case "RegionDisabledException":
            return error(
                .configurationInvalid, "STS is not activated in this region",
                hint: "activate it in the account, or give another region", retryable: false)
        case "InvalidParameterValue", "ValidationError", "MalformedPolicyDocument", "PackedPolicyTooLarge":
            return error(
                .configurationInvalid, "STS refused the request",
                hint: "check the role ARN and the duration (at most the role's maximum session duration)")
        default:
            return error(
                status >= 500 ? .serverError : .authorizationFailed, "STS refused",
                hint: "see STS's message")
        }
    }
}
