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
        #if Entra
            ids.append(EntraProvider.id)
        #endif
        #if Keycloak
            ids.append(KeycloakProvider.id)
        #endif
        #if GitLab
            ids.append(GitLabProvider.id)
        #endif
        #if Auth0
            ids.append(Auth0Provider.id)
        #endif
        #if Okta
            ids.append(OktaProvider.id)
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
        #if Entra
            try registry.register(EntraProvider.self)
        #endif
        #if Keycloak
            try registry.register(KeycloakProvider.self)
        #endif
        #if GitLab
            try registry.register(GitLabProvider.self)
        #endif
        #if Auth0
            try registry.register(Auth0Provider.self)
        #endif
        #if Okta
            try registry.register(OktaProvider.self)
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
        #if !Entra
            omitted["entra"] = "this nativeauth was built without the Entra trait: swift build --traits Entra"
        #endif
        #if !Keycloak
            omitted["keycloak"] = "this nativeauth was built without the Keycloak trait: swift build --traits Keycloak"
        #endif
        #if !GitLab
            omitted["gitlab"] = "this nativeauth was built without the GitLab trait: swift build --traits GitLab"
        #endif
        #if !Auth0
            omitted["auth0"] = "this nativeauth was built without the Auth0 trait: swift build --traits Auth0"
        #endif
        #if !Okta
            omitted["okta"] = "this nativeauth was built without the Okta trait: swift build --traits Okta"
        #endif
        return omitted
    }

    /// `api PATH` goes to GitHub's REST API for GitHub, to the issuer for the others.
    static func apiBaseURL(for provider: any AuthProvider) -> URL? {
        #if GitHub
            if let github = provider as? GitHubProvider { return github.apiBaseURL }
        #endif
        #if Entra
            if let entra = provider as? EntraProvider { return entra.graphURL }
        #endif
        #if GitLab
            if let gitlab = provider as? GitLabProvider { return gitlab.apiBaseURL }
        #endif
        return provider.configuration.issuer
    }

    /// git's credential helper answers for GitHub's web host as `x-access-token`.
    static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults {
        #if GitHub
            if let github = provider as? GitHubProvider {
                return GitCredentialDefaults(host: github.host, username: GitHubProvider.gitUsername)
            }
        #endif
        #if GitLab
            if let gitlab = provider as? GitLabProvider {
                return GitCredentialDefaults(host: gitlab.host, username: GitLabProvider.gitUsername)
            }
        #endif
        return GitCredentialDefaults()
    }
}
