extension JSONValue {
    /// The value as an integer, tolerating how real providers write numbers.
    ///
    /// Accepts `3600`, `3600.0` and `"3600"` (also `"3600.0"`, with surrounding whitespace).
    /// Returns `nil` for `3600.5`, `"abc"`, numbers outside 64 bits and every other kind.
    public var lenientInteger: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .double(let value):
            return Self.exactInteger(value)
        case .string(let text):
            let trimmed = text.trimmingASCIIWhitespace()
            if let value = Int64(trimmed) { return value }
            guard let value = Double(trimmed), trimmed.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else {
                return nil
            }
            return Self.exactInteger(value)
        default:
            return nil
        }
    }

    /// The value as a boolean: `true`/`false`, or the strings `"true"`/`"false"` in any letter case
    /// (Cognito sends `"email_verified": "true"`). `nil` for anything else.
    public var lenientBool: Bool? {
        switch self {
        case .bool(let value):
            return value
        case .string(let text):
            switch text.trimmingASCIIWhitespace().lowercased() {
            case "true": return true
            case "false": return false
            default: return nil
            }
        default:
            return nil
        }
    }

    /// The value as a string: a JSON string as it is, or a number in its decimal form (ids that some
    /// providers send as numbers, such as GitHub's user id). `nil` for other kinds.
    public var lenientString: String? {
        switch self {
        case .string(let text):
            return text
        case .integer(let value):
            return String(value)
        case .double(let value):
            guard value.isFinite else { return nil }
            if let integer = Self.exactInteger(value) { return String(integer) }
            return String(value)
        default:
            return nil
        }
    }

    /// The value as a list of strings, for scopes and similar fields.
    ///
    /// Accepts a JSON array of strings, or one string separated by spaces (RFC 6749 §3.3) or by
    /// commas (GitHub); empty items are dropped, so `""` is an empty list. `nil` for other kinds, and
    /// for an array that holds anything but strings.
    public var lenientStringList: [String]? {
        switch self {
        case .array(let elements):
            var result: [String] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let text) = element else { return nil }
                result.append(text)
            }
            return result
        case .string(let text):
            return
                text
                .split { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
                .map(String.init)
        default:
            return nil
        }
    }

    private static func exactInteger(_ value: Double) -> Int64? {
        // Int64(exactly:) rejects fractions, NaN, infinities and values outside 64 bits.
        Int64(exactly: value)
    }
}

extension StringProtocol {
    fileprivate func trimmingASCIIWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return Substring(self[first...last])
    }
}
