// auth0-login: sign in to an Auth0 tenant from the command line.
//
//   auth0-login login --domain acme.eu.auth0.com --client-id CLIENT_ID --audience https://api.acme.com
//   auth0-login api https://api.acme.com/orders
import ArgumentParser
import NativeAuth
import NativeAuthAuth0
import NativeAuthCommands

@main
struct Auth0Login: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "auth0-login",
        abstract: "Sign in to an Auth0 tenant and keep the tokens.",
        discussion: """
            Example:
              auth0-login login --domain acme.eu.auth0.com --client-id CLIENT_ID --audience https://api.acme.com
              auth0-login api https://api.acme.com/orders
            Use a Native application with http://127.0.0.1/callback among its Allowed Callback URLs
            and Allowed Logout URLs, and turn on Refresh Token Rotation. --audience is the API's
            identifier: without it the access token is opaque and only Auth0's /userinfo takes it.
            --logout legacy uses /v2/logout instead of /oidc/logout.
            """,
        subcommands: Auth0Login.standardCommands
    )

    static let toolName = "auth0-login"
    static let defaultProvider = Auth0Provider.id

    static let providers: [any AuthProvider.Type] = [Auth0Provider.self]
}
