internal import HTTPTypes

/// What a ``AuthError/Code/stepUpRequired`` error carries: the sign-in the API asked for.
struct StepUpChallenge: Error, Sendable {
    let options: LoginOptions
}

/// What an ``AuthError/Code/insufficientScope`` error carries: the scopes the API's challenge named.
struct ScopeChallenge: Error, Sendable {
    let scopes: [String]
}

extension AuthError {
    /// The scopes an API's 403 `insufficient_scope` named in its challenge (RFC 6750 §3.1's
    /// `scope`), on an ``Code/insufficientScope`` error: sign in again asking for them too, or let
    /// ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)`` do it. `nil` when the challenge named none, and on
    /// any other error.
    public var missingScopes: [String]? { (underlying as? ScopeChallenge)?.scopes }

    /// The stronger or more recent sign-in an API asked for, on a ``Code/stepUpRequired`` error:
    /// sign in again with these options (``Authenticator/login(_:scopes:)``), or let
    /// ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)`` do it. `nil` on any other error.
    public var stepUp: LoginOptions? { (underlying as? StepUpChallenge)?.options }

    /// A ``Code/stepUpRequired`` error that asks for a sign-in with `options`: for a provider's
    /// ``ErrorMapper`` whose server asks for a stronger sign-in in its own words (Microsoft Entra's
    /// `claims` beside `interaction_required` at the token endpoint). ``stepUp`` returns `options`,
    /// and ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)`` signs in with them.
    ///
    /// - Parameters:
    ///   - options: The sign-in asked for (its ``LoginOptions/claims``, ``LoginOptions/acrValues``, …).
    ///   - message: What happened, for people.
    ///   - hint: What to do, when the standard hint does not fit.
    ///   - operation: The operation the server answered.
    ///   - status: The HTTP status.
    ///   - oauthError: The OAuth `error`.
    ///   - oauthErrorDescription: The server's `error_description`.
    /// - Returns: The error.
    public static func stepUpRequired(
        _ options: LoginOptions,
        message: String,
        hint: String? = nil,
        operation: AuthOperation,
        status: Int? = nil,
        oauthError: String? = nil,
        oauthErrorDescription: String? = nil
    ) -> AuthError {
        AuthError(
            .stepUpRequired,
            message,
            hint: hint ?? "sign in again as the server asks, or send with a step-up presenter",
            operation: operation,
            status: status,
            oauthError: oauthError,
            oauthErrorDescription: oauthErrorDescription,
            underlying: StepUpChallenge(options: options))
    }

    /// The error for an answer whose challenge asks for the stronger sign-in `options`.
    static func stepUp(_ options: LoginOptions, challenge: BearerChallenge?, status: Int) -> AuthError {
        var asked: [String] = []
        if !options.acrValues.isEmpty {
            asked.append("acr_values " + TerminalText.sanitized(options.acrValues.joined(separator: " ")))
        }
        if let maxAge = options.maxAge { asked.append("a sign-in within the last \(maxAge) s") }
        if options.claims != nil { asked.append("the claims it names") }
        return AuthError(
            .stepUpRequired,
            "the API asks for a stronger or more recent sign-in (" + asked.joined(separator: "; ") + ")",
            hint: "sign in again as it asks, or send with a step-up presenter",
            operation: .apiRequest,
            status: status,
            oauthError: challenge?.error,
            oauthErrorDescription: challenge?.errorDescription,
            underlying: StepUpChallenge(options: options))
    }
}
