public import Foundation

/// One authorization request (RFC 6749 §4.1.1 with PKCE, `state` and `nonce`), and the checks of
/// its callback.
public struct AuthorizationRequest: Sendable {
    /// What a provider sees when it adds parameters (``AuthProvider/authorizationParameters(for:)``).
    public struct Parameters: Sendable {
        /// The scopes asked for.
        public var scopes: [String]
        /// The redirect URI of this sign-in.
        public var redirectURI: URL

        /// Creates parameters (for testing a provider's ``AuthProvider/authorizationParameters(for:)``).
        public init(scopes: [String], redirectURI: URL) {
            self.scopes = scopes
            self.redirectURI = redirectURI
        }
    }

    /// The URL to open in the browser: the authorization endpoint with every parameter, or, once
    /// pushed (RFC 9126), with only `client_id` and `request_uri`.
    public private(set) var url: URL
    /// The request's parameters, as the URL carries them before any push. They hold no secret (the
    /// PKCE verifier is not among them), but the `state` and `nonce` of a sign-in in progress.
    public let parameters: [FormField]
    /// When the pushed request's `request_uri` expires (RFC 9126 §2.2); `nil` when it was not pushed.
    public private(set) var pushedRequestExpiresAt: Date?
    /// The redirect URI the callback must come to.
    public let redirectURI: URL
    /// The `state`: 32 random bytes, base64url.
    public let state: String
    /// The `nonce`, sent when the scopes include `openid`.
    public let nonce: String?
    /// The PKCE pair; the verifier goes with the code exchange.
    public let pkce: PKCE
    /// The scopes asked for.
    public let scopes: [String]
    /// The issuer the response must name in `iss` (RFC 9207), when known.
    public let expectedIssuer: String?
    /// Whether `iss` must be present (the metadata says `authorization_response_iss_parameter_supported`).
    public let requiresIssuer: Bool

    /// Parameters NativeAuth sets itself; a provider's extra parameters cannot replace them.
    public static let reservedParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method",
        "nonce",
    ]

    /// Builds a request with fresh `state`, `nonce` and PKCE values.
    ///
    /// - Parameters:
    ///   - metadata: The provider's metadata (authorization endpoint, issuer, `iss` support).
    ///   - clientID: The client id.
    ///   - redirectURI: The redirect URI the presenter's session fixed.
    ///   - scopes: The scopes to ask for.
    ///   - resources: The protected resources the grant is for (RFC 8707): one `resource` each.
    ///   - extraParameters: The provider's own parameters; reserved names are dropped.
    public init(
        metadata: ProviderMetadata,
        clientID: String,
        redirectURI: URL,
        scopes: [String],
        resources: [URL] = [],
        extraParameters: [FormField] = []
    ) {
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = SecureRandom.token()
        self.nonce = scopes.contains("openid") ? SecureRandom.token() : nil
        self.pkce = PKCE()
        self.expectedIssuer = metadata.issuer
        self.requiresIssuer = metadata.authorizationResponseIssParameterSupported
        var fields = [
            FormField("response_type", "code"),
            FormField("client_id", clientID),
            FormField("redirect_uri", redirectURI.absoluteString),
        ]
        if !scopes.isEmpty { fields.append(FormField("scope", scopes.joined(separator: " "))) }
        fields += resources.map { FormField("resource", $0.absoluteString) }
        fields += [
            FormField("state", state),
            FormField("code_challenge", pkce.challenge),
            FormField("code_challenge_method", pkce.method),
        ]
        if let nonce { fields.append(FormField("nonce", nonce)) }
        fields += extraParameters.filter { !Self.reservedParameters.contains($0.name) }
        self.parameters = fields
        // The endpoint came from validated metadata and the query is form-encoded, so this parses.
        self.url =
            FormURLEncoding.url(metadata.authorizationEndpoint.absoluteString, adding: fields)
            ?? metadata.authorizationEndpoint
    }

    /// The request by reference, after it was pushed (RFC 9126 §4): the authorization endpoint with
    /// `client_id` and the `request_uri` the server gave, good until it expires.
    ///
    /// The URL also repeats `response_type`, `redirect_uri` and `scope`, which OIDC Core §6.2 wants
    /// in a request by reference and some servers refuse one without (idpyoidc, whose own client
    /// sends them); RFC 9126 §4 has the server take every parameter from the pushed request all the
    /// same. What a sign-in keeps to itself stays pushed: `state`, `nonce`, the PKCE challenge,
    /// `dpop_jkt`, `login_hint` and every other parameter.
    package func byReference(_ pushed: PushedAuthorizationRequest, authorizationEndpoint: URL, clientID: String)
        -> AuthorizationRequest
    {
        var copy = self
        var fields = [
            FormField("client_id", clientID), FormField("request_uri", pushed.requestURI),
            FormField("response_type", "code"), FormField("redirect_uri", redirectURI.absoluteString),
        ]
        if !scopes.isEmpty { fields.append(FormField("scope", scopes.joined(separator: " "))) }
        copy.url = FormURLEncoding.url(authorizationEndpoint.absoluteString, adding: fields) ?? authorizationEndpoint
        copy.pushedRequestExpiresAt = pushed.expiresAt
        return copy
    }

    /// Whether `callback` answers this request: it comes to the redirect URI's path and carries
    /// exactly one `state`, equal (in constant time) to ours. Anything else is not ours to act on.
    public func isResponse(_ callback: URL) -> Bool {
        guard callback.path == redirectURI.path else { return false }
        let states = Self.query(of: callback).filter { $0.name == "state" }
        guard states.count == 1, let state = states.first?.value else { return false }
        return ConstantTime.equals(state, self.state)
    }

    /// Checks a callback and returns its code.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/invalidState`` when `state` is missing or wrong, or
    ///   `iss` is wrong, or missing from a successful response where the metadata promised it (a
    ///   possible mix-up attack);
    ///   ``AuthError/Code/authorizationFailed`` carrying the server's `error` (for example
    ///   `access_denied`), or when there is no code.
    public func validate(callback: URL) throws(AuthError) -> AuthorizationResponse {
        guard isResponse(callback) else {
            throw AuthError(
                .invalidState,
                "the callback's state does not match the sign-in in progress",
                operation: .authorization
            )
        }
        let fields = Self.query(of: callback)
        func single(_ name: String) throws(AuthError) -> String? {
            let values = fields.filter { $0.name == name }
            guard values.count <= 1 else {
                throw AuthError(
                    .authorizationFailed,
                    "the callback repeats the parameter \"\(name)\"",
                    operation: .authorization
                )
            }
            return values.first?.value
        }
        let issuer = try single("iss")
        if let issuer, let expectedIssuer, issuer != expectedIssuer {
            throw AuthError(
                .invalidState,
                "the callback comes from the issuer \"\(issuer)\", not \"\(expectedIssuer)\" (RFC 9207);"
                    + " another server may be answering for this one",
                operation: .authorization
            )
        }
        if let error = try single("error") {
            let description = try single("error_description")
            throw AuthError(
                .authorizationFailed,
                error == "access_denied" ? "access was denied" : "the authorization server refused the request",
                hint: error == "access_denied" ? "sign in again and approve the request" : nil,
                operation: .authorization,
                oauthError: error,
                oauthErrorDescription: description,
                oauthErrorURI: try single("error_uri")
            )
        }
        // A missing `iss` is refused only on success: an error response yields no code to steal, and
        // some servers (django-oauth-toolkit 3.4) leave `iss` out of error responses.
        if issuer == nil, requiresIssuer {
            throw AuthError(
                .invalidState,
                "the callback has no \"iss\" although the provider's metadata says it always sends one (RFC 9207)",
                operation: .authorization
            )
        }
        guard let code = try single("code"), !code.isEmpty else {
            throw AuthError(
                .authorizationFailed, "the callback carries no authorization code", operation: .authorization)
        }
        return AuthorizationResponse(code: code, issuer: issuer)
    }

    /// What a presenter should do with a callback: ``CallbackDisposition/ignore`` for a redirect
    /// that is not a response to this request (see ``isResponse(_:)``), else the result of
    /// ``validate(callback:)``, or of ``validate(pastedCode:)`` for a bare code.
    public func disposition(of callback: AuthorizationCallback) -> CallbackDisposition<AuthorizationResponse> {
        switch callback {
        case .redirect(let url):
            guard isResponse(url) else { return .ignore }
            return .complete(Result { () throws(AuthError) in try validate(callback: url) })
        case .code(let code):
            return .complete(Result { () throws(AuthError) in try validate(pastedCode: code) })
        }
    }

    /// Checks a bare authorization code that the person pasted.
    ///
    /// There is no `state` or `iss` to compare; the code is bound to this sign-in by PKCE, since
    /// only this client holds the verifier the token endpoint asks for. The code must be printable
    /// ASCII without spaces (RFC 6749 §A.11), at most 4096 characters.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/authorizationFailed``) for an empty or malformed code.
    public func validate(pastedCode code: String) throws(AuthError) -> AuthorizationResponse {
        let wellFormed =
            !code.isEmpty && code.utf8.count <= 4096 && code.utf8.allSatisfy { (0x21...0x7E).contains($0) }
        guard wellFormed else {
            throw AuthError(
                .authorizationFailed,
                "the pasted text is not an authorization code (a code has no spaces or special characters)",
                operation: .authorization
            )
        }
        return AuthorizationResponse(code: code, issuer: nil)
    }

    package static func query(of url: URL) -> [FormField] {
        guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery else {
            return []
        }
        return FormURLEncoding.decode(query)
    }
}

extension AuthorizationRequest: CustomStringConvertible {
    /// Names the endpoint and scopes; never the state, nonce or verifier.
    public var description: String {
        "AuthorizationRequest(redirect: \(redirectURI.absoluteString), scope: \(scopes.joined(separator: " ")))"
    }
}

/// A successful authorization response: the code to exchange.
public struct AuthorizationResponse: Sendable, CustomStringConvertible {
    /// The authorization code. Secret until exchanged: never print it.
    public let code: String
    /// The `iss` parameter, when the server sent one.
    public let issuer: String?

    /// Creates a response.
    public init(code: String, issuer: String?) {
        self.code = code
        self.issuer = issuer
    }

    public var description: String { "AuthorizationResponse(code: <redacted>)" }
}
