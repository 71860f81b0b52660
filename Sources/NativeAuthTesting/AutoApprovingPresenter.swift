import Foundation
@_spi(Provider) public import NativeAuth

/// A presenter that plays a person who approves at once, without a browser and without a listener:
/// it reads the authorization URL and hands NativeAuth a redirect carrying a code, the request's
/// `state` and, when given, `iss`.
///
/// The code is made by your closure from the authorization request's parameters, so a test can
/// check them (`code_challenge`, `scope`, a provider's own parameters) and a stand-in server can
/// tie the code to them (PKCE, the nonce). The authorization endpoint itself is never called; use a
/// `LoopbackPresenter` with a ``RedirectFollowingBrowser`` to run that part too. The redirect URI is
/// `http://127.0.0.1:9/callback`.
///
/// ```swift
/// let presenter = AutoApprovingPresenter { parameters in
///     #expect(parameters.first(named: "prompt") == "consent")
///     return "code-1"
/// }
/// try await authenticator.login(.browser(presenter))
/// ```
public struct AutoApprovingPresenter: UserAgentPresenter {
    let issuer: String?
    let code: @Sendable ([FormField]) -> String

    /// Creates a presenter.
    ///
    /// - Parameters:
    ///   - issuer: The `iss` to put in the redirect, if any.
    ///   - code: Makes the code from the authorization request's query parameters.
    public init(issuer: String? = nil, code: @escaping @Sendable ([FormField]) -> String) {
        self.issuer = issuer
        self.code = code
    }

    /// Starts a session; it never fails.
    ///
    /// - Returns: A session that approves its one authorization request.
    public func beginSession() async throws -> any UserAgentSession { Session(issuer: issuer, code: code) }

    struct Session: UserAgentSession {
        let issuer: String?
        let code: @Sendable ([FormField]) -> String
        var redirectURI: URL { URL(string: "http://127.0.0.1:9/callback") ?? URL(fileURLWithPath: "/") }

        func authorize<Outcome: Sendable>(
            _ authorizationURL: URL,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
        ) async throws -> Outcome {
            let query = URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
            let fields = FormURLEncoding.decode(query)
            var answer = [FormField("code", code(fields)), FormField("state", fields.first(named: "state") ?? "")]
            if let issuer { answer.append(FormField("iss", issuer)) }
            guard let url = URL(string: redirectURI.absoluteString + "?" + FormURLEncoding.encode(answer)),
                case .complete(let result) = handler(.redirect(url))
            else {
                throw AuthError(.invalidState, "the callback was not accepted")
            }
            return try result.get()
        }

        func close() async {}
    }
}
