public import Foundation

/// Where presenters write what the person must see: the URL to open, hints, prompts.
public struct ConsoleOutput: Sendable {
    /// Writes one message.
    public let write: @Sendable (String) -> Void

    /// Creates an output from a closure. Every message reaches it with its control characters made
    /// visible (`^[` for ESC): a server's `user_code` or error text cannot steer the terminal.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = { write(TerminalText.sanitized($0)) }
    }

    /// Standard error, one message per line (stdout stays free for the program's output).
    public static let standardError = ConsoleOutput { message in
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// The query parameters that carry a token and are never printed: `id_token_hint`, which
    /// ``Authenticator/logout(presenter:endingSessionWhenSignedOut:)`` puts in an end-session URL.
    public static let tokenBearingParameters: Set<String> = ["id_token_hint"]

    /// Writes `url` for the person to open, as one message, without its
    /// ``tokenBearingParameters``. A presenter hands the whole URL to a browser, but what it
    /// prints can end up in a terminal's scrollback, a CI log or a bug report. Without
    /// `id_token_hint` an end-session page asks the person to confirm the logout.
    public func writeURL(_ url: URL) {
        write(Self.printable(url))
    }

    /// `url` as text without its ``tokenBearingParameters``; `url` unchanged when it has none.
    public static func printable(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let query = components.percentEncodedQuery
        else { return url.absoluteString }
        let fields = FormURLEncoding.decode(query)
        guard fields.contains(where: { tokenBearingParameters.contains($0.name) }) else { return url.absoluteString }
        let kept = fields.filter { !tokenBearingParameters.contains($0.name) }
        components.percentEncodedQuery = kept.isEmpty ? nil : FormURLEncoding.encode(kept)
        if let text = components.string { return text }
        components.percentEncodedQuery = nil
        return components.string ?? "(the URL cannot be shown without the token it holds)"
    }
}
