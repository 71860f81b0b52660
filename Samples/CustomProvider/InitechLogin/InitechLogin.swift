// initech-login: sign in to Initech Identity (the custom provider sample) from the command line.
//
//   initech-login login --host https://sso.initech.example --client-id my-cli
//   initech-login api /api/reports
//   initech-login logout
import ArgumentParser
import Foundation
import InitechProvider
import NativeAuth
import NativeAuthCommands

@main
struct InitechLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "initech-login",
        abstract: "Sign in to Initech Identity and keep the tokens.",
        discussion: """
            Example:
              initech-login login --host https://sso.initech.example --client-id my-cli
            Register http://127.0.0.1/callback as the app's redirect URI, and as its return_to for logout.
            """,
        subcommands: InitechLogin.standardCommands
    )

    static let toolName = "initech-login"
    static let defaultProvider = InitechProvider.id

    static let providers: [any AuthProvider.Type] = [InitechProvider.self]
}
