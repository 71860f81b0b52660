public import ArgumentParser
internal import Foundation
internal import NativeAuth
internal import NativeAuthKeyring

/// `logout`: revokes where possible, removes the tokens, and opens (or prints) the end-session URL.
public struct LogoutCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "logout", abstract: "Revoke and remove the tokens, and end the session.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser; print the end-session URL instead.")
    var noBrowser = false

    @Option(name: .long, help: "The loopback port for the post-logout redirect (default: a free one).")
    var port: Int = 0

    @Option(name: .long, help: "Seconds to wait for the end-session round trip.")
    var timeout: Int = 120

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let (authenticator, storage) = try await options.prepare()
            let presenter: LoopbackPresenter? =
                noBrowser
                ? nil
                : LoopbackPresenter(
                    configuration: .init(port: port, callbackPath: "/logged-out", timeout: .seconds(max(1, timeout)))
                )
            let result = try await CommandSupport.cancellingOnSignals {
                try await authenticator.logout(presenter: presenter)
            }
            if let error = result.revocationError {
                CommandSupport.report(error, tool: Tool.self)
            }
            // The same sign-in kept by another backend (files from before the keyring; a keyring
            // item from an earlier --token-storage keyring) goes too.
            for problem in await storage.removeElsewhere(authenticator.key) {
                CommandSupport.warn("could not remove the tokens from every storage: \(problem.message)")
            }
            // The printed URL leaves out id_token_hint (ConsoleOutput.writeURL): no token is ever
            // printed. Providers then ask the person to confirm the logout.
            func show(_ url: URL) {
                ConsoleOutput.standardError.write("Open this URL to end the session at the provider:")
                ConsoleOutput.standardError.writeURL(url)
            }
            if !noBrowser, let url = result.endSessionURL, !result.endSessionCompleted {
                // The provider's logout page does not come back to us (Cognito): just open it.
                do {
                    try await SystemBrowserOpener().open(url)
                } catch {
                    show(url)
                }
            }
            if noBrowser, let url = result.endSessionURL { show(url) }
            CommandSupport.printLine("Signed out")
            if result.revocationError != nil { throw ExitCode(1) }
        }
    }
}
