import Foundation
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// Base64url without padding (RFC 4648 §5): the one-pass encoder against Foundation's base64 with
/// the alphabet changed and the padding dropped, for every length up to 100 bytes.
@Suite(.testLogging) struct Base64URLTests {
    @Test func encodingMatchesFoundationsAndDecodesBack() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == expected, "\(length) bytes")
            #expect(Base64URL.decode(encoded) == Data(bytes), "\(length) bytes")
        }
        // RFC 4648 §10's vectors, and the bytes that map to - and _.
        #expect(
            ["", "f", "fo", "foo", "foob", "fooba", "foobar"].map { Base64URL.encode(Array($0.utf8)) } == [
                "", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy",
            ])
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }
}
