// nativeauth: one CLI for every provider compiled in (package traits GitHub, Cognito and Google,
// all on by default; the generic OpenID Connect provider is always there).
//
//   nativeauth login --provider github --client-id Iv1.0123456789abcdef --client-secret …
//   nativeauth login --provider cognito --region eu-west-1 --user-pool-id eu-west-1_AbC --client-id …
//   swift build --traits Cognito        # a nativeauth that links NativeAuthCognito only
import ArgumentParser
import NativeAuth
import NativeAuthCommands

#if GitHub
    import NativeAuthGitHub
#endif
#if Cognito
    import NativeAuthCognito
#endif
#if Google
    import NativeAuthGoogle
#endif

@main
struct NativeAuthCLI: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "nativeauth",
        abstract: "Sign in to any provider compiled in, and keep the tokens.",
        discussion: """
            Example:
              nativeauth login --provider github --client-id Iv1.0123456789abcdef --client-secret "$SECRET"
              nativeauth api /user --provider github
            Providers in this build: \(compiledIn.joined(separator: ", ")).
            """,
        subcommands: [
            LoginCommand<NativeAuthCLI>.self, StatusCommand<NativeAuthCLI>.self, TokenCommand<NativeAuthCLI>.self,
            APICommand<NativeAuthCLI>.self, UserInfoCommand<NativeAuthCLI>.self, RefreshCommand<NativeAuthCLI>.self,
            LogoutCommand<NativeAuthCLI>.self, DemoCommand.self, SandboxCommand.self,
        ]
    )

    static let toolName = "nativeauth"
    static let defaultProvider = GenericOIDCProvider.id

    /// The provider ids this build registers.
    static var compiledIn: [String] {
        var ids = [GenericOIDCProvider.id]
        #if GitHub
            ids.append(GitHubProvider.id)
        #endif
        #if Cognito
            ids.append(CognitoProvider.id)
        #endif
        #if Google
            ids.append(GoogleProvider.id)
        #endif
        return ids
    }

    static func makeRegistry() throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try registry.register(GenericOIDCProvider.self)
        #if GitHub
            try registry.register(GitHubProvider.self)
        #endif
        #if Cognito
            try registry.register(CognitoProvider.self)
        #endif
        #if Google
            try registry.register(GoogleProvider.self)
        #endif
        return registry
    }

    static var omittedProviders: [String: String] {
        var omitted: [String: String] = [:]
        #if !GitHub
            omitted["github"] = "this nativeauth was built without the GitHub trait: swift build --traits GitHub"
        #endif
        #if !Cognito
            omitted["cognito"] = "this nativeauth was built without the Cognito trait: swift build --traits Cognito"
        #endif
        #if !Google
            omitted["google"] = "this nativeauth was built without the Google trait: swift build --traits Google"
        #endif
        return omitted
    }

    /// The options of every provider compiled in.
    struct ProviderOptions: ProviderOptionSet {
        @Option(name: .long, help: "GitHub: a GitHub Enterprise Server URL (default: https://github.com).")
        var host: String?
        @Option(name: .long, help: "Cognito: the AWS region of the user pool.")
        var region: String?
        @Option(name: .customLong("user-pool-id"), help: "Cognito: the user pool id.")
        var userPoolID: String?
        @Option(name: .long, help: "Cognito: the user pool domain (a prefix or a URL).")
        var domain: String?
        @Option(name: .customLong("logout-uri"), help: "Cognito: an allowed sign-out URL of the app client.")
        var logoutURI: String?

        var settings: [String: String] {
            var settings: [String: String] = [:]
            settings["host"] = host
            settings["region"] = region
            settings["user_pool_id"] = userPoolID
            settings["domain"] = domain
            settings["logout_uri"] = logoutURI
            return settings
        }
    }
}
