// nativeauth: one CLI for every provider compiled in (package traits GitHub, Cognito, Google, Entra,
// Keycloak, GitLab, Auth0 and Okta, all on by default; the generic OpenID Connect provider is always there).
//
//   nativeauth login --provider github --client-id Iv1.0123456789abcdef --client-secret-file SECRET_FILE
//   nativeauth login --provider cognito --region eu-west-1 --user-pool-id eu-west-1_AbC --client-id …
//   swift build --traits Cognito        # a nativeauth that links NativeAuthCognito only
import ArgumentParser
import Foundation
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
#if Entra
    import NativeAuthEntra
#endif
#if Keycloak
    import NativeAuthKeycloak
#endif
#if GitLab
    import NativeAuthGitLab
#endif
#if Auth0
    import NativeAuthAuth0
#endif
#if Okta
    import NativeAuthOkta
#endif

@main
struct NativeAuthCLI: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "nativeauth",
        abstract: "Sign in to any provider compiled in, and keep the tokens.",
        discussion: """
            Example:
              nativeauth login --provider github --client-id Iv1.0123456789abcdef --client-secret-file ~/.config/nativeauth/client-secret
              nativeauth api /user --provider github
            Providers in this build: \(compiledIn.joined(separator: ", ")).
            """,
        subcommands: NativeAuthCLI.standardCommands
    )

    static let toolName = "nativeauth"
    static let defaultProvider = GenericOIDCProvider.id

    /// The provider modules of this build: the generic OpenID Connect provider, and each whose
    /// trait is on.
    static var providers: [any AuthProvider.Type] {
        var providers: [any AuthProvider.Type] = [GenericOIDCProvider.self]
        #if GitHub
            providers.append(GitHubProvider.self)
        #endif
        #if Cognito
            providers.append(CognitoProvider.self)
        #endif
        #if Google
            providers.append(GoogleProvider.self)
        #endif
        #if Entra
            providers.append(EntraProvider.self)
        #endif
        #if Keycloak
            providers.append(KeycloakProvider.self)
        #endif
        #if GitLab
            providers.append(GitLabProvider.self)
        #endif
        #if Auth0
            providers.append(Auth0Provider.self)
        #endif
        #if Okta
            providers.append(OktaProvider.self)
        #endif
        return providers
    }

    /// The provider ids of NativeAuth's modules, by the trait that links each: a build without
    /// one says which trait to build with.
    static let traits = [
        "github": "GitHub", "cognito": "Cognito", "google": "Google", "entra": "Entra", "keycloak": "Keycloak",
        "gitlab": "GitLab", "auth0": "Auth0", "okta": "Okta",
    ]

    /// The provider ids this build registers.
    static var compiledIn: [String] { providers.map { $0.id } }

    static var omittedProviders: [String: String] {
        let linked = Set(compiledIn)
        var omitted: [String: String] = [:]
        for (id, trait) in traits where !linked.contains(id) {
            omitted[id] = "this nativeauth was built without the \(trait) trait: swift build --traits \(trait)"
        }
        return omitted
    }
}
