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

    static func makeRegistry() throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try registry.register(GitHubProvider.self)
        return registry
    }

    /// `api PATH` goes to GitHub's REST API, not to the web host.
    static func apiBaseURL(for provider: any AuthProvider) -> URL? {
        (provider as? GitHubProvider)?.apiBaseURL
    }

    /// git's credential helper answers for GitHub's web host as `x-access-token`.
    static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults {
        guard let github = provider as? GitHubProvider else { return GitCredentialDefaults() }
        return GitCredentialDefaults(host: github.host, username: GitHubProvider.gitUsername)
    }
}
