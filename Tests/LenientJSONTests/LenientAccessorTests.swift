import LenientJSON
import Testing

/// Parses `{"field": <value>}`, with or without a UTF-8 byte-order mark in front.
private func field(_ valueText: String, bom: Bool) throws -> JSONObject {
    let document = #"{"field": \#(valueText)}"#
    let bytes = (bom ? [0xEF, 0xBB, 0xBF] : []) + Array(document.utf8)
    return try #require(try JSONValue.parse(bytes).objectValue)
}

@Suite struct LenientAccessorTests {
    @Test(arguments: [false, true])
    func integerFromNumberStringAndIntegralDouble(bom: Bool) throws {
        #expect(try field("3600", bom: bom).integer("field") == 3600)
        #expect(try field(#""3600""#, bom: bom).integer("field") == 3600)
        #expect(try field("3600.0", bom: bom).integer("field") == 3600)
        #expect(try field(#"" 3600 ""#, bom: bom).integer("field") == 3600)
        #expect(try field("-5", bom: bom).integer("field") == -5)
        #expect(try field("3.6e3", bom: bom).integer("field") == 3600)
    }

    @Test(arguments: [false, true])
    func integerRejectsFractionsWordsAndOtherKinds(bom: Bool) throws {
        for text in [
            "3600.5", #""abc""#, #""3600.5""#, #""""#, "true", "[3600]", "{}", #""0x10""#, #""inf""#, #""nan""#,
        ] {
            #expect(
                throws: JSONFieldError(
                    key: "field",
                    problem: .wrongKind(
                        expected: "an integer", found: try field(text, bom: bom)["field"]?.kindName ?? "")), "\(text)"
            ) {
                _ = try field(text, bom: bom).integer("field")
            }
        }
        #expect(JSONValue.double(1e300).lenientInteger == nil)
        #expect(JSONValue.string("99999999999999999999").lenientInteger == nil)
    }

    @Test(arguments: [false, true])
    func boolFromBoolAndStrings(bom: Bool) throws {
        #expect(try field("true", bom: bom).bool("field") == true)
        #expect(try field("false", bom: bom).bool("field") == false)
        #expect(try field(#""true""#, bom: bom).bool("field") == true)
        #expect(try field(#""True""#, bom: bom).bool("field") == true)
        #expect(try field(#""FALSE""#, bom: bom).bool("field") == false)
        #expect(throws: JSONFieldError.self) { try field(#""yes""#, bom: bom).bool("field") }
        #expect(throws: JSONFieldError.self) { try field("1", bom: bom).bool("field") }
    }

    @Test(arguments: [false, true])
    func stringListFromArraySpacesAndCommas(bom: Bool) throws {
        let expected = ["openid", "profile", "email"]
        #expect(try field(#"["openid","profile","email"]"#, bom: bom).stringList("field") == expected)
        #expect(try field(#""openid profile email""#, bom: bom).stringList("field") == expected)
        #expect(try field(#""openid,profile,email""#, bom: bom).stringList("field") == expected)
        #expect(try field(#""openid, profile,  email ""#, bom: bom).stringList("field") == expected)
        #expect(try field(#""repo,gist""#, bom: bom).stringList("field") == ["repo", "gist"])
        #expect(try field(#""""#, bom: bom).stringList("field") == [])
        #expect(try field("[]", bom: bom).stringList("field") == [])
        #expect(throws: JSONFieldError.self) { try field(#"["a", 1]"#, bom: bom).stringList("field") }
        #expect(throws: JSONFieldError.self) { try field("42", bom: bom).stringList("field") }
    }

    @Test(arguments: [false, true])
    func stringFromStringOrNumber(bom: Bool) throws {
        #expect(try field(#""abc""#, bom: bom).string("field") == "abc")
        #expect(try field("583231", bom: bom).string("field") == "583231")
        #expect(try field("12.0", bom: bom).string("field") == "12")
        #expect(try field("1.5", bom: bom).string("field") == "1.5")
        #expect(throws: JSONFieldError.self) { try field("true", bom: bom).string("field") }
        #expect(throws: JSONFieldError.self) { try field("{}", bom: bom).string("field") }
    }

    @Test(arguments: [false, true])
    func absentIsDistinguishedFromNull(bom: Bool) throws {
        let null = try field("null", bom: bom)
        #expect(null.contains("field"))
        #expect(null["field"] == .null)
        #expect(null["field"]?.isNull == true)
        #expect(null["other"] == nil)
        #expect(!null.contains("other"))
        // Typed readers treat both as "no value"; required readers as missing.
        #expect(try null.integer("field") == nil)
        #expect(try null.integer("other") == nil)
        #expect(throws: JSONFieldError(key: "field", problem: .missing)) { try null.requiredString("field") }
        #expect(throws: JSONFieldError(key: "other", problem: .missing)) { try null.requiredInteger("other") }
    }

    @Test func requiredReadersReturnValues() throws {
        let object = try #require(
            try JSONValue.parse(#"{"access_token":"t","expires_in":"60","empty":""}"#).objectValue)
        #expect(try object.requiredString("access_token") == "t")
        #expect(try object.requiredInteger("expires_in") == 60)
        #expect(throws: JSONFieldError(key: "empty", problem: .missing)) { try object.requiredString("empty") }
    }

    @Test func fieldErrorsNameTheFieldNotTheValue() throws {
        let object = try #require(try JSONValue.parse(#"{"expires_in":"secret-looking-value"}"#).objectValue)
        do {
            _ = try object.integer("expires_in")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("expires_in"))
            #expect(error.description.contains("string"))
            #expect(!error.description.contains("secret-looking-value"))
        }
    }

    @Test func nestedObjectsAndArrays() throws {
        let object = try #require(try JSONValue.parse(#"{"address":{"country":"NL"},"keys":[1,2]}"#).objectValue)
        #expect(try object.object("address")?["country"] == "NL")
        #expect(try object.array("keys")?.count == 2)
        #expect(throws: JSONFieldError.self) { try object.object("keys") }
    }
}
