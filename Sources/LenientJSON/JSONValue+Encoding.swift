internal import CJansson

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a ``JSONValue`` could not be encoded.
public struct JSONEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What could not be encoded.
    public enum Reason: Sendable, Equatable {
        /// A double is NaN or infinite, which JSON cannot express.
        case nonFiniteNumber
        /// An object key contains U+0000, which jansson cannot hold.
        case nulInKey
        /// jansson could not allocate memory.
        case outOfMemory
    }

    /// What could not be encoded.
    public let reason: Reason

    /// Creates an error.
    public init(reason: Reason) { self.reason = reason }

    public var description: String {
        switch reason {
        case .nonFiniteNumber: "JSON encoding error: NaN and infinite numbers have no JSON form"
        case .nulInKey: "JSON encoding error: an object key contains U+0000"
        case .outOfMemory: "JSON encoding error: out of memory"
        }
    }
}

extension JSONValue {
    /// Encodes the value as compact JSON (no spaces or newlines) with jansson.
    ///
    /// Strings are written as UTF-8, with the escapes JSON requires (`"`, `\`, control characters,
    /// `\u0000`); `/` is not escaped. Decoding the result gives back an equal value.
    ///
    /// - Parameter sortedKeys: Write object members sorted by key instead of in their order.
    /// - Returns: The UTF-8 bytes of the document.
    public func encoded(sortedKeys: Bool = false) throws(JSONEncodingError) -> [UInt8] {
        let root = try makeNode()
        defer { json_decref(root) }
        var flags = Int(JSON_COMPACT | JSON_ENCODE_ANY)
        if sortedKeys { flags |= Int(JSON_SORT_KEYS) }
        guard let text = json_dumps(root, flags) else { throw JSONEncodingError(reason: .outOfMemory) }
        defer { free(text) }
        let length = strlen(text)
        return Array(UnsafeRawBufferPointer(start: text, count: length))
    }

    /// Encodes the value as a compact JSON string; see ``encoded(sortedKeys:)``.
    public func encodedString(sortedKeys: Bool = false) throws(JSONEncodingError) -> String {
        String(decoding: try encoded(sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// Builds a jansson tree that the caller owns (one reference).
    private func makeNode() throws(JSONEncodingError) -> UnsafeMutablePointer<json_t> {
        let node: UnsafeMutablePointer<json_t>?
        switch self {
        case .object(let object):
            guard let container = json_object() else { throw JSONEncodingError(reason: .outOfMemory) }
            for member in object {
                let child: UnsafeMutablePointer<json_t>
                do {
                    child = try member.value.makeNode()
                } catch {
                    json_decref(container)
                    throw error
                }
                if member.key.utf8.contains(0) {
                    json_decref(child)
                    json_decref(container)
                    throw JSONEncodingError(reason: .nulInKey)
                }
                // `_new` takes over `child`'s reference, also when it fails.
                let status = member.key.utf8CString.withUnsafeBufferPointer { key in
                    json_object_setn_new(container, key.baseAddress, key.count - 1, child)
                }
                guard status == 0 else {
                    json_decref(container)
                    throw JSONEncodingError(reason: .outOfMemory)
                }
            }
            node = container
        case .array(let elements):
            guard let container = json_array() else { throw JSONEncodingError(reason: .outOfMemory) }
            for element in elements {
                let child: UnsafeMutablePointer<json_t>
                do {
                    child = try element.makeNode()
                } catch {
                    json_decref(container)
                    throw error
                }
                guard json_array_append_new(container, child) == 0 else {
                    json_decref(container)
                    throw JSONEncodingError(reason: .outOfMemory)
                }
            }
            node = container
        case .string(let string):
            var copy = string
            node = copy.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    // jansson needs a non-NULL pointer even for the empty string.
                    chars.isEmpty ? json_stringn("", 0) : json_stringn(chars.baseAddress, chars.count)
                }
            }
        case .integer(let value):
            node = json_integer(json_int_t(value))
        case .double(let value):
            guard value.isFinite else { throw JSONEncodingError(reason: .nonFiniteNumber) }
            node = json_real(value)
        case .bool(let value):
            node = value ? json_true() : json_false()
        case .null:
            node = json_null()
        }
        guard let node else { throw JSONEncodingError(reason: .outOfMemory) }
        return node
    }
}
