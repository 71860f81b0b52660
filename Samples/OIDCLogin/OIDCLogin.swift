// oidc-login: sign in to any OpenID Connect server from the command line.
//
//   oidc-login login --issuer https://id.example.com --client-id my-cli
//   oidc-login status --json
import ArgumentParser
import NativeAuth
import NativeAuthCommands

@main
struct OIDCLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "oidc-login",
        abstract: "Sign in to an OpenID Connect provider and keep the tokens.",
        discussion: """
            Example:
              oidc-login login --issuer https://id.example.com --client-id my-cli
              oidc-login api /me
            Register http://127.0.0.1/callback as the client's redirect URI. Servers that follow
            RFC 8252 §7.3 then accept it on any port; one that matches redirect URIs exactly needs
            http://127.0.0.1:PORT/callback registered, and --port PORT on login and logout.
            """,
        subcommands: OIDCLogin.standardCommands
    )

    static let toolName = "oidc-login"
    static let defaultProvider = GenericOIDCProvider.id

    static let providers: [any AuthProvider.Type] = [GenericOIDCProvider.self]
}
