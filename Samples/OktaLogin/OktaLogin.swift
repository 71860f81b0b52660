// okta-login: sign in to an Okta org from the command line.
//
//   okta-login login --domain acme.okta.com --client-id 0oa1b2c3d4e5f6g7h8i9
//   okta-login login --domain acme.okta.com --authorization-server org --client-id …
import ArgumentParser
import NativeAuth
import NativeAuthCommands
import NativeAuthOkta

@main
struct OktaLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "okta-login",
        abstract: "Sign in to an Okta org and keep the tokens.",
        discussion: """
            Example:
              okta-login login --domain acme.okta.com --client-id 0oa1b2c3d4e5f6g7h8i9
            Use a Native app integration with http://127.0.0.1/callback as its sign-in redirect URI
            and Refresh Token among its grant types. --authorization-server is default (the
            default), a custom server's id, or org (whose tokens are for Okta's APIs only).
            """,
        subcommands: OktaLogin.standardCommands
    )

    static let toolName = "okta-login"
    static let defaultProvider = OktaProvider.id

    static let providers: [any AuthProvider.Type] = [OktaProvider.self]
}
