public import Foundation
internal import LenientJSON
@_spi(Provider) public import NativeAuth

/// Amazon Cognito user pools.
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `region` and `user_pool_id` give the issuer `https://cognito-idp.REGION.amazonaws.com/POOL`;
///   an `issuer` given directly wins (for tests and unusual setups).
/// - `domain`: the user pool domain, as a prefix (`myapp` → `https://myapp.auth.REGION.amazoncognito.com`)
///   or a URL (a custom domain).
/// - `logout_uri`: one of the app client's allowed sign-out URLs; with `domain` it enables the
///   logout page `DOMAIN/logout?client_id=…&logout_uri=…`, which returns to that URL, not to the app.
///
/// Discovery comes from the issuer. Revocation is `DOMAIN/oauth2/revoke` (refresh tokens only;
/// Cognito refuses to revoke access tokens, which then simply expire). Refresh does not rotate:
/// the refresh token is kept. `email_verified` arrives as a string and is read as a boolean.
public struct CognitoProvider: AuthProvider {
    /// `"cognito"`.
    public static let id = "cognito"

    /// `region`, `user_pool_id`, `domain` and `logout_uri`.
    public static let settings: [ProviderSetting] = [
        .cognitoRegion, .cognitoUserPoolID, .cognitoDomain, .cognitoLogoutURI,
    ]

    public let configuration: ProviderConfiguration
    /// The user pool domain (hosted UI), when configured.
    public let domain: URL?
    /// The allowed sign-out URL the logout page returns to, when configured.
    public let logoutURI: URL?

    /// Builds the provider; it needs an issuer, or a region and a user pool id.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        var region = try configuration.value(of: .cognitoRegion)
        if configuration.issuer == nil {
            guard let region else {
                throw AuthError(
                    .configurationInvalid,
                    "the field \"region\" is missing (with \"user_pool_id\", or an \"issuer\")",
                    hint: "set the region and the user pool id of the pool, or its issuer",
                    field: ProviderSetting.cognitoRegion.key
                )
            }
            guard let pool = try configuration.value(of: .cognitoUserPoolID) else {
                throw AuthError(
                    .configurationInvalid,
                    "the field \"user_pool_id\" is missing (with \"region\", or an \"issuer\")",
                    hint: "set the region and the user pool id of the pool, or its issuer",
                    field: ProviderSetting.cognitoUserPoolID.key
                )
            }
            configuration.issuer = URL(string: "https://cognito-idp.\(region).amazonaws.com/\(pool)")
        }
        if region == nil, let host = configuration.issuer?.host, host.hasPrefix("cognito-idp.") {
            region = host.split(separator: ".").dropFirst().first.map(String.init)
        }
        if let text = try configuration.value(of: .cognitoDomain) {
            if text.contains("://") {
                guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), url.host != nil
                else {
                    throw AuthError.invalid(.cognitoDomain, "is not a URL")
                }
                domain = url
            } else {
                guard let region else {
                    throw AuthError(
                        .configurationInvalid,
                        "the domain prefix \"\(text)\" needs a region",
                        hint: "set the region, or give the whole domain URL",
                        field: ProviderSetting.cognitoRegion.key
                    )
                }
                domain = URL(string: "https://\(text).auth.\(region).amazoncognito.com")
            }
        } else {
            domain = nil
        }
        if let text = try configuration.value(of: .cognitoLogoutURI) {
            guard let url = URL(string: text), url.scheme != nil else {
                throw AuthError.invalid(.cognitoLogoutURI, "is not a URL")
            }
            logoutURI = url
        } else {
            logoutURI = nil
        }
        self.configuration = configuration
    }

    /// Discovery from the issuer; the revocation endpoint is on the domain when discovery names none.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        if metadata.revocationEndpoint == nil, let domain {
            metadata.revocationEndpoint = URL(string: domain.absoluteString + "/oauth2/revoke")
        }
        return metadata
    }

    /// Cognito's logout page, `DOMAIN/logout?client_id=…&logout_uri=…`, which ends on the
    /// `logout_uri` and never comes back to the app; `nil` without a domain and a logout URI.
    public func endSession(_ parameters: EndSessionParameters) -> EndSession? {
        guard let domain, let logoutURI else { return nil }
        let fields = [
            FormField("client_id", configuration.clientID), FormField("logout_uri", logoutURI.absoluteString),
        ]
        return FormURLEncoding.url(domain.absoluteString + "/logout", adding: fields).map(EndSession.endsElsewhere)
    }
}

extension ProviderSetting {
    /// `region`: the AWS region of the user pool (``CognitoProvider``).
    public static let cognitoRegion = ProviderSetting(
        "region", help: "The AWS region of the user pool, like eu-west-1.")
    /// `user_pool_id`: the user pool (``CognitoProvider``).
    public static let cognitoUserPoolID = ProviderSetting(
        "user_pool_id", help: "The user pool id, like eu-west-1_AbCdEf123.")
    /// `domain`: the user pool domain of the hosted UI (``CognitoProvider``).
    public static let cognitoDomain = ProviderSetting(
        "domain", help: "The user pool domain: a prefix, or a custom domain URL.")
    /// `logout_uri`: an allowed sign-out URL of the app client (``CognitoProvider``).
    public static let cognitoLogoutURI = ProviderSetting(
        "logout_uri", help: "An allowed sign-out URL of the app client, where its logout page ends.")
}
