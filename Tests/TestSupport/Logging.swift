import Foundation
import Logging

/// Called once when a test runner starts (Tests/CTestSupport/bootstrap.c). With
/// `NATIVEAUTH_LOG_LEVEL` set (`trace` … `critical`), every `Logger` the library creates in the
/// tests logs to stderr at that level, as an application that turns on debug logging would see it:
/// `scripts/test.sh` runs the suite at `debug` and searches the output for every token it issued.
/// Without it the logging system keeps its default.
@_cdecl("nativeauth_tests_bootstrap_logging")
func bootstrapLoggingForTests() {
    guard let name = ProcessInfo.processInfo.environment["NATIVEAUTH_LOG_LEVEL"],
        let level = Logger.Level(rawValue: name.lowercased())
    else { return }
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}
