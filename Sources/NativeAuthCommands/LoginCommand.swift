public import ArgumentParser
internal import Foundation
internal import NativeAuth

/// `login`: signs in through the browser and stores the tokens.
///
/// Prints `Signed in as …` on stdout. The authorization URL goes to stderr when no browser is
/// opened (`--no-browser`) or none can be launched.
public struct LoginCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "login", abstract: "Sign in through the browser and store the tokens.")
    }

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .long, help: "The loopback port to receive the callback on (default: a free one).")
    var port: Int = 0

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser; print the URL to open instead.")
    var noBrowser = false

    @Option(name: .long, help: "Seconds to wait for the sign-in to finish.")
    var timeout: Int = 300

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try CommandSupport.makeAuthenticator(Tool.self, options: connection)
            let presenter = LoopbackPresenter(
                configuration: LoopbackPresenter.Configuration(
                    port: port,
                    timeout: .seconds(max(1, timeout)),
                    opener: noBrowser ? nil : SystemBrowserOpener()
                )
            )
            let tokens = try await authenticator.login(presenter: presenter)
            CommandSupport.printLine("Signed in as \(tokens.displayName ?? tokens.subject ?? "an unnamed account")")
        }
    }
}
