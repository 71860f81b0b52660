internal import NativeAuth

/// What a conformance suite found wrong: every requirement that failed, each in one sentence.
///
/// The suites throw it from `run()` after running every check, so one run shows everything that
/// is wrong, not only the first thing.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// What was checked: `TokenStore FileTokenStore`, `ErrorMapper GitHubErrorMapper`.
    public let subject: String
    /// The requirements that failed, each with what was seen.
    public let failures: [String]

    public var description: String {
        "\(subject) does not conform (\(failures.count) of its requirements failed):\n"
            + failures.map { "- \($0)" }.joined(separator: "\n")
    }
}

/// Collects the failures of one suite run.
final class ConformanceReport: Sendable {
    private let subject: String
    private let failures = Locked<[String]>([])

    init(_ subject: String) {
        self.subject = subject
    }

    /// Records a failed requirement unless `condition` holds.
    func check(_ condition: Bool, _ requirement: @autoclosure () -> String) {
        if !condition { fail(requirement()) }
    }

    func fail(_ requirement: String) {
        failures.withLock { $0.append(requirement) }
    }

    /// Runs one check; an error it throws is a failure of `name`.
    func run(_ name: String, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            fail("\(name): threw \(error)")
        }
    }

    /// Throws the failures, when there are any.
    func finish() throws(ConformanceFailure) {
        let failures = failures.withLock { $0 }
        if !failures.isEmpty { throw ConformanceFailure(subject: subject, failures: failures) }
    }
}

/// `body`'s result, or `nil` when it takes longer than `limit`; `body` is then cancelled. A body that
/// ignores cancellation is left running, so that a broken implementation fails the suite instead
/// of hanging it.
func within<T: Sendable>(
    _ limit: Duration,
    _ body: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error>? {
    let task = Task { try await body() }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
        let resumed = Locked(false)
        let resume: @Sendable (Result<T, any Error>?) -> Void = { result in
            let first = resumed.withLock { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: result) }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            task.cancel()
            resume(nil)
        }
        Task {
            let result = await task.result
            timer.cancel()
            resume(result)
        }
    }
}
