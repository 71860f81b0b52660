import Foundation
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// A hostile authorization server's text cannot steer the terminal: rewrite a line, plant a link
/// (OSC 8) or set the clipboard (OSC 52).
@Suite(.testLogging) struct TerminalTextTests {
    static let osc52 = "\u{1B}]52;c;ZXZpbCBjb21tYW5k\u{07}"
    static let rewrite = "\u{1B}[1A\u{1B}[2K\rOpen: https://evil.example/device"
    static let link = "\u{1B}]8;;https://evil.example\u{1B}\\click\u{1B}]8;;\u{1B}\\"
    static let c1 = "\u{9B}2K\u{9D}52;c;eA==\u{9C}"

    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || (0x7F..<0xA0).contains($0.value) }
    }

    @Test func controlCharactersBecomeVisibleText() {
        #expect(TerminalText.sanitized("plain text\twith a tab") == "plain text\twith a tab")
        #expect(TerminalText.sanitized("\u{1B}[31mred") == "^[[31mred")
        #expect(TerminalText.sanitized("a\nb\rc\u{7F}") == "a^Jb^Mc^?")
        #expect(TerminalText.sanitized("\u{9B}x") == "<U+009B>x")
        // Bidirectional overrides and isolates reorder what follows ("Trojan Source"): shown as code points.
        #expect(TerminalText.sanitized("alice\u{202E}nimda") == "alice<U+202E>nimda")
        #expect(TerminalText.sanitized("\u{2066}x\u{2069}\u{200F}") == "<U+2066>x<U+2069><U+200F>")
        #expect(TerminalText.sanitized("👩‍💻 Zoë") == "👩‍💻 Zoë", "other format characters (ZWJ) stay")
        for hostile in [Self.osc52, Self.rewrite, Self.link, Self.c1] {
            #expect(!Self.hasControls(TerminalText.sanitized(hostile)))
        }
    }

    /// The device flow shows the server's `user_code`: no control sequence in it reaches the output.
    @Test func aUserCodeWithControlSequencesIsShownInert() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let display = TerminalDeviceCodeDisplay(
            output: ConsoleOutput { line in lines.withLockedValue { $0.append(line) } })
        let authorization = DeviceAuthorization(
            deviceCode: "device-code",
            userCode: "WDJB" + Self.osc52 + Self.rewrite,
            verificationURI: try #require(URL(string: "https://idp.example/device")),
            expiresIn: 600
        )
        await display.show(authorization)
        let shown = lines.withLockedValue { $0 }
        #expect(!shown.isEmpty)
        #expect(!shown.contains(where: Self.hasControls))
        #expect(shown.contains { $0.contains("WDJB^[]52;c;") })
    }

    /// An error built from a server's `error` and `error_description` (or any text) is inert in
    /// every form a program, a log or a terminal shows.
    @Test func errorTextsFromAServerAreInert() {
        let error = AuthError(
            .authorizationFailed, "the server refused: " + Self.rewrite, hint: Self.link,
            oauthError: "access_denied" + Self.c1, oauthErrorDescription: Self.osc52)
        for text in [
            error.description, error.message, error.hint ?? "", error.oauthError ?? "",
            error.oauthErrorDescription ?? "",
        ] {
            #expect(!Self.hasControls(text), "\(text.debugDescription)")
        }
    }
}
