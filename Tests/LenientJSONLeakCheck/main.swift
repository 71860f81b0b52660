// Drives LenientJSON through its parse, encode and error paths so that CI can run it under
// valgrind: every json_t must be released exactly once, also when parsing or encoding fails
// half-way. Exits non-zero if a path does not behave as expected.
import LenientJSON

var failures = 0

@MainActor func expectParses(_ text: String, options: JSONParseOptions = JSONParseOptions()) {
    do {
        let value = try JSONValue.parse(text, options: options)
        _ = try value.encoded()
        _ = try value.encoded(sortedKeys: true)
    } catch {
        print("unexpected failure for \(text.prefix(40)): \(error)")
        failures += 1
    }
}

@MainActor func expectParseError(_ bytes: [UInt8], options: JSONParseOptions = JSONParseOptions()) {
    do {
        _ = try JSONValue.parse(bytes, options: options)
        print("unexpected success for \(bytes.prefix(40))")
        failures += 1
    } catch {
        _ = error.description
    }
}

@MainActor func expectEncodeError(_ value: JSONValue) {
    do {
        _ = try value.encoded()
        print("unexpected encoding success")
        failures += 1
    } catch {
        _ = error.description
    }
}

let wide =
    "{"
    + (0..<50).map { #""k\#($0)":{"kty":"RSA","n":"\#($0)","e":"AQAB","list":[1,2.5,true,null]}"# }.joined(
        separator: ",") + "}"
let deep = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)

for _ in 0..<50 {
    // Successful parses of every kind, with a byte-order mark, big integers and NUL in strings.
    expectParses(#"{"access_token":"abc","expires_in":"3600","scope":"a b","ok":true,"n":null,"d":1.5}"#)
    expectParses("\u{FEFF}  [1, \"two\", {\"three\": [3]}] ")
    expectParses(#"{"huge": 123456789012345678901234567890, "small": 1}"#)
    expectParses(#""nul \u0000 inside""#)
    expectParses(wide)
    expectParses(#"{"k":1,"k":2}"#, options: JSONParseOptions(allowsDuplicateKeys: true))

    // Errors inside jansson.
    for text in [#"{"a": tru}"#, "", "[1,2", #"{"a":1} x"#, #"{"a":1,"a":2}"#, #"{"a\u0000":1}"#, "[1,]"] {
        expectParseError(Array(text.utf8))
    }
    expectParseError(
        Array(#"{"huge": 123456789012345678901234567890}"#.utf8), options: JSONParseOptions(bigIntegers: .reject))
    expectParseError([0x22, 0xC3, 0x28, 0x22])
    expectParseError(Array((String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000)).utf8))
    // Errors after jansson built a tree: the depth limit is checked while converting it.
    expectParseError(Array(deep.utf8), options: JSONParseOptions(maxDepth: 4))
    expectParseError(Array(#"{"a":{"b":{"c":{"d":{"e":{}}}}}}"#.utf8), options: JSONParseOptions(maxDepth: 3))
    // Refused before parsing.
    expectParseError(Array(wide.utf8), options: JSONParseOptions(maxBytes: 100))

    // Encoding failures part-way through a tree.
    expectEncodeError(["a": 1, "b": ["c": [1, 2, .double(.nan)]], "d": "after"])
    expectEncodeError([1, "x", ["ok": true, "bad\u{0}key": 1]])
    expectEncodeError(.double(.infinity))
}

if failures > 0 {
    print("\(failures) unexpected results")
    exitWithFailure()
}
print("LenientJSON leak check: all paths ran")

func exitWithFailure() -> Never {
    fatalError("LenientJSON leak check failed")
}
