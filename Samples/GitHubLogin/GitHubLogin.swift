// github-login: sign in to GitHub (or a GitHub Enterprise Server) from the command line.
//
//   github-login login --client-id Iv1.0123456789abcdef --client-secret-file SECRET_FILE
//   github-login login --device --client-id Iv1.0123456789abcdef
//   github-login api /user
import ArgumentParser
import Foundation
import NativeAuth
import NativeAuthCommands
import NativeAuthGitHub

@main
struct GitHubLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "github-login",
        abstract: "Sign in to GitHub and keep the tokens.",
        discussion: """
            Example:
              github-login login --client-id Iv1.0123456789abcdef --client-secret-file ~/.config/nativeauth/client-secret
              github-login api /user
            Register the app's callback URL as http://127.0.0.1/callback (any port is accepted).
            """,
        subcommands: GitHubLogin.standardCommands
    )

    static let toolName = "github-login"
    static let defaultProvider = GitHubProvider.id

    static let providers: [any AuthProvider.Type] = [GitHubProvider.self]
}
