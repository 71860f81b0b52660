/// Why a document could not be parsed, and where.
///
/// The error says where the problem is (line, column, byte position) and what it is, in jansson's
/// words. It quotes at most ``maxSnippetLength`` characters of the document, so a secret inside a
/// malformed token response is never repeated in full.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem was found.
    public enum Reason: Sendable, Equatable {
        /// The document is larger than ``JSONParseOptions/maxBytes``; nothing was parsed.
        case tooLarge(size: Int, limit: Int)
        /// Arrays and objects nest deeper than the limit.
        case tooDeep(limit: Int)
        /// The bytes are not valid UTF-8.
        case invalidUTF8
        /// The document ends before the value is complete (including an empty document).
        case unexpectedEnd
        /// Something follows the top-level value.
        case trailingCharacters
        /// An object repeats a key and duplicates are not allowed.
        case duplicateKey
        /// An integer does not fit in 64 bits and ``JSONParseOptions/BigIntegers/reject`` is set.
        case numberOutOfRange
        /// An object key contains U+0000, which jansson cannot hold.
        case nulInKey
        /// Any other syntax error.
        case syntax
    }

    /// The longest piece of the document an error quotes.
    public static let maxSnippetLength = 16

    /// What kind of problem was found.
    public let reason: Reason
    /// The line of the problem, from 1 (0 when the document was refused before parsing).
    public let line: Int
    /// The column of the problem on its line, from 1, counted in characters.
    public let column: Int
    /// The byte offset of the problem from the start of the input, including any byte-order mark.
    public let position: Int
    /// What is wrong, in jansson's words, without the quoted piece of the document.
    public let message: String
    /// At most ``maxSnippetLength`` characters of the document near the problem, with control
    /// characters escaped; `nil` when there is nothing to quote.
    public let snippet: String?

    /// Creates an error; the snippet is cut to ``maxSnippetLength`` and control characters are escaped.
    public init(reason: Reason, line: Int, column: Int, position: Int, message: String, snippet: String?) {
        self.reason = reason
        self.line = line
        self.column = column
        self.position = position
        self.message = message
        self.snippet = snippet.map(Self.shorten)
    }

    /// The error with its location and message, without quoting the document.
    public var summary: String {
        // Limits checked outside jansson have no position to tell.
        if line == 0 { return message }
        return "line \(line), column \(column) (byte \(position)): \(message)"
    }

    public var description: String {
        let location = line == 0 ? ": " : " at "
        guard let snippet, !snippet.isEmpty else { return "JSON parse error\(location)\(summary)" }
        return "JSON parse error\(location)\(summary) near '\(snippet)'"
    }

    private static func shorten(_ text: String) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == maxSnippetLength {
                result += "…"
                break
            }
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
