internal import Foundation
public import NativeAuth

/// Google accounts (OpenID Connect at `https://accounts.google.com`).
///
/// - The issuer is `https://accounts.google.com`; a configured `issuer` overrides it (for tests).
/// - Every authorization request asks for `access_type=offline` and `prompt=consent`, so that a
///   refresh token is issued each time.
/// - Desktop ("installed") clients come with a client secret that Google documents as not secret:
///   configure it like any secret; it cannot be kept from someone who has the binary, and PKCE
///   protects the code exchange.
/// - Revocation and the device flow come from discovery; the device answer's `verification_url`
///   spelling is accepted.
/// - Google's ID tokens name the issuer as `https://accounts.google.com` or `accounts.google.com`;
///   both are accepted (``IDTokenValidationOptions/issuerAliases``).
public struct GoogleProvider: AuthProvider {
    /// `"google"`.
    public static let id = "google"
    /// Google's issuer.
    public static let defaultIssuer = "https://accounts.google.com"

    public let configuration: ProviderConfiguration

    /// Builds the provider; the issuer defaults to Google's.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        if configuration.issuer == nil { configuration.issuer = URL(string: Self.defaultIssuer) }
        self.configuration = configuration
    }

    public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] {
        [FormField("access_type", "offline"), FormField("prompt", "consent")]
    }

    public var idTokenValidation: IDTokenValidationOptions {
        // The issuer without its scheme: Google's documented second spelling.
        let issuer = configuration.issuer?.absoluteString ?? Self.defaultIssuer
        let bare = issuer.replacingOccurrences(of: "https://", with: "").replacingOccurrences(of: "http://", with: "")
        return IDTokenValidationOptions(issuerAliases: [bare])
    }
}

/// The claim a Kubernetes API server takes as the user name: `email`, the Google account's address, as the Kubernetes documentation's example for Google uses.
extension GoogleProvider: ProviderService {
    public var kubernetesUsernameClaim: String { "email" }
}
