import Foundation
import TestSupport
import Testing

/// The suites of the test targets that use the library carry `.testLogging`, so that the library
/// logs at `NATIVEAUTH_LOG_LEVEL` in every test (the redaction check searches that output). A
/// suite that forgot it would run with logging off, and prove nothing about what it logs.
@Suite(.testLogging) struct EverySuiteTests {
    @Test func everySuiteLogsAtTheTestLevel() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let enumerator = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        var files = 0
        var problems: [String] = []
        for case let file as URL in enumerator where file.pathExtension == "swift" {
            let relative = String(file.path.dropFirst(tests.path.count + 1))
            // LenientJSON's tests never touch the library that logs.
            guard !relative.hasPrefix("LenientJSONTests/"), !relative.hasPrefix("TestSupport/") else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            guard text.contains("@Test") else { continue }
            files += 1
            let declarations = text.split(separator: "\n").filter {
                $0.trimmingCharacters(in: .whitespaces).hasPrefix("@Suite")
            }
            for line in declarations {
                if !line.contains(".testLogging") { problems.append("\(relative): \(line)") }
            }
            if declarations.isEmpty { problems.append("\(relative): tests outside a suite") }
        }
        #expect(files >= 20, "the test sources were found")
        #expect(problems == [])
    }
}
