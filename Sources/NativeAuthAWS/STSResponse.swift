internal import Foundation

#if canImport(FoundationXML)
    internal import FoundationXML
#endif

/// What STS answered, read from its XML (the Query protocol's): the text of each element by its
/// name, the first of each. STS's answers name each field once.
struct STSResponse {
    /// The text of each element, by name.
    let elements: [String: String]
    /// The name of the document's root element (`AssumeRoleWithWebIdentityResponse`, `ErrorResponse`).
    let root: String

    /// Reads `data`; `nil` when it is not XML (a proxy's HTML page, an empty body).
    init?(_ data: Data) {
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        guard parser.parse(), let root = reader.root else { return nil }
        self.elements = reader.elements
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

    private final class Reader: NSObject, XMLParserDelegate {
        var elements: [String: String] = [:]
        var root: String?
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            if root == nil { root = elementName }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            if elements[elementName] == nil {
                elements[elementName] = text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            text = ""
        }
    }
}
