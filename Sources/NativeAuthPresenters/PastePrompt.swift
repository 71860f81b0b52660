internal import Foundation
@_spi(Provider) internal import NativeAuth

/// Reads pastes until one completes the sign-in.
struct PastePrompt: Sendable {
    let reader: any LineReader
    let output: ConsoleOutput
    let redirectURI: URL
    let maximumAttempts: Int
    let acceptsBareCode: Bool

    /// What a pasted line is.
    enum Interpretation: Equatable {
        case callback(URL)
        case code(String)
        case empty
        case problem(String)
    }

    /// The outcome of the first paste the handler completes, a failure after too many wrong
    /// pastes, or `nil` at the end of the input or on cancellation.
    func run<Outcome: Sendable>(
        handler: @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
    ) async -> Result<Outcome, AuthError>? {
        var wrong = 0
        var again = ""
        while true {
            let line: String?
            do {
                line = try await TerminalQuestion(again, timeout: nil).answer(from: reader, writing: output.write)
            } catch is CancellationError {
                return nil
            } catch {
                return .failure(
                    error as? AuthError
                        ?? AuthError(.loginCancelled, "cannot read the pasted input", operation: .authorization)
                )
            }
            guard let line else { return nil }
            let problem: String
            switch interpret(line) {
            case .empty:
                continue
            case .problem(let text):
                problem = text
            case .callback(let url):
                switch handler(.redirect(url)) {
                case .complete(let result): return result
                case .ignore:
                    problem =
                        "that address belongs to another sign-in (its state does not match this one);"
                        + " paste the address from the browser tab this sign-in opened"
                }
            case .code(let code):
                switch handler(.code(code)) {
                case .complete(let result): return result
                case .ignore: problem = "that code was not accepted"
                }
            }
            wrong += 1
            if wrong >= maximumAttempts {
                return .failure(
                    AuthError(
                        .authorizationFailed,
                        "\(wrong) pastes were not the result of this sign-in: \(problem)",
                        hint: "sign in again, and paste the address the browser ends on",
                        operation: .authorization
                    )
                )
            }
            again = "That did not work: \(problem). Try again (\(maximumAttempts - wrong) left):"
        }
    }

    /// Reads a pasted line: trims whitespace and one pair of surrounding quotes, then decides
    /// whether it is a redirect URL, a query string, a bare code, or something else.
    func interpret(_ line: String) -> Interpretation {
        var text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        for (open, close) in [("\"", "\""), ("'", "'"), ("<", ">")]
        where text.count >= 2 && text.hasPrefix(open) && text.hasSuffix(close) {
            text = String(text.dropFirst().dropLast()).trimmingCharacters(in: .whitespacesAndNewlines)
            break
        }
        if text.isEmpty { return .empty }
        let expected = redirectURI.absoluteString.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        if text.contains("://") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            else {
                return .problem("that is not a web address")
            }
            guard url.path == redirectURI.path else {
                return .problem("that is not the redirect address; it should start with \(expected)")
            }
            guard hasResponse(url.query) else {
                return .problem("that address carries no code or error; copy it after approving in the browser")
            }
            return .callback(url)
        }
        let query = text.hasPrefix("?") ? String(text.dropFirst()) : text
        if query.contains("=") {
            guard hasResponse(query), let url = URL(string: expected + "?" + query) else {
                return .problem("that carries no code or error; paste the whole address the browser ends on")
            }
            return .callback(url)
        }
        guard acceptsBareCode else {
            return .problem("paste the whole address the browser ends on (it starts with \(expected))")
        }
        guard text.utf8.count <= 4096, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .problem("that is neither the address the browser ends on nor a code")
        }
        return .code(text)
    }

    private func hasResponse(_ query: String?) -> Bool {
        let names = Set(FormURLEncoding.decode(query ?? "").map(\.name))
        return names.contains("code") || names.contains("error")
    }
}
