// gitlab-login: sign in to gitlab.com or a self-managed GitLab from the command line.
//
//   gitlab-login login --client-id APPLICATION_ID --scope "openid read_user api"
//   gitlab-login api /user
//   git config credential.https://gitlab.com.helper "!gitlab-login git-credential"
import ArgumentParser
import Foundation
import NativeAuth
import NativeAuthCommands
import NativeAuthGitLab

@main
struct GitLabLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "gitlab-login",
        abstract: "Sign in to GitLab and keep the tokens.",
        discussion: """
            Example:
              gitlab-login login --client-id APPLICATION_ID --scope "openid read_user api"
              gitlab-login api /user
            Create the application (User settings > Applications) as not confidential, with the
            redirect URI http://127.0.0.1/callback. If the instance refuses the redirect URI on a
            free port (it matches it exactly), register http://127.0.0.1:PORT/callback and pass --port PORT.
            --host for a self-managed instance; --device needs GitLab 17.2 or later.
            """,
        subcommands: GitLabLogin.standardCommands
    )

    static let toolName = "gitlab-login"
    static let defaultProvider = GitLabProvider.id

    static func makeRegistry() throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try registry.register(GitLabProvider.self)
        return registry
    }

    /// `api PATH` goes to `HOST/api/v4`.
    static func apiBaseURL(for provider: any AuthProvider) -> URL? {
        (provider as? GitLabProvider)?.apiBaseURL ?? provider.configuration.issuer
    }

    /// git over HTTPS to the instance takes the token as password for the user `oauth2`.
    static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults {
        GitCredentialDefaults(host: (provider as? GitLabProvider)?.host, username: GitLabProvider.gitUsername)
    }
}
