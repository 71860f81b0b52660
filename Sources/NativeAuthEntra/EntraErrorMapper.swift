internal import Foundation
internal import LenientJSON
public import NativeAuth

/// Microsoft Entra's error dialect: the `AADSTS` codes in `error_description` (and in the body's
/// `error_codes`), from Microsoft's "Microsoft Entra authentication and authorization error codes"
/// page, on top of the standard mapping.
///
/// | AADSTS | NativeAuth |
/// | --- | --- |
/// | 50076, 50079, 50158 (multi-factor authentication) with `claims` | ``AuthError/Code/stepUpRequired`` with the claims |
/// | 50076, 50079, 50158 without `claims` | ``AuthError/Code/loginRequired`` at refresh, else ``AuthError/Code/authorizationFailed``, with a hint |
/// | 53003 (blocked by Conditional Access) | ``AuthError/Code/authorizationFailed`` |
/// | 65001, 65004 (consent) | ``AuthError/Code/loginRequired`` at refresh, else ``AuthError/Code/authorizationFailed``, with a hint |
/// | 70008, 700082, 700084, 50173 (refresh token expired or revoked) | ``AuthError/Code/loginRequired`` |
/// | 50020, 90072, 700016, 90002, 50194 (wrong tenant) | ``AuthError/Code/configurationInvalid``, naming the tenant setting |
/// | 7000218 (a secret is wanted: not a public client) | ``AuthError/Code/configurationInvalid`` |
/// | 50011 (redirect URI) | ``AuthError/Code/configurationInvalid`` |
///
/// The device flow's `authorization_declined` (Entra's word for `access_denied`) is
/// ``AuthError/Code/authorizationFailed``. Everything else goes to the standard mapping, with the
/// description (and its AADSTS code) kept in ``AuthError/oauthErrorDescription``.
public struct EntraErrorMapper: ErrorMapper {
    /// Creates the mapper.
    public init() {}

    public func map(_ failure: AuthFailure) -> AuthError? {
        let body = failure.body.flatMap { try? JSONValue.parse($0).objectValue }
        guard let oauth = failure.oauthError ?? body.flatMap(OAuthErrorResponse.init(json:)) else { return nil }
        let operation = failure.operation
        let codes = Self.codes(description: oauth.errorDescription, body: body)
        func error(_ code: AuthError.Code, _ message: String, hint: String? = nil, field: String? = nil) -> AuthError {
            AuthError(
                code,
                message + (codes.first.map { " (AADSTS\($0))" } ?? ""),
                hint: hint,
                operation: operation,
                field: field,
                status: failure.status,
                oauthError: oauth.error,
                oauthErrorDescription: oauth.errorDescription,
                oauthErrorURI: oauth.errorURI
            )
        }
        let interactive: AuthError.Code = operation == .refresh ? .loginRequired : .authorizationFailed
        if oauth.error == "authorization_declined" {
            return error(.authorizationFailed, "the sign-in was declined on the device page")
        }
        guard let code = codes.first else { return nil }
        switch code {
        case 50076, 50079, 50158:
            let message = "the tenant asks for multi-factor authentication"
            if let text = (try? body?.string("claims")) ?? nil, let claims = Self.claims(text) {
                return AuthError.stepUpRequired(
                    LoginOptions(claims: claims), message: message + " (AADSTS\(code)); sign in again with its claims",
                    operation: operation, status: failure.status, oauthError: oauth.error,
                    oauthErrorDescription: oauth.errorDescription)
            }
            return error(interactive, message, hint: "sign in again in the browser, and complete the second factor")
        case 53003:
            return error(
                .authorizationFailed, "a Conditional Access policy of the tenant blocks this sign-in",
                hint: "ask the tenant's administrator which policy applies (device, location or app)")
        case 65001, 65004:
            return error(
                interactive, "the app lacks consent for the scopes asked for",
                hint: "sign in again with --prompt consent; where only an administrator may consent, ask one to"
                    + " grant the app's permissions for the tenant")
        case 70008, 700082, 700084, 50173:
            return error(.loginRequired, "the refresh token expired or was revoked", hint: "sign in again")
        case 50020, 90072:
            return error(
                .configurationInvalid, "the account is not in the tenant this client signs in to",
                hint: "set the tenant to the account's own, or to organizations or common for a multi-tenant app",
                field: Setting.entraTenant.key)
        case 700016, 90002:
            return error(
                .configurationInvalid, "the tenant does not know this client id, or does not exist",
                hint: "check the tenant and the client id (the app registration's Application (client) ID)",
                field: Setting.entraTenant.key)
        case 50194:
            return error(
                .configurationInvalid, "the app is single-tenant: it cannot sign in at common or organizations",
                hint: "set the tenant to the app's own tenant id or domain", field: Setting.entraTenant.key)
        case 7_000_218:
            return error(
                .configurationInvalid, "Entra wants a client secret or assertion: the app is not a public client",
                hint: "turn on \"Allow public client flows\" in the app registration's Authentication page, or"
                    + " give the client secret")
        case 50011:
            return error(
                .configurationInvalid, "the redirect URI is not one of the app registration's",
                hint: "add http://localhost as a \"Mobile and desktop applications\" redirect URI (Entra takes it"
                    + " on any port), or register http://127.0.0.1:PORT/callback and pass --port PORT")
        default:
            return nil
        }
    }

    /// The AADSTS codes: the body's `error_codes`, else the `AADSTS` numbers in the description.
    static func codes(description: String?, body: JSONObject?) -> [Int] {
        if let list = body?["error_codes"]?.arrayValue {
            let numbers = list.compactMap { value -> Int? in
                if case .integer(let number) = value { return Int(exactly: number) }
                return nil
            }
            if !numbers.isEmpty { return numbers }
        }
        guard let description else { return [] }
        var codes: [Int] = []
        var rest = Substring(description)
        while let range = rest.range(of: "AADSTS") {
            let digits = rest[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
            if let number = Int(digits) { codes.append(number) }
            rest = rest[range.upperBound...]
        }
        return codes
    }

    /// A claims request as Entra sends it at the token endpoint: JSON in a string (sometimes
    /// base64url-encoded, as in a `WWW-Authenticate` challenge).
    static func claims(_ text: String) -> JSONObject? {
        if let object = try? JSONValue.parse(Data(text.utf8)).objectValue { return object }
        guard let data = Base64URL.decode(text) else { return nil }
        return try? JSONValue.parse(data).objectValue
    }
}
