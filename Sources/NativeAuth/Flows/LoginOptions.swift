public import LenientJSON

/// How a browser sign-in should authenticate the person (OIDC Core §3.1.2.1): to ask for a fresh
/// or stronger sign-in (step-up), to name the account, or the language of the pages.
///
/// What the ID token says is checked against what was asked: with ``maxAge``, its `auth_time`
/// must be that recent; with ``acrValues``, its `acr` must be one of them. A sign-in that does not
/// meet them is refused and nothing is stored.
public struct LoginOptions: Sendable, Equatable {
    /// `prompt`: `login` (sign in again even with a session), `consent`, `select_account`, `none`.
    public var prompt: String?
    /// `login_hint`: the account to sign in, as the person would type it.
    public var loginHint: String?
    /// `max_age`: the most seconds since the person last authenticated.
    public var maxAge: Int?
    /// `acr_values`: the authentication context classes asked for, most preferred first (an MFA
    /// level, a phishing-resistant method).
    public var acrValues: [String]
    /// `claims` (OIDC Core §5.5): claims asked for by name, with what they must be. Entra's
    /// Conditional Access challenges name such a request.
    public var claims: JSONObject?
    /// `ui_locales`: the languages of the sign-in pages, most preferred first.
    public var uiLocales: [String]

    /// Creates options; none are sent by default.
    public init(
        prompt: String? = nil,
        loginHint: String? = nil,
        maxAge: Int? = nil,
        acrValues: [String] = [],
        claims: JSONObject? = nil,
        uiLocales: [String] = []
    ) {
        self.prompt = prompt
        self.loginHint = loginHint
        self.maxAge = maxAge
        self.acrValues = acrValues
        self.claims = claims
        self.uiLocales = uiLocales
    }

    /// The authorization request's parameters for these options.
    public var parameters: [FormField] {
        var fields: [FormField] = []
        if let prompt { fields.append(FormField("prompt", prompt)) }
        if let loginHint { fields.append(FormField("login_hint", loginHint)) }
        if let maxAge { fields.append(FormField("max_age", String(maxAge))) }
        if !acrValues.isEmpty { fields.append(FormField("acr_values", acrValues.joined(separator: " "))) }
        if let claims, let text = try? JSONValue.object(claims).encodedString(sortedKeys: true) {
            fields.append(FormField("claims", text))
        }
        if !uiLocales.isEmpty { fields.append(FormField("ui_locales", uiLocales.joined(separator: " "))) }
        return fields
    }
}
