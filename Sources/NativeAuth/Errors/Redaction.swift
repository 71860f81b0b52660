/// Keeps secrets out of text that NativeAuth shows or logs.
///
/// Servers sometimes echo what they were sent (`"invalid refresh token gho_…"`). ``scrub(_:)``
/// replaces with `[redacted]` every run of 20 or more token characters (letters, digits, `-_~+`)
/// that mixes at least two of lowercase, uppercase and digits, and every run of 32 or more of one
/// kind without `_` (a lowercase or numeric token): access tokens, refresh tokens, codes, JWT
/// segments and client secrets all look like that, while words, error codes and lowercase URL
/// paths do not.
///
/// Inside a file path (a word that starts with `/`, `~/`, `./` or `../`) or the path of a URL
/// (after `scheme://`, before `?` or `#`), `/` separates runs and a run right after it is kept, so
/// messages can name files and endpoints; elsewhere `/` is part of the run (Google's refresh
/// tokens start `1//`, its codes `4/`, and base64 secrets contain `/`). The values a request actually sent are removed by
/// ``scrub(_:secrets:)`` whatever their shape.
@_spi(Provider) public enum Redaction {
    /// The text that replaces a secret.
    public static let placeholder = "[redacted]"

    /// The shortest run of token characters that is treated as a secret.
    public static let minimumSecretLength = 20

    /// Replaces anything in `text` that looks like a token with ``placeholder``.
    public static func scrub(_ text: String) -> String {
        var result = ""
        var run = ""
        var word = ""
        var previous: Unicode.Scalar?
        var runFollowsSlash = false
        func flush() {
            if !runFollowsSlash, looksSecret(run) {
                result += placeholder
            } else {
                result += run
            }
            word += run
            run = ""
        }
        for scalar in text.unicodeScalars {
            // Outside a path, `/` is part of a token (`1//0g…`, `4/0A…`, base64).
            if isTokenCharacter(scalar) || (scalar == "/" && !run.isEmpty && !isPath(word + run)) {
                if run.isEmpty { runFollowsSlash = previous == "/" && isPath(word) }
                run.unicodeScalars.append(scalar)
            } else {
                flush()
                result.unicodeScalars.append(scalar)
                if isWordSeparator(scalar) { word = "" } else { word.unicodeScalars.append(scalar) }
            }
            previous = scalar
        }
        flush()
        return result
    }

    /// Whether a run of token characters is long and random enough to be a secret.
    private static func looksSecret(_ run: String) -> Bool {
        let length = run.unicodeScalars.count
        guard length >= minimumSecretLength else { return false }
        let kinds = kinds(of: run)
        return kinds >= 2
            || (length >= 32
                && run.unicodeScalars.allSatisfy { isTokenCharacter($0) && !"_-~+".unicodeScalars.contains($0) })
    }

    /// Whether `word` (up to a `/`) is a file path, or a URL still in its path.
    private static func isPath(_ word: String) -> Bool {
        if word.hasPrefix("/") || word.hasPrefix("~/") || word.hasPrefix("./") || word.hasPrefix("../") {
            return true
        }
        guard let separator = word.firstRange(of: "://") else { return false }
        let scheme = word[..<separator.lowerBound]
        return !scheme.isEmpty && scheme.unicodeScalars.allSatisfy { isSchemeCharacter($0) }
            && !word[separator.upperBound...].contains { $0 == "?" || $0 == "#" }
    }

    private static func isSchemeCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "+", "-", ".": true
        default: false
        }
    }

    private static func isWordSeparator(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case " ", "\t", "\n", "\r", "\"", "'", "`", "(", ")", "<", ">", ",", ";", "[", "]", "{", "}": true
        default: false
        }
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

    /// How many of lowercase, uppercase and digits `run` has.
    private static func kinds(of run: String) -> Int {
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
        return [lower, upper, digit].filter { $0 }.count
    }
}
