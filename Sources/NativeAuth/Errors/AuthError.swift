/// The one error type NativeAuth throws: a stable ``Code``, what was going on, and what the server said.
///
/// `AuthError` is an "open enum": ``Code`` is a struct with string raw values, so new codes can be
/// added without breaking a caller's `switch`, and a code never changes once released. Two errors
/// are equal when their codes are equal.
///
/// ```swift
/// do {
///     let token = try await authenticator.accessToken()
/// } catch let error as AuthError where error.isLoginRequired {
///     print("run `mytool login`")
/// }
/// ```
///
/// > Important: An `AuthError`'s text (``message``, ``hint``, ``description``, `debugDescription`
/// > and its reflection) never contains a token or a secret. Text that comes from a server
/// > (`error_description`) is scrubbed of anything that looks like a token when the error is created, and
/// > the underlying error is never printed.
public struct AuthError: Error, Sendable {
    /// A stable, machine-readable error code such as `login_required` or `timeout`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string, for example `"token_exchange_failed"`.
        public let rawValue: String

        /// Creates a code; providers may define their own, but should prefer the standard ones.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A sentence for people saying what went wrong. Never contains a token.
    public var message: String
    /// What the person can do about it, when there is something to say. A setting it names is its
    /// key between backquotes, as in "check the \`client_auth\`": a caller shows it in its own
    /// words with ``hint(naming:)`` (a command-line tool as its flag), and never sees another
    /// tool's flags.
    public var hint: String?
    /// What NativeAuth was doing, when known.
    public var operation: AuthOperation?
    /// The configuration key at fault (`client_id`, `user_pool_id`), for errors about the
    /// configuration: a program can point at the setting instead of matching the message's text.
    public var field: String?
    /// The HTTP status of the response that caused the error, if there was one.
    public var status: Int?
    /// The OAuth `error` code the server sent (RFC 6749 §5.2, RFC 6750 §3.1), unchanged, such as
    /// `invalid_grant` or a provider's own `bad_refresh_token`.
    public var oauthError: String?
    /// The server's `error_description`, scrubbed of anything that looks like a token.
    public var oauthErrorDescription: String?
    /// The server's `error_uri`, without its query or fragment.
    public var oauthErrorURI: String?
    /// Whether trying the same operation later may succeed (network trouble, timeouts, 429, 5xx,
    /// a proxy's page instead of the server's answer). Tokens are kept on such errors.
    public var isRetryable: Bool
    /// The error underneath, for programs that inspect it. It is never part of the error's text.
    public var underlying: (any Error)?

    /// Creates an error. Text from outside (`message`, `hint`, OAuth fields) is scrubbed here.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A sentence for people; see ``message``.
    ///   - hint: What the person can do about it.
    ///   - operation: What NativeAuth was doing.
    ///   - field: The configuration key at fault, if the error is about one.
    ///   - status: The HTTP status of the response, if any.
    ///   - oauthError: The server's OAuth `error` code, unchanged.
    ///   - oauthErrorDescription: The server's `error_description`.
    ///   - oauthErrorURI: The server's `error_uri`; its query and fragment are dropped.
    ///   - isRetryable: Defaults to the code's usual retryability (``Code/isRetryableByDefault``).
    ///   - underlying: The error underneath; kept for programs, never printed.
    public init(
        _ code: Code,
        _ message: String,
        hint: String? = nil,
        operation: AuthOperation? = nil,
        field: String? = nil,
        status: Int? = nil,
        oauthError: String? = nil,
        oauthErrorDescription: String? = nil,
        oauthErrorURI: String? = nil,
        isRetryable: Bool? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = TerminalText.sanitized(Redaction.scrub(message))
        self.hint = hint.map { TerminalText.sanitized(Redaction.scrub($0)) }
        self.operation = operation
        self.field = field
        self.status = status
        self.oauthError = oauthError.map { TerminalText.sanitized(Redaction.scrub($0)) }
        self.oauthErrorDescription = oauthErrorDescription.map { TerminalText.sanitized(Redaction.scrub($0)) }
        self.oauthErrorURI = oauthErrorURI.map { TerminalText.sanitized(Redaction.scrubURL($0)) }
        self.isRetryable = isRetryable ?? code.isRetryableByDefault
        self.underlying = underlying
    }

    /// Whether the person must sign in again: no refresh can help (``Code/loginRequired``).
    public var isLoginRequired: Bool { code == .loginRequired }

    /// Whether the operation was cancelled: ``Code/loginCancelled`` (a sign-in, or the wait for the
    /// person at the end of a session) or ``Code/cancelled`` (any other operation, such as a
    /// request or a refresh).
    public var isCancellation: Bool { code == .loginCancelled || code == .cancelled }

    /// The error for a configuration key that is missing: ``Code/configurationInvalid`` with
    /// ``field`` set, so a command-line tool can say where the key is set.
    ///
    /// - Parameter setting: The key.
    public static func missing(_ setting: ProviderSetting) -> AuthError {
        AuthError(
            .configurationInvalid,
            "the field \"\(setting.key)\" is missing",
            hint: "set \"\(setting.key)\" in the configuration: \(setting.help.asClause)",
            field: setting.key
        )
    }

    /// The error for a configuration key whose value is wrong: ``Code/configurationInvalid`` with
    /// ``field`` set.
    ///
    /// - Parameters:
    ///   - setting: The key.
    ///   - problem: What is wrong, to follow `the field "KEY"`: `is not a URL`.
    ///   - hint: What to do about it, when there is more to say than the key's help.
    public static func invalid(_ setting: ProviderSetting, _ problem: String, hint: String? = nil) -> AuthError {
        AuthError(.configurationInvalid, "the field \"\(setting.key)\" \(problem)", hint: hint, field: setting.key)
    }

    /// ``missing(_:)-(ProviderSetting)`` for a typed setting.
    public static func missing<Value>(_ setting: Setting<Value>) -> AuthError { missing(setting.declaration) }

    /// ``invalid(_:_:hint:)-(ProviderSetting,_,_)`` for a typed setting.
    public static func invalid<Value>(_ setting: Setting<Value>, _ problem: String, hint: String? = nil) -> AuthError {
        invalid(setting.declaration, problem, hint: hint)
    }
}

extension AuthError {
    /// The ``hint`` with each setting it names (a key between backquotes, \`client_auth\`) in the
    /// caller's words: a command-line tool's flag (`--client-auth`), an app's label. A name `name`
    /// has no words for (`nil`) stays as it is, backquotes and all.
    ///
    /// - Parameter name: The caller's words for a setting's key, or `nil`.
    public func hint(naming name: (String) -> String?) -> String? {
        guard let hint else { return nil }
        var result = ""
        var rest = Substring(hint)
        while let open = rest.firstIndex(of: "`") {
            let after = rest.index(after: open)
            guard let close = rest[after...].firstIndex(of: "`") else { break }
            let key = rest[after..<close]
            result += rest[..<open]
            if !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), let words = name(String(key))
            {
                result += words
            } else {
                result += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}

extension AuthError: Equatable {
    /// Errors are equal when everything they say is equal: code, texts, operation, field, status,
    /// the OAuth fields and retryability. The ``underlying`` error is not compared (it need not be
    /// `Equatable`). To act on what went wrong, compare the ``code``:
    /// `catch let error as AuthError where error.code == .loginRequired`.
    public static func == (lhs: AuthError, rhs: AuthError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.hint == rhs.hint
            && lhs.operation == rhs.operation && lhs.field == rhs.field && lhs.status == rhs.status
            && lhs.oauthError == rhs.oauthError && lhs.oauthErrorDescription == rhs.oauthErrorDescription
            && lhs.oauthErrorURI == rhs.oauthErrorURI && lhs.isRetryable == rhs.isRetryable
    }
}

extension AuthError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `code: message (details)`, for example
    /// `refresh_failed: the token endpoint refused the refresh token (HTTP 400, invalid_grant)`.
    public var description: String {
        var details: [String] = []
        if let status { details.append("HTTP \(status)") }
        if let oauthError {
            if let oauthErrorDescription, !oauthErrorDescription.isEmpty {
                details.append("\(oauthError): \(oauthErrorDescription)")
            } else {
                details.append(oauthError)
            }
        }
        let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        return "\(code.rawValue): \(message)\(suffix)"
    }

    public var debugDescription: String {
        var text = "AuthError(\(description)"
        if let operation { text += ", operation: \(operation.rawValue)" }
        if let field { text += ", field: \(field)" }
        if isRetryable { text += ", retryable" }
        if let underlying { text += ", underlying: \(type(of: underlying))" }
        return text + ")"
    }

    /// Reflection (`dump`, debuggers) shows the same safe fields as the description, and only the
    /// type of the underlying error.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "code": code.rawValue,
                "message": message,
                "hint": hint as Any,
                "operation": operation?.rawValue as Any,
                "field": field as Any,
                "status": status as Any,
                "oauthError": oauthError as Any,
                "oauthErrorDescription": oauthErrorDescription as Any,
                "oauthErrorURI": oauthErrorURI as Any,
                "isRetryable": isRetryable,
                "underlyingType": underlying.map { String(describing: type(of: $0)) } as Any,
            ],
            displayStyle: .struct
        )
    }
}

extension String {
    /// A sentence as a clause that continues another: first letter in lowercase, no final period.
    fileprivate var asClause: String {
        guard let first else { return self }
        let text = first.lowercased() + dropFirst()
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}

extension AuthError {
    /// The error with every occurrence of `secrets` removed from its texts (the values a request
    /// sent, which a server may echo). Values under 8 characters are left to the shape-based
    /// scrubbing: replacing them everywhere would take words apart.
    package func scrubbing(_ secrets: [String]) -> AuthError {
        let secrets = secrets.filter { $0.count >= 8 }
        guard !secrets.isEmpty else { return self }
        var scrubbed = self
        scrubbed.message = Redaction.scrub(message, secrets: secrets)
        scrubbed.hint = hint.map { Redaction.scrub($0, secrets: secrets) }
        scrubbed.oauthError = oauthError.map { Redaction.scrub($0, secrets: secrets) }
        scrubbed.oauthErrorDescription = oauthErrorDescription.map { Redaction.scrub($0, secrets: secrets) }
        return scrubbed
    }
}
