import Foundation
import NativeAuth

/// The pages a person sees: static markup, every reflected value escaped.
extension SandboxCore {
    func html(_ text: String) -> String { HTML.escaped(text) }

    func page(status: Int = 200, title: String, body: String) -> TestResponse {
        let text = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(html(title)) · NativeAuth sandbox</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>
            body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
            .note { color: #666; font-size: 0.9rem; } button { font-size: 1rem; padding: 0.5rem 1.2rem; margin-right: 0.5rem; }
            code { background: #f3f3f3; padding: 0 0.2rem; }
            </style></head>
            <body><h1>\(html(title))</h1>
            \(body)
            <p class="note">NativeAuth sandbox: a local test server. Nothing here is real.</p>
            </body></html>
            """
        return TestResponse(
            status: status,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"),
                ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
            ],
            body: Data(text.utf8)
        )
    }

    func userChoice() -> String {
        let users = configuration.users
        if users.count == 1 {
            return "<input type=\"hidden\" name=\"user\" value=\"\(html(users[0].username))\">"
                + "<p>Signed in as <strong>\(html(users[0].username))</strong>.</p>"
        }
        let options = users.map { "<option value=\"\(html($0.username))\">\(html($0.username))</option>" }
        return "<p><label>Sign in as <select name=\"user\">\(options.joined())</select></label></p>"
    }

    func approvalPage(_ request: PendingRequest, transaction: String) -> TestResponse {
        let scopes = request.scopes.map { "<code>\(html($0))</code>" }.joined(separator: " ")
        return page(
            title: "Sign in to the sandbox",
            body: """
                <p><strong>\(html(request.clientID))</strong> asks for access: \(scopes).</p>
                <form method="post" action="\(dialect.path(.authorization))">
                <input type="hidden" name="transaction" value="\(html(transaction))">
                \(userChoice())
                <button type="submit" name="decision" value="approve">Approve</button>
                <button type="submit" name="decision" value="deny">Deny</button>
                </form>
                """
        )
    }

    func devicePage(_ request: TestRequest) -> TestResponse {
        devicePage(request, userCode: request.query.first(named: "user_code") ?? "", problem: nil)
    }

    func devicePage(_ request: TestRequest, userCode: String, problem: String?) -> TestResponse {
        let notice = problem.map { "<p><strong>\(html($0))</strong></p>" } ?? ""
        return page(
            status: problem == nil ? 200 : 400,
            title: "Connect a device",
            body: """
                \(notice)
                <form method="post" action="\(dialect.path(.deviceVerification))">
                <p><label>Code shown on the device <input name="user_code" value="\(html(userCode))" autocomplete="off"></label></p>
                \(userChoice())
                <button type="submit" name="decision" value="approve">Approve</button>
                <button type="submit" name="decision" value="deny">Deny</button>
                </form>
                """
        )
    }
}
