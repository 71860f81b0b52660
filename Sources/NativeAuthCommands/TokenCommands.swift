public import ArgumentParser
internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import NativeAuth

/// `token`: prints a valid access token, refreshing if needed — exactly one line, for piping.
public struct TokenCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "token", abstract: "Print a valid access token (refreshing if needed).",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try await options.makeAuthenticator()
            CommandSupport.printLine(try await authenticator.accessToken())
        }
    }
}

/// `refresh`: refreshes the tokens now.
public struct RefreshCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "refresh", abstract: "Refresh the tokens now.", discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try await options.makeAuthenticator()
            let tokens = try await authenticator.refresh()
            let until = tokens.expiresAt.map { " until \($0.formatted(.iso8601))" } ?? ""
            CommandSupport.printLine("Refreshed; the access token is valid\(until)")
        }
    }
}

/// `api PATH|URL`: an authorized GET; prints the body, exits non-zero on HTTP ≥ 400.
///
/// A path is resolved against the provider's API base (``NativeAuthTool/apiBaseURL(for:)``).
public struct APICommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "api", abstract: "Send an authorized GET and print the response body.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Argument(help: "A URL, or a path relative to the provider's API base.")
    var target: String

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try await options.makeAuthenticator()
            let url: URL
            if target.contains("://") {
                guard let absolute = URL(string: target) else {
                    throw AuthError(.configurationInvalid, "\(target) is not a URL")
                }
                url = absolute
            } else {
                guard let base = Tool.apiBaseURL(for: authenticator.provider),
                    let relative = URL(
                        string: target.hasPrefix("/") ? String(target.dropFirst()) : target,
                        relativeTo: base.appendingSlash)
                else {
                    throw AuthError(.configurationInvalid, "the provider has no API base; give a full URL")
                }
                url = relative.absoluteURL
            }
            let (response, body) = try await authenticator.send(HTTPRequest(method: .get, url: url))
            FileHandle.standardOutput.write(body)
            if response.status.code >= 400 {
                CommandSupport.report(
                    AuthError(
                        .requestFailed, "the API answered HTTP \(response.status.code)", status: response.status.code),
                    tool: Tool.self
                )
                throw ExitCode(1)
            }
        }
    }
}

/// `userinfo [--json]`: the userinfo claims.
public struct UserInfoCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "userinfo", abstract: "Show the claims of the signed-in account.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Flag(name: .long, help: "Print the claims as one JSON object.")
    var json = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try await options.makeAuthenticator()
            let info = try await authenticator.userInfo()
            if json {
                CommandSupport.printLine(try JSONValue.object(info.claims).encodedString())
            } else {
                for member in info.claims {
                    let value = member.value.lenientString ?? (try? member.value.encodedString()) ?? ""
                    CommandSupport.printLine("\(member.key): \(value)")
                }
            }
        }
    }
}

extension URL {
    fileprivate var appendingSlash: URL {
        absoluteString.hasSuffix("/") ? self : URL(string: absoluteString + "/") ?? self
    }
}
