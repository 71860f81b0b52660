internal import CJansson

extension JSONValue {
    /// Parses a JSON document with jansson.
    ///
    /// - The size limit is checked before any parsing starts.
    /// - A UTF-8 byte-order mark and whitespace around the value are accepted; anything else after
    ///   the top-level value is ``JSONParseError/Reason/trailingCharacters``.
    /// - Any JSON value may be the top-level value, not only objects and arrays.
    /// - Strings may contain `\u0000`; object keys may not (jansson cannot hold them).
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 document, for example a response body (`Data`) or `Array(string.utf8)`.
    ///   - options: Limits and choices; see ``JSONParseOptions``.
    /// - Throws: ``JSONParseError`` with the position of the problem.
    public static func parse(
        _ bytes: some Collection<UInt8>,
        options: JSONParseOptions = JSONParseOptions()
    ) throws(JSONParseError) -> JSONValue {
        guard bytes.count <= options.maxBytes else {
            throw JSONParseError(
                reason: .tooLarge(size: bytes.count, limit: options.maxBytes),
                line: 0,
                column: 0,
                position: 0,
                message: "the document is \(bytes.count) bytes, over the limit of \(options.maxBytes) bytes",
                snippet: nil
            )
        }
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(raw: UnsafeRawBufferPointer(buffer), options: options) }
        }
        if let contiguous { return try contiguous.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(raw: raw, options: options) }
        }.get()
    }

    /// Parses a JSON document held in a string.
    public static func parse(
        _ text: String,
        options: JSONParseOptions = JSONParseOptions()
    ) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let janssonMaxDepth = 2048

    private static func parse(raw: UnsafeRawBufferPointer, options: JSONParseOptions) throws(JSONParseError)
        -> JSONValue
    {
        let skipped = raw.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        let body = UnsafeRawBufferPointer(rebasing: raw[skipped...])
        var flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL)
        if !options.allowsDuplicateKeys { flags |= Int(JSON_REJECT_DUPLICATES) }

        var error = json_error_t()
        var root = load(body, flags: flags, error: &error)
        if root == nil, json_error_code(&error) == json_error_numeric_overflow, options.bigIntegers == .readAsDouble {
            error = json_error_t()
            root = load(body, flags: flags | Int(JSON_DECODE_INT_AS_REAL), error: &error)
        }
        guard let root else {
            throw makeError(&error, offset: skipped, maxDepth: options.maxDepth)
        }
        defer { json_decref(root) }
        return try convert(root, depth: 0, maxDepth: options.maxDepth)
    }

    private static func load(_ body: UnsafeRawBufferPointer, flags: Int, error: inout json_error_t)
        -> UnsafeMutablePointer<json_t>?
    {
        guard let base = body.baseAddress else {
            // jansson refuses a NULL buffer; give it an empty one so the error is the usual "end of input" one.
            var empty: CChar = 0
            return json_loadb(&empty, 0, flags, &error)
        }
        return json_loadb(base.assumingMemoryBound(to: CChar.self), body.count, flags, &error)
    }

    private static func makeError(_ error: inout json_error_t, offset: Int, maxDepth: Int) -> JSONParseError {
        let reason: JSONParseError.Reason =
            switch json_error_code(&error) {
            case json_error_invalid_utf8: .invalidUTF8
            case json_error_premature_end_of_input: .unexpectedEnd
            case json_error_end_of_input_expected: .trailingCharacters
            case json_error_duplicate_key: .duplicateKey
            case json_error_numeric_overflow: .numberOutOfRange
            case json_error_null_byte_in_key: .nulInKey
            case json_error_stack_overflow: .tooDeep(limit: min(maxDepth, janssonMaxDepth))
            default: .syntax
            }
        let text = withUnsafeBytes(of: error.text) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        var message = text
        var snippet: String?
        // jansson writes "<message> near '<text>'", cutting long text (and its closing quote) at 160 bytes.
        if let near = text.firstRange(of: " near '") {
            message = String(text[..<near.lowerBound])
            let quoted = text[near.upperBound...]
            snippet = String(quoted.hasSuffix("'") ? quoted.dropLast() : quoted)
        }
        return JSONParseError(
            reason: reason,
            line: Int(error.line),
            column: Int(error.column),
            position: Int(error.position) + offset,
            message: message,
            snippet: snippet
        )
    }

    private static func convert(
        _ node: UnsafeMutablePointer<json_t>,
        depth: Int,
        maxDepth: Int
    ) throws(JSONParseError) -> JSONValue {
        switch node.pointee.type {
        case JSON_OBJECT:
            try checkDepth(depth + 1, maxDepth: maxDepth)
            var object = JSONObject()
            var iterator = json_object_iter(node)
            while let current = iterator {
                let key = string(json_object_iter_key(current), count: json_object_iter_key_len(current))
                guard let child = json_object_iter_value(current) else { break }
                object.appendUnchecked(key: key, value: try convert(child, depth: depth + 1, maxDepth: maxDepth))
                iterator = json_object_iter_next(node, current)
            }
            object.finishAppending()
            return .object(object)
        case JSON_ARRAY:
            try checkDepth(depth + 1, maxDepth: maxDepth)
            let count = json_array_size(node)
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for position in 0..<count {
                guard let child = json_array_get(node, position) else { continue }
                elements.append(try convert(child, depth: depth + 1, maxDepth: maxDepth))
            }
            return .array(elements)
        case JSON_STRING:
            return .string(string(json_string_value(node), count: json_string_length(node)))
        case JSON_INTEGER:
            return .integer(Int64(json_integer_value(node)))
        case JSON_REAL:
            return .double(json_real_value(node))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }

    private static func checkDepth(_ depth: Int, maxDepth: Int) throws(JSONParseError) {
        guard depth > maxDepth else { return }
        throw JSONParseError(
            reason: .tooDeep(limit: maxDepth),
            line: 0,
            column: 0,
            position: 0,
            message: "arrays and objects nest deeper than the limit of \(maxDepth) levels",
            snippet: nil
        )
    }

    private static func string(_ pointer: UnsafePointer<CChar>?, count: Int) -> String {
        guard let pointer, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
}
