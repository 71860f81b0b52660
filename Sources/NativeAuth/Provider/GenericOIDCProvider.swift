/// Any standards-compliant OpenID Connect or OAuth 2.0 server: Keycloak, Auth0, Okta,
/// django-oauth-toolkit and others. It uses every standard behaviour of ``AuthProvider``.
///
/// It needs an `issuer` (for discovery) and a `client_id`.
public struct GenericOIDCProvider: AuthProvider {
    /// `"oidc"`.
    public static let id = "oidc"

    public let configuration: ProviderConfiguration

    /// Builds the provider; the configuration must name an issuer.
    public init(configuration: ProviderConfiguration) throws {
        guard configuration.issuer != nil else { throw AuthError.missing(.issuer) }
        self.configuration = configuration
    }
}
