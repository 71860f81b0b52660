extension JSONObject {
    /// Reads an optional integer field leniently (see ``JSONValue/lenientInteger``).
    ///
    /// - Returns: The integer, or `nil` when the field is absent or `null`.
    /// - Throws: ``JSONFieldError`` when the field holds something that is not an integer.
    public func integer(_ key: String) throws(JSONFieldError) -> Int64? {
        try read(key, expected: "an integer", \.lenientInteger)
    }

    /// Reads an optional boolean field leniently (see ``JSONValue/lenientBool``).
    public func bool(_ key: String) throws(JSONFieldError) -> Bool? {
        try read(key, expected: "a boolean", \.lenientBool)
    }

    /// Reads an optional string field leniently: a string, or a number as text (see ``JSONValue/lenientString``).
    public func string(_ key: String) throws(JSONFieldError) -> String? {
        try read(key, expected: "a string", \.lenientString)
    }

    /// Reads an optional list of strings leniently (see ``JSONValue/lenientStringList``).
    public func stringList(_ key: String) throws(JSONFieldError) -> [String]? {
        try read(key, expected: "a list of strings", \.lenientStringList)
    }

    /// Reads an optional object field.
    public func object(_ key: String) throws(JSONFieldError) -> JSONObject? {
        try read(key, expected: "an object", \.objectValue)
    }

    /// Reads an optional array field.
    public func array(_ key: String) throws(JSONFieldError) -> [JSONValue]? {
        try read(key, expected: "an array", \.arrayValue)
    }

    /// Reads a required string field: absent, `null` and empty are all ``JSONFieldError/Problem/missing``.
    public func requiredString(_ key: String) throws(JSONFieldError) -> String {
        guard let value = try string(key), !value.isEmpty else {
            throw JSONFieldError(key: key, problem: .missing)
        }
        return value
    }

    /// Reads a required integer field.
    public func requiredInteger(_ key: String) throws(JSONFieldError) -> Int64 {
        guard let value = try integer(key) else { throw JSONFieldError(key: key, problem: .missing) }
        return value
    }

    private func read<T>(
        _ key: String,
        expected: String,
        _ conversion: (JSONValue) -> T?
    ) throws(JSONFieldError) -> T? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let converted = conversion(value) else {
            throw JSONFieldError(key: key, problem: .wrongKind(expected: expected, found: value.kindName))
        }
        return converted
    }
}
