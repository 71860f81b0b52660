public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// `switch NAME`: makes another signed-in account the active one.
///
/// Commands act on the active account unless `--account`, `NATIVEAUTH_ACCOUNT` or a
/// `.nativeauth.json` names another; switching changes only the active one.
public struct SwitchCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "switch", abstract: "Make another signed-in account the active one.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: CommandOptions<Tool, AccountSettings>

    @Argument(help: "The account (as `status --all` lists it).")
    var name: String

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let prepared = try await options.prepare(use: .none)
            try await prepared.accounts.switchActive(to: name)
            CommandSupport.printLine("Active account: \(name)")
            if let named = prepared.named, named.name != name {
                CommandSupport.notice("\(named.source) still chooses \(named.name) wherever it applies")
            }
        }
    }
}
