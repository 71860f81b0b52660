internal import NativeAuth

/// The static pages the loopback receiver answers the browser with. They reflect nothing from the
/// request: no parameter, path or header ever appears in them.
enum CallbackPage {
    case success
    case failure
    case notThisSignIn
    case notFound
    case methodNotAllowed
    case anotherUser
    case startOpenedTwice
    case copyThisAddress

    var status: Int {
        switch self {
        case .success, .failure, .copyThisAddress: 200
        case .notThisSignIn, .startOpenedTwice: 400
        case .anotherUser: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        }
    }

    var html: String {
        let (title, text) =
            switch self {
            case .success:
                ("Signed in", "You are signed in. You can close this tab and return to the terminal.")
            case .failure:
                ("Sign-in failed", "Sign-in did not complete. Return to the terminal to see why.")
            case .notThisSignIn:
                ("Not this sign-in", "This page does not belong to the sign-in in progress. Nothing was done.")
            case .notFound:
                ("Not found", "There is nothing here.")
            case .methodNotAllowed:
                ("Not allowed", "Only GET requests are answered here.")
            case .anotherUser:
                ("Not yours", "This sign-in belongs to another user of this computer. Nothing was done.")
            case .copyThisAddress:
                (
                    "Copy this address",
                    "Copy the whole address of this page from the address bar, paste it into the terminal"
                        + " and press Enter."
                )
            case .startOpenedTwice:
                (
                    "Sign-in stopped",
                    "This one-time address was opened twice, so another program may have read it."
                        + " The sign-in was stopped: return to the terminal and sign in again."
                )
            }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>\(title)</title>
            <style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}</style>
            </head><body><h1>\(title)</h1><p>\(text)</p></body></html>

            """
    }

    /// Header fields that keep the page out of caches and referrers and stop it from loading anything.
    static let headers: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Cache-Control", "no-store"),
        ("Pragma", "no-cache"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
        ("Connection", "close"),
    ]
}
