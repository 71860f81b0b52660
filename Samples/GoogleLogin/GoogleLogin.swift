// google-login: sign in with a Google account from the command line.
//
//   google-login login --client-id 1234-abc.apps.googleusercontent.com --client-secret-file SECRET_FILE
//   google-login login --device --client-id … --client-secret-file SECRET_FILE
//   google-login userinfo
import ArgumentParser
import NativeAuth
import NativeAuthCommands
import NativeAuthGoogle

@main
struct GoogleLogin: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "google-login",
        abstract: "Sign in with a Google account and keep the tokens.",
        discussion: """
            Example:
              google-login login --client-id 1234-abc.apps.googleusercontent.com --client-secret-file ~/.config/nativeauth/client-secret
              google-login userinfo
            Use a "Desktop app" OAuth client: Google accepts any loopback port for it. Its client
            secret is not secret (anyone with the binary has it); PKCE protects the sign-in.
            --issuer overrides https://accounts.google.com (for tests).
            """,
        subcommands: GoogleLogin.standardCommands
    )

    static let toolName = "google-login"
    static let defaultProvider = GoogleProvider.id

    static let providers: [any AuthProvider.Type] = [GoogleProvider.self]
}
