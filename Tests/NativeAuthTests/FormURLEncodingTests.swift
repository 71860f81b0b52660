@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct FormURLEncodingTests {
    @Test func rfc6749AppendixBExample() {
        // RFC 6749 Appendix B: the value " %&+£€" is encoded as "+%25%26%2B%C2%A3%E2%82%AC".
        #expect(FormURLEncoding.encode(component: " %&+£€") == "+%25%26%2B%C2%A3%E2%82%AC")
        #expect(FormURLEncoding.decode(component: Array("+%25%26%2B%C2%A3%E2%82%AC".utf8)) == " %&+£€")
        #expect(
            FormURLEncoding.encode([FormField("client_id", " %&+£€")]) == "client_id=+%25%26%2B%C2%A3%E2%82%AC"
        )
    }

    @Test func rfc6749TokenRequestExampleDecodes() {
        // RFC 6749 §4.1.3, with its percent-encoded dots.
        let body =
            "grant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA&redirect_uri=https%3A%2F%2Fclient%2Eexample%2Ecom%2Fcb"
        #expect(
            FormURLEncoding.decode(body) == [
                FormField("grant_type", "authorization_code"),
                FormField("code", "SplxlOBeZQQYbYS6WxSbIA"),
                FormField("redirect_uri", "https://client.example.com/cb"),
            ]
        )
    }

    @Test(arguments: [
        "", "plain", "with space", "a+b=c&d", "100%", "ünïcödé", "日本語", "emoji 👩🏽‍💻🔐", "line\nbreak\ttab",
        "\u{0}nul", "https://example.com/cb?x=1&y=2#frag", "*-._~!$'()", "\"quoted\"",
    ])
    func anyValueRoundTrips(value: String) {
        let fields = [FormField("name \(value)", value), FormField("second", value + value)]
        #expect(FormURLEncoding.decode(FormURLEncoding.encode(fields)) == fields)
    }

    @Test func plusAndPercent20BothDecodeToASpace() {
        #expect(FormURLEncoding.decode("a=one+two%20three") == [FormField("a", "one two three")])
    }

    @Test func encodingUsesOnlySafeCharacters() {
        let encoded = FormURLEncoding.encode(component: "a b&c=d+e/f?g#h%i\u{7F}é")
        #expect(encoded == "a+b%26c%3Dd%2Be%2Ff%3Fg%23h%25i%7F%C3%A9")
    }

    @Test func malformedInputDecodesWithoutFailing() {
        #expect(
            FormURLEncoding.decode("a=%zz&b=%4&c=%") == [
                FormField("a", "%zz"), FormField("b", "%4"), FormField("c", "%"),
            ])
        #expect(FormURLEncoding.decode("a=%FF") == [FormField("a", "\u{FFFD}")])
        #expect(FormURLEncoding.decode("&&flag&x=1&") == [FormField("flag", ""), FormField("x", "1")])
        #expect(FormURLEncoding.decode("k==v") == [FormField("k", "=v")])
    }

    @Test func githubStyleTokenResponse() {
        let fields = FormURLEncoding.decode(
            "access_token=gho_abc&expires_in=28800&refresh_token=ghr_def&scope=repo%2Cgist&token_type=bearer"
        )
        #expect(fields.first(named: "scope") == "repo,gist")
        #expect(fields.first(named: "expires_in") == "28800")
        #expect(fields.first(named: "missing") == nil)
        #expect(OAuthErrorResponse(form: fields) == nil)
        let error = OAuthErrorResponse(
            form: FormURLEncoding.decode("error=bad_verification_code&error_description=The+code+passed+is+incorrect")
        )
        #expect(
            error
                == OAuthErrorResponse(error: "bad_verification_code", errorDescription: "The code passed is incorrect"))
    }
}
