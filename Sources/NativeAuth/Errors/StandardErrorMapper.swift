internal import Foundation
internal import HTTPTypes
internal import LenientJSON

/// The standard mapping from failures to ``AuthError``s.
///
/// | failure | code | retryable |
/// | --- | --- | --- |
/// | already an `AuthError` (from the transport) | unchanged, operation filled in | as it was |
/// | `WWW-Authenticate: Bearer error="invalid_token"` | `invalid_token` | no |
/// | `WWW-Authenticate: Bearer error="insufficient_scope"` | `insufficient_scope` | no |
/// | HTTP 5xx, `server_error`, `temporarily_unavailable` | `server_error` | yes |
/// | HTTP 429 | `rate_limited` | yes |
/// | `invalid_grant`, or any other OAuth error but a passing one or one about the request (`invalid_client`, `unauthorized_client`, `invalid_scope`, `invalid_target`, DPoP's), while refreshing | `login_required` | no |
/// | `invalid_grant` otherwise | the operation's code | no |
/// | `invalid_client`, `unauthorized_client` | `configuration_invalid` | no |
/// | `access_denied` | `authorization_failed` | no |
/// | `invalid_redirect_uri`, `invalid_client_metadata` (RFC 7591) | `registration_failed` | no |
/// | any other OAuth `error` (kept unchanged in ``AuthError/oauthError``) | the operation's code | no |
/// | a body that is not JSON (a proxy's HTML page), or JSON that cannot be read | `response_malformed` | yes |
/// | HTTP 401 from a resource server | `invalid_token` | no |
/// | `URLError.timedOut` / other `URLError`s | `timeout` / `network` | yes |
/// | anything else | the operation's code (``AuthOperation/defaultErrorCode``) | no |
public struct StandardErrorMapper: ErrorMapper {
    /// Creates the standard mapper.
    public init() {}

    /// Maps any failure; never returns `nil`.
    public func map(_ failure: AuthFailure) -> AuthError? { mapFailure(failure) }

    /// Maps any failure.
    public func mapFailure(_ failure: AuthFailure) -> AuthError {
        let operation = failure.operation
        switch failure.underlying {
        case var error as AuthError:
            if error.operation == nil { error.operation = operation }
            return error
        case is CancellationError:
            return AuthError(.cancelled, "\(operation.phrase) was cancelled", operation: operation)
        case let error as URLError:
            var mapped = AuthError.transport(error, host: nil)
            mapped.operation = operation
            return mapped
        default:
            break
        }

        if let mapped = mapChallenge(failure) ?? mapStatus(failure) ?? mapOAuthError(failure) ?? mapMalformed(failure) {
            return mapped
        }
        let status = failure.status
        if status == 401, operation == .apiRequest || operation == .userInfo {
            return AuthError(
                .invalidToken,
                "the server refused the access token",
                operation: operation,
                status: status
            )
        }
        // The status is in the error's description already ("(HTTP 401)"): the message does not repeat it.
        let reason = status == nil ? failure.underlying.map { "\(type(of: $0))" } : nil
        return AuthError(
            operation.defaultErrorCode,
            "\(operation.phrase) failed" + (reason.map { ": \($0)" } ?? ""),
            operation: operation,
            status: status,
            underlying: failure.underlying
        )
    }

    /// RFC 6750 §3.1: what a resource server says in `WWW-Authenticate`.
    private func mapChallenge(_ failure: AuthFailure) -> AuthError? {
        // A registration endpoint's challenge is about the initial access token: the OAuth error says it.
        guard failure.operation != .registration, let challenge = failure.bearerChallenge,
            let error = challenge.error
        else { return nil }
        let code: AuthError.Code
        let message: String
        switch error {
        case "invalid_token":
            code = .invalidToken
            message = "the server refused the access token (expired, revoked or malformed)"
        case "insufficient_scope":
            code = .insufficientScope
            message =
                "the access token lacks a scope this request needs"
                + (challenge.scope.map { " (needs: \($0))" } ?? "")
        default:
            return nil
        }
        return AuthError(
            code,
            message,
            hint: code == .insufficientScope ? "sign in again asking for the scopes this request needs" : nil,
            operation: failure.operation,
            status: failure.status,
            oauthError: error,
            oauthErrorDescription: challenge.errorDescription
        )
    }

    /// 5xx and 429, whatever the body says.
    private func mapStatus(_ failure: AuthFailure) -> AuthError? {
        guard let status = failure.status else { return nil }
        let oauth = failure.oauthError
        if status >= 500 {
            return AuthError(
                .serverError,
                "the server failed while \(failure.operation.phrase); try again later",
                operation: failure.operation,
                status: status,
                oauthError: oauth?.error,
                oauthErrorDescription: oauth?.errorDescription,
                oauthErrorURI: oauth?.errorURI,
                isRetryable: true
            )
        }
        if status == 429 {
            let retryAfter = failure.response?.headerFields[.retryAfter].map { " (Retry-After: \($0))" } ?? ""
            return AuthError(
                .rateLimited,
                "the server asks to slow down\(retryAfter); try again later",
                operation: failure.operation,
                status: status,
                oauthError: oauth?.error,
                oauthErrorDescription: oauth?.errorDescription,
                isRetryable: true
            )
        }
        return nil
    }

    /// The OAuth errors at refresh that leave the refresh token in place: passing ones, and those
    /// about this request rather than the token (the client's authentication, a DPoP proof or
    /// nonce, a resource or scope asked for). Any other error at refresh ends the sign-in.
    static let refusalsThatKeepTheRefreshToken: Set<String> = [
        "server_error", "temporarily_unavailable", "invalid_client", "unauthorized_client", "use_dpop_nonce",
        "invalid_dpop_proof",
        "invalid_target", "invalid_scope", "slow_down",
    ]

    /// What to do about a refused loopback redirect URI.
    static let redirectURIHint =
        "register http://127.0.0.1/callback; a server that matches redirect URIs exactly, port included (not"
        + " RFC 8252 §7.3), needs http://127.0.0.1:PORT/callback registered and that `port`"

    /// RFC 6749 §5.2 and the OAuth error codes of other RFCs.
    private func mapOAuthError(_ failure: AuthFailure) -> AuthError? {
        guard let oauth = failure.oauthError else { return nil }
        let operation = failure.operation
        var code = operation.defaultErrorCode
        var message = "the server refused: \(oauth.error)"
        var hint: String?
        var retryable: Bool?
        switch oauth.error {
        case "invalid_token" where operation == .registration, "access_denied" where operation == .registration:
            code = .registrationFailed
            message =
                "the server registers only clients that bring an initial access token, and this one was missing"
                + " or refused"
            hint = "give the initial access token the server's administrator issued for registering (RFC 7591 §3)"
        case "invalid_grant" where operation == .refresh:
            code = .loginRequired
            message = "the refresh token is no longer valid (expired, revoked or already used)"
            hint = "sign in again"
        case let error where operation == .refresh && !Self.refusalsThatKeepTheRefreshToken.contains(error):
            // A server that lost the session may say invalid_request (or anything else) instead of
            // invalid_grant: the refresh token will not work again, so the sign-in is over.
            code = .loginRequired
            message = "the server refused the refresh (\(error))"
            hint = "sign in again"
        case "invalid_grant":
            message =
                "the grant (an authorization code, device code or verifier; a workload's subject token or assertion)"
                + " is invalid, expired or already used"
        case "invalid_client", "unauthorized_client":
            code = .configurationInvalid
            message = "the server did not accept this client (\(oauth.error))"
            hint = "check the client id, the client secret and the client authentication method (`client_auth`)"
        case "invalid_scope":
            message = "the server refused the requested scope"
            hint = "check the scopes requested (`scope`) against those the client may ask for"
        case "invalid_target":
            message = "the server does not issue tokens for the requested resource (invalid_target, RFC 8707)"
            hint = "check the `resource`: the server must know it, and the sign-in must cover it"
        case "invalid_redirect_uri" where operation != .registration,
            "invalid_request" where oauth.errorDescription?.lowercased().contains("redirect") == true:
            message = "the server refused the redirect URI"
            hint = Self.redirectURIHint
        case "invalid_redirect_uri", "invalid_client_metadata", "invalid_software_statement",
            "unapproved_software_statement":
            message = "the server refused to register the client (\(oauth.error), RFC 7591)"
            hint = "check what the client asks to be registered with (its redirect URIs, grant types and name)"
        case "server_error", "temporarily_unavailable":
            code = .serverError
            message = "the server is unavailable (\(oauth.error)); try again later"
            retryable = true
        case "access_denied":
            code = .authorizationFailed
            message = "access was denied"
        case "invalid_token":
            code = .invalidToken
            message = "the server refused the token"
        case "insufficient_scope":
            code = .insufficientScope
            message = "the token lacks a scope this request needs"
        default:
            break
        }
        return AuthError(
            code,
            message,
            hint: hint,
            operation: operation,
            status: failure.status,
            oauthError: oauth.error,
            oauthErrorDescription: oauth.errorDescription,
            oauthErrorURI: oauth.errorURI,
            isRetryable: retryable
        )
    }

    /// A body that is not the JSON the protocol promises, or JSON that does not say what it must.
    private func mapMalformed(_ failure: AuthFailure) -> AuthError? {
        let operation = failure.operation
        // The status is in the description ("(HTTP 502)"), not said twice.
        let answered = failure.status == nil ? "a response" : "an answer"
        let type = failure.contentType ?? "no content type"
        switch failure.underlying {
        case let error as JSONParseError:
            return AuthError(
                .responseMalformed,
                "\(operation.phrase) got \(answered) (\(type)) whose JSON cannot be read: \(error.summary)",
                operation: operation,
                status: failure.status,
                underlying: error
            )
        case let error as JSONFieldError:
            return AuthError(
                .responseMalformed,
                "\(operation.phrase) got \(answered) that lacks what the protocol requires: \(error)",
                operation: operation,
                status: failure.status,
                underlying: error
            )
        default:
            break
        }
        guard let body = failure.body, !body.isEmpty, failure.response?.isJSON != true,
            (try? JSONValue.parse(body)) == nil
        else { return nil }
        return AuthError(
            .responseMalformed,
            "\(operation.phrase) expected a JSON response but got \(answered) with \(type) (\(body.count) bytes);"
                + " a proxy, captive portal or wrong URL may be in the way",
            operation: operation,
            status: failure.status
        )
    }
}

extension AuthOperation {
    /// A lowercase phrase for messages: "refreshing the tokens".
    var phrase: String {
        switch self {
        case .discovery: "loading the provider's metadata"
        case .authorization: "the authorization request"
        case .tokenExchange: "exchanging the grant for tokens"
        case .refresh: "refreshing the tokens"
        case .deviceAuthorization: "the device authorization request"
        case .revocation: "revoking the token"
        case .userInfo: "loading the userinfo"
        case .apiRequest: "the API request"
        case .logout: "logging out"
        case .registration: "registering the client"
        case .pushedAuthorization: "pushing the authorization request"
        default: "the \(rawValue) operation"
        }
    }
}
