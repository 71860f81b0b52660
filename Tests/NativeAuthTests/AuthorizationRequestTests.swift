import Foundation
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct AuthorizationRequestTests {
    private let issuer = "https://idp.example.com"

    private func metadata(issRequired: Bool = false, endpoint: String = "https://idp.example.com/authorize") throws
        -> ProviderMetadata
    {
        ProviderMetadata(
            issuer: issuer,
            authorizationEndpoint: try #require(URL(string: endpoint)),
            tokenEndpoint: try #require(URL(string: "https://idp.example.com/token")),
            authorizationResponseIssParameterSupported: issRequired
        )
    }

    private let redirect = URL(string: "http://127.0.0.1:49152/callback")

    private func query(_ url: URL) -> [String: [String]] {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return FormURLEncoding.decode(query).reduce(into: [:]) { $0[$1.name, default: []].append($1.value) }
    }

    @Test func pkceMatchesRFC7636AppendixB() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test func freshVerifiersAreLongRandomAndUnreserved() {
        let verifiers = (0..<50).map { _ in PKCE().verifier }
        #expect(Set(verifiers).count == 50)
        for verifier in verifiers {
            #expect(verifier.count == 43)
            #expect(verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        }
        #expect(throws: AuthError.self) { try PKCE(verifier: "short") }
        #expect(throws: AuthError.self) { try PKCE(verifier: String(repeating: "a", count: 129)) }
        #expect(throws: AuthError.self) { try PKCE(verifier: String(repeating: "a", count: 42) + "!") }
    }

    @Test func theRequestCarriesEveryParameter() throws {
        let redirect = try #require(redirect)
        let request = AuthorizationRequest(
            metadata: try metadata(),
            clientID: "my client",
            redirectURI: redirect,
            scopes: ["openid", "email"],
            extraParameters: [
                FormField("access_type", "offline"), FormField("state", "attacker"), FormField("prompt", "consent"),
            ]
        )
        let fields = query(request.url)
        #expect(request.url.absoluteString.hasPrefix("https://idp.example.com/authorize?"))
        #expect(fields["response_type"] == ["code"])
        #expect(fields["client_id"] == ["my client"])
        #expect(fields["redirect_uri"] == [redirect.absoluteString])
        #expect(fields["scope"] == ["openid email"])
        #expect(fields["state"] == [request.state])
        #expect(fields["code_challenge"] == [request.pkce.challenge])
        #expect(fields["code_challenge_method"] == ["S256"])
        #expect(fields["nonce"] == [try #require(request.nonce)])
        #expect(fields["access_type"] == ["offline"])
        #expect(fields["prompt"] == ["consent"])
        #expect(request.state.count == 43)
        #expect(!request.description.contains(request.state))
    }

    @Test func noNonceWithoutOpenIDAndAnExistingQueryIsKept() throws {
        let request = AuthorizationRequest(
            metadata: try metadata(endpoint: "https://idp.example.com/authorize?tenant=main"),
            clientID: "c",
            redirectURI: try #require(redirect),
            scopes: ["repo"]
        )
        #expect(request.nonce == nil)
        let fields = query(request.url)
        #expect(fields["nonce"] == nil)
        #expect(fields["tenant"] == ["main"])
    }

    private func request(issRequired: Bool = false) throws -> AuthorizationRequest {
        AuthorizationRequest(
            metadata: try metadata(issRequired: issRequired),
            clientID: "c",
            redirectURI: try #require(redirect),
            scopes: ["openid"]
        )
    }

    private func callback(_ query: String) throws -> URL {
        try #require(URL(string: "http://127.0.0.1:49152/callback?" + query))
    }

    @Test func aGoodCallbackGivesItsCode() throws {
        let request = try request(issRequired: true)
        let iss = FormURLEncoding.encode(component: issuer)
        let response = try request.validate(callback: callback("code=abc&state=\(request.state)&iss=\(iss)"))
        #expect(response.code == "abc")
        #expect(response.issuer == issuer)
        #expect(!response.description.contains("abc"))
    }

    @Test func aWrongOrMissingStateIsNotOurs() throws {
        let request = try request()
        for query in [
            "code=abc&state=wrong", "code=abc", "code=abc&state=\(request.state)x",
            "code=abc&state=\(request.state)&state=\(request.state)",
        ] {
            let url = try callback(query)
            #expect(!request.isResponse(url))
            let error = #expect(throws: AuthError.self) { try request.validate(callback: url) }
            #expect(error?.code == .invalidState)
        }
        let otherPath = try #require(URL(string: "http://127.0.0.1:49152/other?code=abc&state=\(request.state)"))
        #expect(!request.isResponse(otherPath))
    }

    @Test func anErrorCallbackCarriesTheOAuthCode() throws {
        let request = try request()
        let error = #expect(throws: AuthError.self) {
            try request.validate(
                callback: callback("error=access_denied&error_description=The+user+said+no&state=\(request.state)")
            )
        }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
        #expect(error?.oauthErrorDescription == "The user said no")
    }

    @Test func aWrongIssuerIsRefused() throws {
        let request = try request()
        let error = #expect(throws: AuthError.self) {
            try request.validate(callback: callback("code=abc&state=\(request.state)&iss=https%3A%2F%2Fevil.example"))
        }
        #expect(error?.code == .invalidState)
        #expect(error?.message.contains("evil.example") == true)
    }

    @Test func aMissingIssuerIsRefusedWhenPromised() throws {
        let promised = try request(issRequired: true)
        let missing = #expect(throws: AuthError.self) {
            try promised.validate(callback: callback("code=abc&state=\(promised.state)"))
        }
        #expect(missing?.code == .invalidState)
        // An error response without iss is still the server's refusal (no code can be stolen from it).
        let denied = #expect(throws: AuthError.self) {
            try promised.validate(callback: callback("error=access_denied&state=\(promised.state)"))
        }
        #expect(denied?.code == .authorizationFailed)
        let notPromised = try request(issRequired: false)
        #expect(try notPromised.validate(callback: callback("code=abc&state=\(notPromised.state)")).code == "abc")
    }

    @Test func aCallbackWithoutCodeFails() throws {
        let request = try request()
        let noCode = #expect(throws: AuthError.self) {
            try request.validate(callback: callback("state=\(request.state)"))
        }
        #expect(noCode?.code == .authorizationFailed)
        let twoCodes = #expect(throws: AuthError.self) {
            try request.validate(callback: callback("code=a&code=b&state=\(request.state)"))
        }
        #expect(twoCodes?.code == .authorizationFailed)
    }
}
