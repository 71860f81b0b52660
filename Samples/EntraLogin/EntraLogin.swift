// entra-login: sign in to Microsoft Entra ID (work, school or personal Microsoft accounts).
//
//   entra-login login --tenant organizations --client-id 00000000-0000-0000-0000-000000000000 \
//       --scope "openid profile User.Read"
//   entra-login api /me
import ArgumentParser
import Foundation
import NativeAuth
import NativeAuthCommands
import NativeAuthEntra

@main
struct EntraLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "entra-login",
        abstract: "Sign in to Microsoft Entra ID and keep the tokens.",
        discussion: """
            Example:
              entra-login login --tenant organizations --client-id 00000000-0000-0000-0000-000000000000 \\
                  --scope "openid profile User.Read"
              entra-login api /me
            Register the app with the redirect URI http://localhost under "Mobile and desktop
            applications" (Entra takes any port for it) and turn on "Allow public client flows" for
            --device. --tenant is a tenant id or domain, or common, organizations or consumers.
            `api PATH` calls Microsoft Graph (--graph-url for another cloud).
            """,
        subcommands: EntraLogin.standardCommands
    )

    static let toolName = "entra-login"
    static let defaultProvider = EntraProvider.id

    static let providers: [any AuthProvider.Type] = [EntraProvider.self]
}
