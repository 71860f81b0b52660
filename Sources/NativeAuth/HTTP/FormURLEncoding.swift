public import Foundation

/// The `application/x-www-form-urlencoded` format of OAuth requests and of GitHub's token
/// responses (RFC 6749 Appendix B, WHATWG URL "application/x-www-form-urlencoded").
///
/// Encoding writes names and values as UTF-8, keeps `A–Z a–z 0–9 - . _ *` as they are, writes a
/// space as `+` and every other byte as `%XX`. Decoding reads `+` and `%20` as a space, `%XX` as a
/// byte, and any other character as itself; a `%` not followed by two hex digits stays as it is,
/// and bytes that are not UTF-8 become U+FFFD, so decoding never fails.
@_spi(Provider) public enum FormURLEncoding {
    /// The media type, for `Content-Type` headers.
    public static let mediaType = "application/x-www-form-urlencoded"

    /// Encodes fields as a form body, in order.
    public static func encode(_ fields: some Sequence<FormField>) -> String {
        fields.map { encode(component: $0.name) + "=" + encode(component: $0.value) }.joined(separator: "&")
    }

    /// `base` with `fields` added to its query (after `&` when it has one already, else `?`), as
    /// authorization, end-session and redirect URLs are built.
    ///
    /// - Parameters:
    ///   - base: The URL, possibly with a query of its own.
    ///   - fields: The parameters to add, form-encoded.
    /// - Returns: The URL, or `nil` when the result does not parse.
    public static func url(_ base: String, adding fields: some Sequence<FormField>) -> URL? {
        URL(string: base + (base.contains("?") ? "&" : "?") + encode(fields))
    }

    /// Encodes one name or value.
    public static func encode(component: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        for byte in component.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "*"):
                bytes.append(byte)
            case UInt8(ascii: " "):
                bytes.append(UInt8(ascii: "+"))
            default:
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes a form body into its fields, in order. Empty pieces (`a=1&&b=2`) are skipped; a
    /// piece without `=` is a field with an empty value.
    public static func decode(_ body: some StringProtocol) -> [FormField] {
        body.utf8.split(separator: UInt8(ascii: "&")).map { piece in
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                return FormField(
                    decode(component: piece[..<equals]),
                    decode(component: piece[piece.index(after: equals)...])
                )
            }
            return FormField(decode(component: piece), "")
        }
    }

    /// Decodes a form body held as bytes (an HTTP response body).
    public static func decode(bytes: some Collection<UInt8>) -> [FormField] {
        decode(String(decoding: bytes, as: UTF8.self))
    }

    /// Decodes one name or value.
    public static func decode(component: some Collection<UInt8>) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.count)
        var index = component.startIndex
        while index != component.endIndex {
            let byte = component[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"),
                let first = component.index(index, offsetBy: 1, limitedBy: component.endIndex),
                first != component.endIndex,
                let second = component.index(first, offsetBy: 1, limitedBy: component.endIndex),
                second != component.endIndex,
                let high = hexValue(component[first]),
                let low = hexValue(component[second])
            {
                bytes.append(high << 4 | low)
                index = second
            } else {
                bytes.append(byte)
            }
            index = component.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
