/// A member of a JSON object that is missing or cannot be read as the kind asked for.
///
/// The error names the field and the kinds involved, never the field's value: token responses
/// carry secrets.
public struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the field.
    public enum Problem: Sendable, Equatable {
        /// The field is absent (or `null`) but required.
        case missing
        /// The field is present with a value that is not of the expected kind.
        case wrongKind(expected: String, found: String)
    }

    /// The field's key.
    public let key: String
    /// What is wrong with it.
    public let problem: Problem

    /// Creates an error about `key`.
    public init(key: String, problem: Problem) {
        self.key = key
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .missing:
            "the field \"\(key)\" is missing"
        case .wrongKind(let expected, let found):
            "the field \"\(key)\" should be \(expected), but it is \(found)"
        }
    }
}
