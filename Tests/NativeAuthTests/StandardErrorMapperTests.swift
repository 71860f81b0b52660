import Foundation
import HTTPTypes
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct StandardErrorMapperTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var operation: AuthOperation
        var status: Int?
        var headers: [(String, String)] = []
        var body: String?
        var underlying: (any Error)?
        var code: AuthError.Code
        var retryable: Bool
        var oauthError: String?

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "invalid_grant while refreshing → login_required", operation: .refresh, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_grant"}"#,
            code: .loginRequired, retryable: false, oauthError: "invalid_grant"),
        Case(
            name: "invalid_grant on code exchange", operation: .tokenExchange, status: 400,
            headers: [("Content-Type", "application/json")],
            body: #"{"error":"invalid_grant","error_description":"Invalid code"}"#,
            code: .tokenExchangeFailed, retryable: false, oauthError: "invalid_grant"),
        Case(
            name: "invalid_client → configuration_invalid", operation: .tokenExchange, status: 401,
            headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_client"}"#,
            code: .configurationInvalid, retryable: false, oauthError: "invalid_client"),
        Case(
            name: "unauthorized_client → configuration_invalid", operation: .refresh, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"unauthorized_client"}"#,
            code: .configurationInvalid, retryable: false, oauthError: "unauthorized_client"),
        Case(
            name: "invalid_request on refresh → login_required", operation: .refresh, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_request"}"#,
            code: .loginRequired, retryable: false, oauthError: "invalid_request"),
        Case(
            name: "invalid_scope keeps the operation's code", operation: .tokenExchange, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_scope"}"#,
            code: .tokenExchangeFailed, retryable: false, oauthError: "invalid_scope"),
        Case(
            name: "unknown provider code at refresh ends the sign-in, and passes through", operation: .refresh,
            status: 400, headers: [("Content-Type", "application/json")], body: #"{"error":"acme_quota_exceeded"}"#,
            code: .loginRequired, retryable: false, oauthError: "acme_quota_exceeded"),
        Case(
            name: "access_denied → authorization_failed", operation: .deviceAuthorization, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"access_denied"}"#,
            code: .authorizationFailed, retryable: false, oauthError: "access_denied"),
        Case(
            name: "temporarily_unavailable → retryable", operation: .tokenExchange, status: 400,
            headers: [("Content-Type", "application/json")], body: #"{"error":"temporarily_unavailable"}"#,
            code: .serverError, retryable: true, oauthError: "temporarily_unavailable"),
        Case(
            name: "Bearer invalid_token header", operation: .apiRequest, status: 401,
            headers: [("WWW-Authenticate", #"Bearer realm="api", error="invalid_token", error_description="expired""#)],
            code: .invalidToken, retryable: false, oauthError: "invalid_token"),
        Case(
            name: "Bearer insufficient_scope header", operation: .apiRequest, status: 403,
            headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="repo read:org""#)],
            code: .insufficientScope, retryable: false, oauthError: "insufficient_scope"),
        Case(
            name: "bare 401 from userinfo → invalid_token", operation: .userInfo, status: 401,
            headers: [("WWW-Authenticate", #"Bearer realm="oidc""#)],
            code: .invalidToken, retryable: false),
        Case(
            name: "429 → rate_limited", operation: .apiRequest, status: 429,
            headers: [("Retry-After", "30")], code: .rateLimited, retryable: true),
        Case(
            name: "500 → server_error", operation: .refresh, status: 500, code: .serverError, retryable: true),
        Case(
            name: "502 HTML from a proxy → server_error", operation: .refresh, status: 502,
            headers: [("Content-Type", "text/html")], body: "<html><h1>Bad Gateway</h1></html>",
            code: .serverError, retryable: true),
        Case(
            name: "503 with OAuth error keeps the code", operation: .refresh, status: 503,
            headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_grant"}"#,
            code: .serverError, retryable: true, oauthError: "invalid_grant"),
        Case(
            name: "HTML page with 200 → response_malformed", operation: .discovery, status: 200,
            headers: [("Content-Type", "text/html")], body: "<html>Sign in to the Wi-Fi</html>",
            code: .responseMalformed, retryable: true),
        Case(
            name: "HTML error page with 400 → response_malformed", operation: .refresh, status: 400,
            headers: [("Content-Type", "text/html")], body: "<html>Bad Request</html>",
            code: .responseMalformed, retryable: true),
        Case(
            name: "JSON parse error → response_malformed", operation: .tokenExchange, status: 200,
            headers: [("Content-Type", "application/json")], body: #"{"access_token": "#,
            underlying: Self.parseError(#"{"access_token": "#), code: .responseMalformed, retryable: true),
        Case(
            name: "missing field → response_malformed", operation: .tokenExchange, status: 200,
            underlying: JSONFieldError(key: "access_token", problem: .missing), code: .responseMalformed,
            retryable: true),
        Case(
            name: "404 without body → operation's code", operation: .discovery, status: 404,
            code: .metadataUnavailable, retryable: false),
        Case(
            name: "URLError timeout", operation: .refresh, underlying: URLError(.timedOut), code: .timeout,
            retryable: true),
        Case(
            name: "URLError cannot connect", operation: .refresh, underlying: URLError(.cannotConnectToHost),
            code: .network, retryable: true),
        Case(
            name: "cancellation", operation: .tokenExchange, underlying: CancellationError(), code: .cancelled,
            retryable: false),
        Case(
            name: "transport AuthError passes through", operation: .refresh,
            underlying: AuthError(.responseTooLarge, "too big"), code: .responseTooLarge, retryable: false),
    ]

    static func parseError(_ text: String) -> JSONParseError? {
        do {
            _ = try JSONValue.parse(text)
            return nil
        } catch {
            return error
        }
    }

    static func failure(for test: Case) -> AuthFailure {
        let response = test.status.map { status in
            var fields = HTTPFields()
            for (name, value) in test.headers {
                if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
            }
            return HTTPResponse(status: .init(code: status), headerFields: fields)
        }
        return AuthFailure(
            operation: test.operation,
            response: response,
            body: test.body.map { Data($0.utf8) },
            underlying: test.underlying
        )
    }

    @Test(arguments: cases)
    func mapsFailure(_ test: Case) {
        let error = StandardErrorMapper().mapFailure(Self.failure(for: test))
        #expect(error.code == test.code)
        #expect(error.isRetryable == test.retryable)
        #expect(error.oauthError == test.oauthError)
        #expect(error.operation == test.operation)
        if let status = test.status { #expect(error.status == status) }
        #expect(!error.message.isEmpty)
    }

    @Test func loginRequiredSaysSoAndHints() {
        let error = StandardErrorMapper().mapFailure(Self.failure(for: Self.cases[0]))
        #expect(error.isLoginRequired)
        #expect(error.hint != nil)
        #expect(!StandardErrorMapper().mapFailure(Self.failure(for: Self.cases[1])).isLoginRequired)
    }

    @Test func insufficientScopeNamesTheNeededScopes() {
        let error = StandardErrorMapper().mapFailure(Self.failure(for: Self.cases[10]))
        #expect(error.message.contains("repo read:org"))
    }

    @Test func aProviderMapperIsAskedFirstAndFallsBack() throws {
        struct AcmeMapper: ErrorMapper {
            func map(_ failure: AuthFailure) -> AuthError? {
                guard failure.oauthError?.error == "acme_quota_exceeded" else { return nil }
                return AuthError(
                    .rateLimited, "Acme quota exceeded", oauthError: "acme_quota_exceeded", isRetryable: true)
            }
        }
        struct AcmeProvider: AuthProvider {
            static let id = "acme"
            let configuration: ProviderConfiguration
            var errorMapper: any ErrorMapper { AcmeMapper() }
        }
        // The one place NativeAuth maps errors: the exchange client, with the provider's mapper.
        let client = ExchangeClient.forTests(AcmeProvider(configuration: ProviderConfiguration(clientID: "c")))
        let acme = StandardErrorMapperTests.cases.first { $0.oauthError == "acme_quota_exceeded" }
        let grant = StandardErrorMapperTests.cases[0]
        let acmeCase = try #require(acme)
        #expect(client.error(for: Self.failure(for: acmeCase)).code == .rateLimited)
        #expect(client.error(for: Self.failure(for: grant)).code == .loginRequired)
    }

    @Test func errorsAreEqualWhenEverythingTheySayIsEqual() {
        #expect(AuthError(.timeout, "a", status: 1) == AuthError(.timeout, "a", status: 1))
        #expect(AuthError(.timeout, "a") != AuthError(.timeout, "b"), "another message")
        #expect(AuthError(.timeout, "a") != AuthError(.timeout, "a", status: 1), "another status")
        #expect(AuthError(.timeout, "a") != AuthError(.network, "a"))
        #expect(AuthError(.timeout, "a", underlying: URLError(.timedOut)) == AuthError(.timeout, "a"))
        #expect(AuthError.Code(rawValue: "login_required") == .loginRequired)
    }
}
