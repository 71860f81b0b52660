import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) public import NativeAuth

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Checks that a provider's `ErrorMapper` keeps the promises of the protocol, in one
/// line of a test, and maps the provider's own failures as documented:
///
/// ```swift
/// @Test func theMapperConforms() throws {
///     try ErrorMapperConformance(GitHubErrorMapper(), own: [
///         .init(.refresh, status: 200, form: "error=bad_refresh_token", expecting: .loginRequired),
///     ]).run()
/// }
/// ```
///
/// The mapper is judged as NativeAuth uses it: its answer, or the standard mapping where it
/// returns `nil`. What it checks, each failure named in the ``ConformanceFailure`` that ``run()``
/// throws:
/// - it never guesses: failures that are nobody's own (no answer: network, timeout, cancellation;
///   a 5xx, a 429, a proxy's HTML page) keep the standard mapping's code;
/// - a standard OAuth error keeps its meaning: `invalid_grant` at refresh still asks for a sign-in,
///   a 5xx and a 429 stay retryable, and the server's `error` code is kept unchanged in
///   `AuthError.oauthError` (also a code nobody knows);
/// - nothing from a body reaches the error's text: a token the server echoes in its
///   `error_description`, or any of the body, is in neither the message, the hint, the
///   description nor the reflection;
/// - every case of the provider's own (``Case``) maps to its code, and keeps its OAuth code.
public struct ErrorMapperConformance: Sendable {
    /// A failure of the provider's own and what it must become.
    public struct Case: Sendable {
        /// The failure.
        public var failure: AuthFailure
        /// The code it must map to.
        public var code: AuthError.Code
        /// The OAuth error code it must keep, if any.
        public var oauthError: String?

        /// A failure with a JSON body.
        ///
        /// - Parameters:
        ///   - operation: What NativeAuth was doing.
        ///   - status: The HTTP status.
        ///   - json: The body.
        ///   - code: The code it must map to.
        ///   - oauthError: The OAuth code the error must keep.
        public init(
            _ operation: AuthOperation,
            status: Int,
            json: String,
            expecting code: AuthError.Code,
            oauthError: String? = nil
        ) {
            self.init(operation, status: status, contentType: "application/json", body: json, code, oauthError)
        }

        /// A failure with a form-encoded body (GitHub answers errors so).
        ///
        /// - Parameters:
        ///   - operation: What NativeAuth was doing.
        ///   - status: The HTTP status.
        ///   - form: The body.
        ///   - code: The code it must map to.
        ///   - oauthError: The OAuth code the error must keep.
        public init(
            _ operation: AuthOperation,
            status: Int,
            form: String,
            expecting code: AuthError.Code,
            oauthError: String? = nil
        ) {
            self.init(
                operation, status: status, contentType: "application/x-www-form-urlencoded", body: form, code,
                oauthError)
        }

        /// A failure as NativeAuth hands it to mappers.
        ///
        /// - Parameters:
        ///   - failure: The failure.
        ///   - code: The code it must map to.
        ///   - oauthError: The OAuth code the error must keep.
        public init(_ failure: AuthFailure, expecting code: AuthError.Code, oauthError: String? = nil) {
            self.failure = failure
            self.code = code
            self.oauthError = oauthError
        }

        private init(
            _ operation: AuthOperation,
            status: Int,
            contentType: String,
            body: String,
            _ code: AuthError.Code,
            _ oauthError: String?
        ) {
            let response = HTTPResponse(
                status: HTTPResponse.Status(code: status), headerFields: [.contentType: contentType])
            var failure = AuthFailure(operation: operation, response: response, body: Data(body.utf8))
            if contentType.hasPrefix("application/x-www-form-urlencoded") {
                failure.oauthError = OAuthErrorResponse(form: FormURLEncoding.decode(body))
            }
            self.init(failure, expecting: code, oauthError: oauthError)
        }
    }

    private let mapper: any ErrorMapper
    private let own: [Case]

    /// Creates the suite.
    ///
    /// - Parameters:
    ///   - mapper: The mapper under test.
    ///   - own: The provider's own failures and what each must become.
    public init(_ mapper: any ErrorMapper, own: [Case] = []) {
        self.mapper = mapper
        self.own = own
    }

    /// The error NativeAuth reports for `failure`: the mapper's, else the standard one.
    private func mapped(_ failure: AuthFailure) -> AuthError {
        mapper.map(failure) ?? StandardErrorMapper().mapFailure(failure)
    }

    /// Runs every check.
    ///
    /// - Throws: ``ConformanceFailure`` listing every requirement the mapper failed.
    public func run() throws {
        let report = ConformanceReport("ErrorMapper \(type(of: mapper))")
        checkNobodysOwn(report)
        checkStandardMeanings(report)
        checkSecretsStayOut(report)
        for (index, ownCase) in own.enumerated() {
            let error = mapped(ownCase.failure)
            report.check(
                error.code == ownCase.code,
                "own case \(index + 1) (\(ownCase.failure)) must map to \(ownCase.code), not \(error.code)")
            if let oauthError = ownCase.oauthError {
                report.check(
                    error.oauthError == oauthError,
                    "own case \(index + 1) must keep the OAuth code \(oauthError), not \(error.oauthError ?? "none")")
            }
        }
        try report.finish()
    }

    private static func response(_ status: Int, _ contentType: String, _ headers: HTTPFields = [:]) -> HTTPResponse {
        var response = HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: headers)
        response.headerFields[.contentType] = contentType
        return response
    }

    private func checkNobodysOwn(_ report: ConformanceReport) {
        let html = Data("<html><body><h1>Proxy authentication required</h1></body></html>".utf8)
        let failures: [(String, AuthFailure)] = [
            ("a network failure", AuthFailure(operation: .refresh, underlying: URLError(.cannotConnectToHost))),
            ("a timeout", AuthFailure(operation: .tokenExchange, underlying: URLError(.timedOut))),
            ("a cancellation", AuthFailure(operation: .apiRequest, underlying: CancellationError())),
            (
                "an HTTP 503 page",
                AuthFailure(operation: .refresh, response: Self.response(503, "text/html"), body: html)
            ),
            (
                "an HTTP 429",
                AuthFailure(
                    operation: .refresh, response: Self.response(429, "application/json"), body: Data("{}".utf8))
            ),
            (
                "a proxy's HTML page with HTTP 200",
                AuthFailure(operation: .tokenExchange, response: Self.response(200, "text/html"), body: html)
            ),
        ]
        for (name, failure) in failures {
            let standard = StandardErrorMapper().mapFailure(failure)
            let error = mapped(failure)
            report.check(
                error.code == standard.code && error.isRetryable == standard.isRetryable,
                "\(name) is nobody's own: the mapper must leave it to the standard mapping (\(standard.code)),"
                    + " not make it \(error.code)")
        }
    }

    private func checkStandardMeanings(_ report: ConformanceReport) {
        func json(_ operation: AuthOperation, _ status: Int, _ body: String) -> AuthFailure {
            AuthFailure(
                operation: operation, response: Self.response(status, "application/json"), body: Data(body.utf8))
        }
        let expired = mapped(json(.refresh, 400, #"{"error": "invalid_grant"}"#))
        report.check(
            expired.isLoginRequired,
            "invalid_grant at refresh must still ask for a sign-in (login_required), not \(expired.code)")
        report.check(
            expired.oauthError == "invalid_grant", "the server's error code must be kept in oauthError (invalid_grant)")
        let unknown = mapped(json(.tokenExchange, 400, #"{"error": "nativeauth_conformance_unknown_code"}"#))
        report.check(
            unknown.oauthError == "nativeauth_conformance_unknown_code",
            "an error code nobody knows must be kept unchanged in oauthError, not \(unknown.oauthError ?? "none")")
        report.check(!unknown.isLoginRequired, "an unknown error code must not ask for a sign-in")
        for status in [500, 502, 503, 429] {
            let error = mapped(json(.refresh, status, #"{"error": "server_error"}"#))
            report.check(error.isRetryable, "an HTTP \(status) must stay retryable")
            report.check(!error.isLoginRequired, "an HTTP \(status) must not ask for a sign-in (the tokens are kept)")
        }
    }

    private func checkSecretsStayOut(_ report: ConformanceReport) {
        let secret = "gho_NativeAuthConformance7Zq4Xw9Lp2Rt8Vb6Nm3"
        let bodies = [
            #"{"error": "invalid_grant", "error_description": "refresh token \#(secret) is unknown"}"#,
            #"{"error": "server_error", "error_description": "\#(secret)"}"#,
            #"{"errors": [{"code": "TOKEN_\#(secret)", "detail": "\#(secret)"}]}"#,
            "error=bad_refresh_token&error_description=token+\(secret)",
        ]
        for (index, body) in bodies.enumerated() {
            for operation in [AuthOperation.refresh, .tokenExchange, .apiRequest] {
                let contentType = body.hasPrefix("{") ? "application/json" : "application/x-www-form-urlencoded"
                var failure = AuthFailure(
                    operation: operation, response: Self.response(400, contentType), body: Data(body.utf8))
                if !body.hasPrefix("{") {
                    failure.oauthError = OAuthErrorResponse(form: FormURLEncoding.decode(body))
                }
                let error = mapped(failure)
                var dumped = ""
                dump(error, to: &dumped)
                let texts = [error.message, error.hint ?? "", error.description, error.debugDescription, dumped]
                report.check(
                    !texts.contains { $0.contains(secret) },
                    "a token in a body must not reach the error's text (body \(index + 1), \(operation))")
            }
        }
    }
}
