public import ArgumentParser
internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthPresenters

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
            try AccessTokenOverride.refuse("refresh")
            let authenticator = try await options.makeAuthenticator()
            let tokens = try await authenticator.refresh()
            let until = tokens.expiresAt.map { " until \($0.formatted(.iso8601))" } ?? ""
            CommandSupport.printLine("Refreshed; the access token is valid\(until)")
        }
    }
}
