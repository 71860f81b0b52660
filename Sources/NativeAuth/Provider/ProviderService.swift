public import Foundation

/// What a provider module knows about the service behind its sign-in, for the tools and apps built
/// on it: where its API is, how git uses its tokens, and which claim of its ID tokens names the
/// person to a Kubernetes API server.
///
/// Optional: a provider adopts it where its service differs from the defaults (GitHub's API at
/// `https://api.github.com`, git on its web host with the user name `x-access-token`); a tool asks
/// `provider as? any ProviderService` and falls back to the defaults.
///
/// ```swift
/// extension AcmeProvider: ProviderService {
///     var apiBaseURL: URL? { URL(string: "https://api.acme.example/v2") }
/// }
/// ```
public protocol ProviderService {
    /// Where the provider's API lives: a request to a relative path resolves against it. Default:
    /// `nil` (a tool then takes the issuer).
    var apiBaseURL: URL? { get }
    /// The host git fetches from and pushes to with the provider's tokens (GitHub's web host);
    /// `nil` when there is none of its own. Default: `nil`.
    var gitHost: URL? { get }
    /// The user name git sends with an access token as its password. Default: `oauth2`, the name
    /// GitLab and Bitbucket document.
    var gitUsername: String { get }
    /// The ID token claim a Kubernetes API server should take as the user name
    /// (`--oidc-username-claim`): one the provider puts in its ID tokens and that names the person
    /// for good. Default: `sub`, which every ID token has (and the API server's own default).
    var kubernetesUsernameClaim: String { get }
}

extension ProviderService {
    public var apiBaseURL: URL? { nil }

    public var gitHost: URL? { nil }

    public var gitUsername: String { "oauth2" }

    public var kubernetesUsernameClaim: String { "sub" }
}
