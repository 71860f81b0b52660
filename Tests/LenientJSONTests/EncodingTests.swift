import LenientJSON
import Testing

@Suite struct EncodingTests {
    @Test func encodesCompactlyInOrderOrSorted() throws {
        let value: JSONValue = ["b": 1, "a": [true, nil, 2.5], "c": ["x": "y"]]
        #expect(try value.encodedString() == #"{"b":1,"a":[true,null,2.5],"c":{"x":"y"}}"#)
        #expect(try value.encodedString(sortedKeys: true) == #"{"a":[true,null,2.5],"b":1,"c":{"x":"y"}}"#)
    }

    @Test func encodesScalarsAndEmptyContainers() throws {
        #expect(try JSONValue.string("").encodedString() == #""""#)
        #expect(try JSONValue.integer(-42).encodedString() == "-42")
        #expect(try JSONValue.null.encodedString() == "null")
        #expect(try JSONValue.array([]).encodedString() == "[]")
        #expect(try JSONValue.object(JSONObject()).encodedString() == "{}")
    }

    @Test(arguments: [
        "plain", "", "quote \" backslash \\ slash /", "controls \u{1}\u{8}\u{C}\n\r\t\u{1F}", "ünïcödé 日本語 🔐👩🏽‍💻",
        "nul \u{0} inside", "\u{FEFF}bom-like", "\u{2028}\u{2029} separators", "emoji at end 🎉",
    ])
    func stringsRoundTripExactly(text: String) throws {
        // jansson cannot hold U+0000 in keys, so such text is tested as a value only.
        let key = text.contains("\u{0}") ? "key" : "key \(text)"
        let value: JSONValue = [key: .string(text), "list": [.string(text)]]
        let encoded = try value.encoded()
        let decoded = try JSONValue.parse(encoded)
        #expect(decoded == value)
        #expect(decoded.objectValue?.keys == value.objectValue?.keys)
        // Unicode is written as UTF-8, not as \u escapes.
        if text.contains("日本語") { #expect(String(decoding: encoded, as: UTF8.self).contains("日本語")) }
    }

    @Test(arguments: [0.1, 1.5e300, -2.25, 1e-7, 3600.0, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude])
    func doublesRoundTrip(number: Double) throws {
        let decoded = try JSONValue.parse(try JSONValue.double(number).encoded())
        #expect(decoded == .double(number))
    }

    @Test func integersRoundTrip() throws {
        for number in [Int64.min, -1, 0, 1, 3600, Int64.max] {
            #expect(try JSONValue.parse(try JSONValue.integer(number).encoded()) == .integer(number))
        }
    }

    @Test func documentsRoundTrip() throws {
        let text =
            #"{"issuer":"https://idp.example/o","scopes_supported":["openid","profile"],"nested":{"deep":[[{"x":null}]]},"n":-12,"f":0.5,"t":true}"#
        let value = try JSONValue.parse(text)
        #expect(try value.encodedString() == text)
        #expect(try JSONValue.parse(value.encoded()) == value)
    }

    @Test func nonFiniteNumbersAndNulKeysCannotBeEncoded() {
        #expect(throws: JSONEncodingError(reason: .nonFiniteNumber)) { try JSONValue.double(.nan).encoded() }
        #expect(throws: JSONEncodingError(reason: .nonFiniteNumber)) {
            try JSONValue.array([.double(.infinity)]).encoded()
        }
        #expect(throws: JSONEncodingError(reason: .nulInKey)) { try JSONValue.object(["a\u{0}b": 1]).encoded() }
    }

    @Test func objectEqualityIgnoresOrder() {
        #expect(JSONValue.object(["a": 1, "b": 2]) == JSONValue.object(["b": 2, "a": 1]))
        #expect(JSONValue.object(["a": 1]) != JSONValue.object(["a": 1, "b": 2]))
        #expect(JSONValue.integer(1) != JSONValue.double(1))
    }
}
