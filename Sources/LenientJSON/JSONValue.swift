/// A JSON value, as parsed by jansson or built in code.
///
/// `JSONValue` keeps what a document said: integers stay integers, doubles stay doubles, and
/// objects keep their key order. Protocol code reads it through the lenient accessors
/// (``lenientInteger``, ``lenientBool``, ``lenientString``, ``lenientStringList``) or through
/// ``JSONObject``'s typed field readers, which tolerate what real providers send while rejecting
/// what is broken.
///
/// ```swift
/// let response = try JSONValue.parse(body)
/// let expiresIn = try response.objectValue?.integer("expires_in")   // 3600, "3600" or 3600.0
/// ```
public enum JSONValue: Sendable, Equatable {
    /// A JSON object; its members keep the order of the document.
    case object(JSONObject)
    /// A JSON array.
    case array([JSONValue])
    /// A JSON string. It may contain U+0000 (written `\u0000` in the document).
    case string(String)
    /// A JSON number without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other JSON number.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
}

extension JSONValue {
    /// The object, when this value is one.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The elements, when this value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string, when this value is a JSON string (no conversion; see ``lenientString``).
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// Whether this value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's kind for messages ("object", "string", …); never the value itself.
    public var kindName: String {
        switch self {
        case .object: "object"
        case .array: "array"
        case .string: "string"
        case .integer: "integer"
        case .double: "number"
        case .bool: "boolean"
        case .null: "null"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
