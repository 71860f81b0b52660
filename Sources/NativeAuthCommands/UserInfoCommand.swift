public import ArgumentParser
internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthPresenters

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
