internal import Foundation

/// What STS answered, read from its XML (the Query protocol's): the text of each element by its
/// name, the first of each. STS's answers name each field once.
///
/// The reader is this module's own, not Foundation's `XMLParser`: linking FoundationXML made every
/// tool load libxml2 and the system's ICU at start, about 2 ms and 2 MiB of every run (Benchmarks/NOTES.md),
/// for two fixed documents. It reads well-formed XML without a document type: elements, attributes
/// (skipped), character data with the five predefined entities and character references, CDATA
/// sections, comments and processing instructions. Anything else (a DTD, an unknown entity, a tag
/// that does not close, an HTML page) is not STS's answer, and `init` returns `nil`.
struct STSResponse {
    /// The text of each element, by name.
    let elements: [String: String]
    /// The name of the document's root element (`AssumeRoleWithWebIdentityResponse`, `ErrorResponse`).
    let root: String

    /// Reads `data`; `nil` when it is not XML (a proxy's HTML page, an empty body).
    init?(_ data: Data) {
        var reader = Reader(bytes: Array(data))
        guard let (root, elements) = reader.document() else { return nil }
        self.elements = elements
        self.root = root
    }

    /// An ISO 8601 time as STS writes it: `2026-11-27T23:50:59Z`, or with fractional seconds.
    static func date(_ text: String) -> Date? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if let dot = text.firstIndex(of: "."),
            let end = text[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" })
        {
            text.removeSubrange(dot..<end)
        }
        return try? Date(text, strategy: .iso8601)
    }

    /// A reader over the document's bytes. Each element's text is the character data since the
    /// last tag, as a SAX reader's would be: a leaf's is its content, a parent's what follows its
    /// last child (whitespace, trimmed away).
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        mutating func document() -> (root: String, elements: [String: String])? {
            var elements: [String: String] = [:]
            var open: [String] = []
            var root: String?
            var text: [UInt8] = []
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "<") else {
                    // Character data: only inside the root element (whitespace around it).
                    guard !open.isEmpty || isSpace(bytes[index]) else { return nil }
                    guard characterData(into: &text) else { return nil }
                    continue
                }
                if starts(with: "<!--") || starts(with: "<?") {
                    let isComment = starts(with: "<!--")
                    let closing: StaticString = isComment ? "-->" : "?>"
                    guard let end = find(closing, from: index + (isComment ? 4 : 2)) else { return nil }
                    index = end + closing.utf8CodeUnitCount
                    continue
                }
                if starts(with: "<![CDATA[") {
                    guard !open.isEmpty, let end = find("]]>", from: index + 9) else { return nil }
                    text += bytes[(index + 9)..<end]
                    index = end + 3
                    continue
                }
                if starts(with: "</") {
                    index += 2
                    guard let name = name(), let expected = open.popLast(), name == expected else { return nil }
                    skipSpaces()
                    guard take(">") else { return nil }
                    if elements[name] == nil {
                        elements[name] = String(decoding: text, as: UTF8.self)
                            .trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                    text = []
                    continue
                }
                // A start tag; a second root, or a declaration such as <!DOCTYPE, is not STS's answer.
                index += 1
                guard root == nil || !open.isEmpty, let name = name(), attributes() else { return nil }
                if root == nil { root = name }
                text = []
                if take("/>") {
                    if elements[name] == nil { elements[name] = "" }
                } else {
                    guard take(">") else { return nil }
                    open.append(name)
                }
            }
            guard open.isEmpty, let root else { return nil }
            return (root, elements)
        }

        /// Character data up to the next `<`, with its references replaced.
        private mutating func characterData(into text: inout [UInt8]) -> Bool {
            while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
                guard bytes[index] == UInt8(ascii: "&") else {
                    text.append(bytes[index])
                    index += 1
                    continue
                }
                guard let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")), end - index <= 12 else {
                    return false
                }
                let reference = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                index = end + 1
                let predefined = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                if let character = predefined[reference] {
                    text += Array(character.utf8)
                } else if reference.hasPrefix("#"), let scalar = Self.scalar(reference.dropFirst()) {
                    text += Array(String(Character(scalar)).utf8)
                } else {
                    return false
                }
            }
            return true
        }

        /// `123` or `x7B` as a Unicode scalar.
        private static func scalar(_ digits: Substring) -> Unicode.Scalar? {
            let value = digits.first == "x" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            return value.flatMap(Unicode.Scalar.init)
        }

        /// Attributes up to the tag's end, skipped: quoted values in either quote.
        private mutating func attributes() -> Bool {
            while true {
                skipSpaces()
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: ">") || starts(with: "/>") { return true }
                guard name() != nil else { return false }
                skipSpaces()
                guard take("=") else { return false }
                skipSpaces()
                guard index < bytes.count else { return false }
                let quote = bytes[index]
                guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'"),
                    let end = bytes[(index + 1)...].firstIndex(of: quote)
                else { return false }
                index = end + 1
            }
        }

        /// A name: letters, digits and `_ - . :`, not starting with a digit, `-` or `.`; or any
        /// byte past ASCII (names in other scripts).
        private mutating func name() -> String? {
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
                let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                let isOther = byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
                let isInside = byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || isDigit
                guard isLetter || isOther || (isInside && index > start) else { break }
                index += 1
            }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        private func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private mutating func skipSpaces() {
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        }

        private func starts(with prefix: StaticString) -> Bool {
            let count = prefix.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            return prefix.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
        }

        private mutating func take(_ prefix: StaticString) -> Bool {
            guard starts(with: prefix) else { return false }
            index += prefix.utf8CodeUnitCount
            return true
        }

        /// Where `needle` next starts at or after `start`.
        private func find(_ needle: StaticString, from start: Int) -> Int? {
            let count = needle.utf8CodeUnitCount
            guard count > 0, start + count <= bytes.count else { return nil }
            return needle.withUTF8Buffer { needle in
                (start...(bytes.count - count)).first { bytes[$0..<($0 + count)].elementsEqual(needle) }
            }
        }
    }
}
