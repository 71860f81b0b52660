/// Text for HTML: the loopback receiver's start page and NativeAuthTesting's sandbox pages.
package enum HTML {
    /// `text` safe inside an HTML element or a double- or single-quoted attribute value.
    package static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
