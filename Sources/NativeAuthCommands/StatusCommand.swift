public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth
internal import NativeAuthKeyring

/// `status`: what is stored, without a network request and without ever printing a token.
///
/// `--json` prints one object: `signed_in`, `subject`, `expires_at` (ISO 8601 or null), `scope`
/// (array), `has_refresh_token` and `storage` (`backend`: keyring, file or memory; `location`).
/// An empty or missing store is a success (`signed_in: false`).
public struct StatusCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "status", abstract: "Show what is stored (never a token).",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let (authenticator, storage) = try await options.prepare()
            let tokens = try await authenticator.currentTokens()
            if json {
                CommandSupport.printLine(
                    try Self.json(tokens, storage: storage, location: await storage.describedLocation()))
            } else {
                for line in Self.lines(tokens, now: Date()) { CommandSupport.printLine(line) }
                CommandSupport.printLine(await CommandStorage.line(for: storage))
            }
        }
    }

    static func json(_ tokens: TokenSet?, storage: TokenStorage? = nil, location: String? = nil) throws -> String {
        var object = JSONObject()
        object["signed_in"] = .bool(tokens != nil)
        object["subject"] = tokens?.subject.map(JSONValue.string) ?? .null
        object["expires_at"] = tokens?.expiresAt.map { .string($0.formatted(.iso8601)) } ?? .null
        object["scope"] = .array((tokens?.scopes ?? []).map(JSONValue.string))
        object["has_refresh_token"] = .bool(tokens?.refreshToken != nil)
        if let storage {
            object["storage"] = .object([
                "backend": .string(storage.backend.rawValue), "location": .string(location ?? storage.location),
            ])
        }
        return try JSONValue.object(object).encodedString()
    }

    static func lines(_ tokens: TokenSet?, now: Date) -> [String] {
        guard let tokens else { return ["Not signed in."] }
        var lines = ["Signed in as \(tokens.displayName ?? tokens.subject ?? "an unnamed account")"]
        if let subject = tokens.subject { lines.append("Subject: \(subject)") }
        if let expiresAt = tokens.expiresAt {
            let minutes = Int(expiresAt.timeIntervalSince(now) / 60)
            let when = minutes >= 0 ? "in \(minutes) min" : "\(-minutes) min ago"
            lines.append("Access token expires: \(expiresAt.formatted(.iso8601)) (\(when))")
        } else {
            lines.append("Access token expires: not stated")
        }
        lines.append("Scope: \(tokens.scopes.joined(separator: " "))")
        lines.append("Refresh token: \(tokens.refreshToken == nil ? "no" : "yes")")
        return lines
    }
}
