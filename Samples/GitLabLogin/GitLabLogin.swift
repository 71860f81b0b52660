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

    static let providers: [any AuthProvider.Type] = [GitLabProvider.self]
}
