// keycloak-login: sign in to a Keycloak realm from the command line.
//
//   keycloak-login login --base-url https://sso.example.com --realm myrealm --client-id my-cli
//   keycloak-login status
import ArgumentParser
import NativeAuth
import NativeAuthCommands
import NativeAuthKeycloak

@main
struct KeycloakLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "keycloak-login",
        abstract: "Sign in to a Keycloak realm and keep the tokens.",
        discussion: """
            Example:
              keycloak-login login --base-url https://sso.example.com --realm myrealm --client-id my-cli
              keycloak-login login --device --offline-tokens true …
            Make the client public (Client authentication off) with the Standard flow, and add
            http://127.0.0.1/* to its valid redirect URIs and its valid post logout redirect URIs.
            --idp-hint goes straight to one identity provider of the realm (kc_idp_hint).
            """,
        subcommands: KeycloakLogin.standardCommands
    )

    static let toolName = "keycloak-login"
    static let defaultProvider = KeycloakProvider.id

    static let providers: [any AuthProvider.Type] = [KeycloakProvider.self]
}
