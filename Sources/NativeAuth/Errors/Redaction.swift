/// Keeps secrets out of text that NativeAuth shows or logs.
///
/// Servers sometimes echo what they were sent (`"invalid refresh token gho_…"`). ``scrub(_:)``
/// replaces every run of 20 or more token characters (letters, digits, `-_~+`) that mixes at
/// least two of lowercase, uppercase and digits with `[redacted]`: access tokens, refresh tokens,
/// codes, JWT segments and client secrets all look like that, while words, error codes and
/// lowercase URL paths do not. A run that starts right after `/` is a path component (a file
/// name, a directory) and is kept, so messages can name files; tokens never travel in paths here.
@_spi(Provider) public enum Redaction {
    /// The text that replaces a secret.
    public static let placeholder = "[redacted]"

    /// The shortest run of token characters that is treated as a secret.
    public static let minimumSecretLength = 20

    /// Replaces anything in `text` that looks like a token with ``placeholder``.
    public static func scrub(_ text: String) -> String {
        var result = ""
        var run = ""
        var previous: Unicode.Scalar?
        var runFollowsSlash = false
        func flush() {
            if !runFollowsSlash, run.unicodeScalars.count >= minimumSecretLength, looksRandom(run) {
                result += placeholder
            } else {
                result += run
            }
            run = ""
        }
        for scalar in text.unicodeScalars {
            if isTokenCharacter(scalar) {
                if run.isEmpty { runFollowsSlash = previous == "/" }
                run.unicodeScalars.append(scalar)
            } else {
                flush()
                result.unicodeScalars.append(scalar)
            }
            previous = scalar
        }
        flush()
        return result
    }

    /// Replaces every occurrence of the given secrets, then anything else that looks like a token.
    public static func scrub(_ text: String, secrets: some Sequence<String>) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty {
            text = text.replacing(secret, with: placeholder)
        }
        return scrub(text)
    }

    /// A URL without its query and fragment (where codes and tokens travel), also scrubbed.
    public static func scrubURL(_ text: String) -> String {
        let cut = text.firstIndex { $0 == "?" || $0 == "#" } ?? text.endIndex
        return scrub(String(text[..<cut]))
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", "~", "+": true
        default: false
        }
    }

    private static func looksRandom(_ run: String) -> Bool {
        var lower = false
        var upper = false
        var digit = false
        for scalar in run.unicodeScalars {
            switch scalar {
            case "a"..."z": lower = true
            case "A"..."Z": upper = true
            case "0"..."9": digit = true
            default: break
            }
        }
        return [lower, upper, digit].filter { $0 }.count >= 2
    }
}
