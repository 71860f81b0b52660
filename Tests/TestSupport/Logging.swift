import Foundation
public import Logging
public import Testing

/// The trait every suite of NativeAuth's tests carries: `@Suite(.testLogging)`.
///
/// Before the suite's first test it sets up swift-log, once per test process: with
/// `NATIVEAUTH_LOG_LEVEL` set (`trace` … `critical`), every `Logger` the library creates logs to
/// stderr at that level, as an application that turns on debug logging would see it.
/// `scripts/test.sh` runs the suite at `debug` and searches the output for every token it issued
/// (redaction). Without the variable the logging system keeps its default.
///
/// Swift Testing has no hook that runs before every test of a process, so each suite names the
/// trait; `EverySuiteTests` fails for a suite that forgets it.
public struct TestLogging: SuiteTrait, TestScoping {
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        Self.bootstrap()
        try await function()
    }

    /// Bootstraps the logging system, the first time only (it may be bootstrapped once).
    public static func bootstrap() {
        _ = bootstrapped
    }

    private static let bootstrapped: Bool = {
        guard let name = ProcessInfo.processInfo.environment["NATIVEAUTH_LOG_LEVEL"],
            let level = Logger.Level(rawValue: name.lowercased())
        else { return false }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return true
    }()
}

extension Trait where Self == TestLogging {
    /// Logs at `NATIVEAUTH_LOG_LEVEL` for the suite's tests (see ``TestLogging``).
    public static var testLogging: TestLogging { TestLogging() }
}

/// A log handler that keeps every message, for tests of what is logged.
public struct RecordingLogHandler: LogHandler {
    public let messages = Shared<[(Logger.Level, String)]>([])
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init() {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        messages.update { $0.append((event.level, event.message.description)) }
    }
}
