// cognito-login: sign in to an Amazon Cognito user pool from the command line.
//
//   cognito-login login --region eu-west-1 --user-pool-id eu-west-1_AbCdEf123 --domain myapp \
//       --client-id 1example23456789 --logout-uri https://example.com/signed-out
//   cognito-login logout
import ArgumentParser
import NativeAuth
import NativeAuthCognito
import NativeAuthCommands

@main
struct CognitoLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "cognito-login",
        abstract: "Sign in to an Amazon Cognito user pool and keep the tokens.",
        discussion: """
            Example:
              cognito-login login --region eu-west-1 --user-pool-id eu-west-1_AbCdEf123 --domain myapp \\
                  --client-id 1example23456789 --logout-uri https://example.com/signed-out
            Add http://127.0.0.1/callback to the app client's callback URLs, and the --logout-uri to
            its sign-out URLs.
            """,
        subcommands: CognitoLogin.standardCommands
    )

    static let toolName = "cognito-login"
    static let defaultProvider = CognitoProvider.id

    static let providers: [any AuthProvider.Type] = [CognitoProvider.self]
}
