extension AuthError.Code {
    /// The person must sign in again: no tokens, or the refresh token was refused (`invalid_grant`).
    public static let loginRequired = Self(rawValue: "login_required")
    /// A wait for the person was cancelled: a sign-in (a closed prompt, the end of the input,
    /// Ctrl-C, the task cancelled) or the browser's return from a logout page. Any other cancelled
    /// operation is ``cancelled``; ``AuthError/isCancellation`` is true for both.
    public static let loginCancelled = Self(rawValue: "login_cancelled")
    /// The `state` (or `iss`) of a callback does not match the request: the response is not ours.
    public static let invalidState = Self(rawValue: "invalid_state")
    /// The authorization server refused the authorization request (`access_denied`, …).
    public static let authorizationFailed = Self(rawValue: "authorization_failed")
    /// Exchanging the authorization code (or device code) for tokens failed.
    public static let tokenExchangeFailed = Self(rawValue: "token_exchange_failed")
    /// Refreshing failed for a reason other than a refused refresh token.
    public static let refreshFailed = Self(rawValue: "refresh_failed")
    /// A resource server refused the access token (RFC 6750 `invalid_token`).
    public static let invalidToken = Self(rawValue: "invalid_token")
    /// The access token lacks a scope the resource needs (RFC 6750 `insufficient_scope`).
    public static let insufficientScope = Self(rawValue: "insufficient_scope")
    /// The provider's metadata (discovery document, JWKS) could not be loaded or is unusable.
    public static let metadataUnavailable = Self(rawValue: "metadata_unavailable")
    /// The server could not be reached: DNS, connection, TLS.
    public static let network = Self(rawValue: "network")
    /// The server's TLS certificate is not trusted (an unknown CA, another host's, expired): a CA
    /// file (`--ca-file`, `ca_file`, `SSL_CERT_FILE`) may be what is missing. Not retryable.
    public static let certificateUntrusted = Self(rawValue: "certificate_untrusted")
    /// The server did not answer in time.
    public static let timeout = Self(rawValue: "timeout")
    /// The answer is not what the protocol says: not JSON, a proxy's HTML page, a missing field.
    public static let responseMalformed = Self(rawValue: "response_malformed")
    /// The answer is larger than the configured limit; it was not read.
    public static let responseTooLarge = Self(rawValue: "response_too_large")
    /// The server failed (HTTP 5xx, `server_error`, `temporarily_unavailable`).
    public static let serverError = Self(rawValue: "server_error")
    /// The server asks to slow down (HTTP 429).
    public static let rateLimited = Self(rawValue: "rate_limited")
    /// An ID token failed validation.
    public static let idTokenInvalid = Self(rawValue: "id_token_invalid")
    /// The token store could not load, save or lock.
    public static let tokenStoreFailed = Self(rawValue: "token_store_failed")
    /// The configuration is missing something or is wrong (client id, secret, endpoints, plain HTTP).
    public static let configurationInvalid = Self(rawValue: "configuration_invalid")
    /// No provider with the asked-for id is registered.
    public static let providerNotRegistered = Self(rawValue: "provider_not_registered")
    /// Logging out (revocation, end-session) failed.
    public static let logoutFailed = Self(rawValue: "logout_failed")
    /// The authorization server refused to register the client (RFC 7591 §3.2.2:
    /// `invalid_redirect_uri`, `invalid_client_metadata`, …), or has no registration endpoint.
    public static let registrationFailed = Self(rawValue: "registration_failed")
    /// A resource server asks for a stronger or more recent sign-in (RFC 9470
    /// `insufficient_user_authentication`, or a claims challenge): ``AuthError/stepUp`` says what
    /// to sign in with.
    public static let stepUpRequired = Self(rawValue: "step_up_required")
    /// A request to a resource server failed for a reason not covered by another code.
    public static let requestFailed = Self(rawValue: "request_failed")
    /// An operation that does not wait for the person was cancelled by the program: a request, a
    /// refresh, discovery. A cancelled wait for the person is ``loginCancelled``;
    /// ``AuthError/isCancellation`` is true for both.
    public static let cancelled = Self(rawValue: "cancelled")

    /// Whether an error with this code is usually worth retrying later.
    public var isRetryableByDefault: Bool {
        switch self {
        case .network, .timeout, .serverError, .rateLimited, .responseMalformed: true
        default: false
        }
    }
}
