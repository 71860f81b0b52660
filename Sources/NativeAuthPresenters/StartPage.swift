internal import Crypto
package import Foundation
@_spi(Provider) internal import NativeAuth

/// What the loopback receiver answers a request with: a status, header fields and a body.
package struct LoopbackAnswer: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: String

    init(_ page: CallbackPage) {
        self.init(status: page.status, headers: CallbackPage.headers, body: page.html)
    }

    init(status: Int, headers: [(String, String)], body: String) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// The one-time start address of a browser launch.
///
/// A URL handed to a browser is in the browser's command line, which every local user can read in
/// `/proc/PID/cmdline`: an authorization URL there gives away `state`, `nonce`, the PKCE challenge
/// and the port, and an end-session URL the ID token. So the browser gets
/// `http://127.0.0.1:PORT/start/RANDOM` instead, and the receiver answers its first fetch with the
/// real page: a redirect to the authorization URL, or, for a URL that carries an ID token
/// (`id_token_hint`), a form that posts its parameters (OpenID Connect RP-Initiated Logout 1.0 §2
/// allows POST), so that the token is in neither a command line nor the browser's history.
///
/// The address works once: a second fetch means someone else fetched it first, and the sign-in
/// ends with an error the person sees.
package struct StartPage: Sendable {
    /// The start address's path, `/start/` and 32 random bytes.
    let path: String
    /// The page the browser is sent on to.
    let target: URL
    /// Whether a target that carries an ID token is posted as a form (else redirected to).
    let postsSecrets: Bool

    package init(target: URL, postsSecrets: Bool = true) {
        self.path = "/start/" + SecureRandom.token()
        self.target = target
        self.postsSecrets = postsSecrets
    }

    /// The answer to the first fetch.
    package var answer: LoopbackAnswer {
        let query = AuthorizationRequest.query(of: target)
        guard postsSecrets, query.contains(where: { ConsoleOutput.tokenBearingParameters.contains($0.name) }),
            var components = URLComponents(url: target, resolvingAgainstBaseURL: false)
        else {
            return LoopbackAnswer(
                status: 302,
                headers: Self.common + [("Location", target.absoluteString), ("Content-Type", "text/plain")],
                body: ""
            )
        }
        components.query = nil
        components.fragment = nil
        let action = components.string ?? ""
        let inputs = query.map {
            #"<input type="hidden" name="\#(HTML.escaped($0.name))" value="\#(HTML.escaped($0.value))">"#
        }
        let body = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Signing out</title>
            <style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}</style>
            </head><body><form method="post" action="\(HTML.escaped(action))">\(inputs.joined())
            <noscript><p>Continue to your provider to sign out.</p><button type="submit">Continue</button></noscript>
            </form><script>\(Self.script)</script></body></html>

            """
        return LoopbackAnswer(
            status: 200,
            headers: Self.common + [
                ("Content-Type", "text/html; charset=utf-8"),
                (
                    "Content-Security-Policy",
                    "default-src 'none'; style-src 'unsafe-inline'; script-src '\(Self.scriptHash)'"
                ),
            ],
            body: body
        )
    }

    /// The whole script of the form page: it submits the form.
    static let script = "document.forms[0].submit()"
    /// The script's CSP hash source, so that no other script can run on the page.
    static let scriptHash = "sha256-" + Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()

    /// The loopback pages' header fields, but for the content's type and policy, which differ.
    private static let common = CallbackPage.headers.filter {
        $0.0 != "Content-Type" && $0.0 != "Content-Security-Policy"
    }
}
