import Foundation
import NativeAuthPresenters
import NativeAuthTesting
import TestSupport
import Testing

/// The one terminal question: its prompt, its yes, and its deadline, after which a line typed is
/// not this question's answer.
@Suite(.testLogging) struct TerminalQuestionTests {
    @Test(arguments: [("y", true), ("Yes ", true), ("YES", true), ("n", false), ("", false), ("yes please", false)])
    func onlyYAndYesAreYes(line: String, yes: Bool) async throws {
        let written = Shared("")
        let reader = ScriptedLineReader([line])
        let answer = try await TerminalQuestion("Allow?").isYes(from: reader) { text in written.update { $0 += text } }
        #expect(answer == yes)
        #expect(written.value == "Allow? [y/N] ")
    }

    @Test func theEndOfTheInputIsNo() async throws {
        #expect(try await TerminalQuestion("Allow?").isYes(from: ScriptedLineReader([nil])) { _ in } == false)
    }

    @Test func noAnswerInTimeIsNoAndALateLineIsLeftForTheNextQuestion() async throws {
        let reader = ScriptedLineReader()
        let question = TerminalQuestion("Allow?", timeout: .milliseconds(100))
        #expect(try await question.isYes(from: reader) { _ in } == false)
        #expect(reader.cancellations == 1, "the read was cancelled at the deadline")
        reader.feed("y")
        #expect(try await TerminalQuestion("Again?").isYes(from: reader) { _ in } == true)
    }

    @Test func aQuestionWithoutADeadlineWaits() async throws {
        let reader = ScriptedLineReader()
        let waiting = Task { try await TerminalQuestion("", timeout: nil).answer(from: reader) { _ in } }
        try await Task.sleep(for: .milliseconds(200))
        reader.feed("the code")
        #expect(try await waiting.value == "the code")
    }
}
