/// Text from outside (an authorization server's `user_code`, `error_description`, a claim) made
/// safe to write to a terminal.
///
/// A hostile server could otherwise send terminal control sequences: move the cursor and rewrite
/// the device flow's `Open:` line, plant an OSC 8 link, or set the clipboard with OSC 52. Every C0
/// control but the tab, DEL and every C1 control is shown as visible text instead: `^[` for ESC,
/// `^?` for DEL, `<U+009B>` for a C1 control. Messages are one line each, so a newline or a
/// carriage return from a server cannot start a line of its own either.
///
/// Applied where text leaves NativeAuth: every ``AuthError``'s texts, every ``ConsoleOutput``
/// message, and what the commands of NativeAuthCommands print.
package enum TerminalText {
    /// `text` with its control characters made visible.
    package static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09:
                result.unicodeScalars.append(scalar)
            case 0x00..<0x20:
                result += "^" + String(Character(Unicode.Scalar(UInt8(scalar.value + 0x40))))
            case 0x7F:
                result += "^?"
            case 0x80..<0xA0:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "<U+00\(hex)>"
            case _ where isBidiControl(scalar):
                result += "<U+\(String(scalar.value, radix: 16, uppercase: true))>"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar.value != 0x09) || (0x7F..<0xA0).contains(scalar.value)
            || isBidiControl(scalar)
    }

    /// The bidirectional formatting characters (Unicode's `Bidi_Control`: marks, embeddings,
    /// overrides, isolates), which reorder what a terminal shows after them ("Trojan Source").
    private static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isBidiControl
    }
}
