import LenientJSON
import Testing

private func parseError(_ text: String, options: JSONParseOptions = JSONParseOptions()) -> JSONParseError? {
    parseError(bytes: Array(text.utf8), options: options)
}

private func parseError(bytes: [UInt8], options: JSONParseOptions = JSONParseOptions()) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes, options: options)
        return nil
    } catch {
        return error
    }
}

@Suite struct ParsingTests {
    @Test func parsesEveryKindAndKeepsKeyOrder() throws {
        let value = try JSONValue.parse(#"{"z":1,"a":"two","m":[true,false,null],"d":2.5,"o":{"k":-7}}"#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["z", "a", "m", "d", "o"])
        #expect(object["z"] == .integer(1))
        #expect(object["a"] == .string("two"))
        #expect(object["m"] == [true, false, nil])
        #expect(object["d"] == .double(2.5))
        #expect(object["o"] == ["k": -7])
    }

    @Test func acceptsAByteOrderMarkAndSurroundingWhitespace() throws {
        #expect(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)) == ["a": 1])
        #expect(try JSONValue.parse(" \n\t {\"a\":1} \r\n ") == ["a": 1])
        #expect(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("  [1] \n".utf8)) == [1])
    }

    @Test func acceptsScalarTopLevelValues() throws {
        #expect(try JSONValue.parse("3600") == 3600)
        #expect(try JSONValue.parse(#""text""#) == "text")
        #expect(try JSONValue.parse("null") == .null)
    }

    @Test func trailingGarbageIsAnErrorWithItsPosition() throws {
        let error = try #require(parseError(#"{"a":1} x"#))
        #expect(error.reason == .trailingCharacters)
        #expect(error.line == 1)
        #expect(error.column == 9)
        #expect(error.position == 9)
        #expect(error.snippet == "x")
        // A second document after the first is garbage too.
        #expect(parseError(#"{"a":1}{"b":2}"#)?.reason == .trailingCharacters)
    }

    @Test func positionsCountTheByteOrderMark() throws {
        let error = try #require(parseError(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"a":1} x"#.utf8)))
        #expect(error.reason == .trailingCharacters)
        #expect(error.column == 9)
        #expect(error.position == 12)
    }

    @Test func malformedDocumentsSayWhere() throws {
        let missingValue = try #require(parseError("{\n  \"a\": 1,\n  \"b\": tru\n}"))
        #expect(missingValue.reason == .syntax)
        #expect(missingValue.line == 3)
        #expect(missingValue.column == 10)  // jansson points at the last character it read
        #expect(missingValue.position == 22)
        #expect(missingValue.message == "invalid token")
        #expect(missingValue.snippet == "tru")
        #expect(missingValue.description == "JSON parse error at line 3, column 10 (byte 22): invalid token near 'tru'")

        let unterminated = try #require(parseError(#"{"a": [1, 2"#))
        #expect(unterminated.reason == .unexpectedEnd)
        #expect(unterminated.line == 1)
        #expect(unterminated.position == 11)

        let empty = try #require(parseError(""))
        #expect(empty.reason == .unexpectedEnd)
        #expect(parseError("   \n ")?.reason == .unexpectedEnd)

        let trailingComma = try #require(parseError(#"{"a":1,}"#))
        #expect(trailingComma.reason == .syntax)
        #expect(trailingComma.position == 8)

        let singleQuotes = try #require(parseError("{'a':1}"))
        #expect(singleQuotes.reason == .syntax)
        #expect(singleQuotes.column == 2)
    }

    @Test func snippetsAreShortAndEscaped() throws {
        // jansson quotes up to 20 characters; the error keeps at most 16 of them.
        let error = try #require(parseError(#"{"a": "ABCDEFGHIJKLMNOP\q"}"#))
        #expect(error.snippet == #""ABCDEFGHIJKLMNO…"#)
        #expect(!error.description.contains("ABCDEFGHIJKLMNOP"))
        // Longer tokens are not quoted at all.
        let longString = String(repeating: "A", count: 200)
        let long = try #require(parseError(#"{"a": "\#(longString)\q"}"#))
        #expect(long.snippet == nil)
        #expect(!long.description.contains("AAAA"))
        #expect(parseError("{\"a\": \"x\u{01}y\"}")?.reason == .syntax)
        let control = JSONParseError(
            reason: .syntax, line: 1, column: 1, position: 0, message: "m", snippet: "a\u{1}\nb")
        #expect(control.snippet == #"a\u0001\u000ab"#)
    }

    @Test func theSizeLimitIsCheckedBeforeParsing() throws {
        // Not JSON at all: a parse would fail differently, so the size check must come first.
        let bytes = [UInt8](repeating: UInt8(ascii: "<"), count: 2_000)
        let error = try #require(parseError(bytes: bytes, options: JSONParseOptions(maxBytes: 1_000)))
        #expect(error.reason == .tooLarge(size: 2_000, limit: 1_000))
        #expect(error.description.contains("1000"))
        #expect(try JSONValue.parse(Array("[1]".utf8), options: JSONParseOptions(maxBytes: 3)) == [1])
        #expect(parseError("[1] ", options: JSONParseOptions(maxBytes: 3))?.reason == .tooLarge(size: 4, limit: 3))
    }

    @Test func theDepthLimitIsEnforced() throws {
        let deep = { (levels: Int) in String(repeating: "[", count: levels) + String(repeating: "]", count: levels) }
        let limited = JSONParseOptions(maxDepth: 5)
        #expect(try JSONValue.parse(deep(5), options: limited).arrayValue != nil)
        #expect(parseError(deep(6), options: limited)?.reason == .tooDeep(limit: 5))
        let objects = String(repeating: #"{"a":"#, count: 6) + "1" + String(repeating: "}", count: 6)
        #expect(parseError(objects, options: limited)?.reason == .tooDeep(limit: 5))
        // Past jansson's own limit the default options still fail cleanly.
        #expect(parseError(deep(5_000))?.reason == .tooDeep(limit: 64))
        #expect(parseError(deep(65))?.reason == .tooDeep(limit: 64))
    }

    @Test func integersBeyond64Bits() throws {
        let text = #"{"expires_in": 3600, "huge": 123456789012345678901234567890}"#
        let object = try #require(try JSONValue.parse(text).objectValue)
        #expect(object["huge"] == .double(Double("123456789012345678901234567890") ?? 0))
        #expect(try object.integer("expires_in") == 3600)
        #expect(throws: JSONFieldError.self) { try object.integer("huge") }

        let strict = try #require(parseError(text, options: JSONParseOptions(bigIntegers: .reject)))
        #expect(strict.reason == .numberOutOfRange)
        #expect(strict.line == 1)

        #expect(try JSONValue.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    @Test func invalidUTF8IsRejectedWithItsPosition() throws {
        let error = try #require(parseError(bytes: Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)))
        #expect(error.reason == .invalidUTF8)
        #expect(error.position == 6)
        #expect(parseError(bytes: [0x22, 0xFF, 0x22])?.reason == .invalidUTF8)
        // An overlong encoding of "/" and a lone surrogate.
        #expect(parseError(bytes: [0x22, 0xC0, 0xAF, 0x22])?.reason == .invalidUTF8)
        #expect(parseError(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22])?.reason == .invalidUTF8)
    }

    @Test func nulInsideStringsIsKeptButNotInKeys() throws {
        let value = try JSONValue.parse(#"{"a":"before\u0000after"}"#)
        #expect(value.objectValue?["a"] == .string("before\u{0}after"))
        #expect(try value.encodedString() == #"{"a":"before\u0000after"}"#)
        #expect(parseError(#"{"a\u0000b":1}"#)?.reason == .nulInKey)
    }

    @Test func duplicateKeysAreRejectedUnlessAllowed() throws {
        let error = try #require(parseError(#"{"access_token":"a","access_token":"b"}"#))
        #expect(error.reason == .duplicateKey)
        let lenient = try JSONValue.parse(
            #"{"k":"a","x":1,"k":"b"}"#,
            options: JSONParseOptions(allowsDuplicateKeys: true)
        )
        #expect(lenient.objectValue?["k"] == "b")
        #expect(lenient.objectValue?.keys == ["k", "x"])
    }

    @Test func largeObjectsAreIndexed() throws {
        let members = (0..<100).map { #""key\#($0)":\#($0)"# }.joined(separator: ",")
        let object = try #require(try JSONValue.parse("{\(members)}").objectValue)
        #expect(object.count == 100)
        #expect(object["key0"] == 0)
        #expect(object["key99"] == 99)
        #expect(object["key100"] == nil)
        var copy = object
        copy["key50"] = nil
        copy["new"] = "x"
        #expect(copy["key51"] == 51)
        #expect(copy["key50"] == nil)
        #expect(copy["new"] == "x")
        #expect(copy.keys.last == "new")
    }
}
