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
        Setting.cognitoRegion.declaration, Setting.cognitoUserPoolID.declaration,
        Setting.cognitoDomain.declaration, Setting.cognitoLogoutURI.declaration,
    ]

    /// A user pool domain, as given: a prefix (`auth.REGION.amazoncognito.com`), or a custom
    /// domain's URL.
    public enum Domain: Sendable, Equatable {
        /// The prefix of an Amazon Cognito domain.
        case prefix(String)
        /// A custom domain, or a whole Cognito domain.
        case url(URL)
    }

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
                    field: Setting.cognitoRegion.key
                )
            }
            guard let pool = try configuration.value(of: .cognitoUserPoolID) else {
                throw AuthError(
                    .configurationInvalid,
                    "the field \"user_pool_id\" is missing (with \"region\", or an \"issuer\")",
                    hint: "set the region and the user pool id of the pool, or its issuer",
                    field: Setting.cognitoUserPoolID.key
                )
            }
            configuration.issuer = URL(string: "https://cognito-idp.\(region).amazonaws.com/\(pool)")
        }
        if region == nil, let host = configuration.issuer?.host, host.hasPrefix("cognito-idp.") {
            region = host.split(separator: ".").dropFirst().first.map(String.init)
        }
        switch try configuration.value(of: .cognitoDomain) {
        case .url(let url)?:
            domain = url
        case .prefix(let prefix)?:
            guard let region else {
                throw AuthError(
                    .configurationInvalid,
                    "the domain prefix \"\(prefix)\" needs a region",
                    hint: "set the region, or give the whole domain URL",
                    field: Setting.cognitoRegion.key
                )
            }
            domain = URL(string: "https://\(prefix).auth.\(region).amazoncognito.com")
        case nil:
            domain = nil
        }
        logoutURI = try configuration.value(of: .cognitoLogoutURI)
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

extension Setting where Value == String {
    /// `region`: the AWS region of the user pool (``CognitoProvider``), like `eu-west-1`.
    public static let cognitoRegion = Setting(
        "region", help: "The AWS region of the user pool, like eu-west-1.", group: .provider,
        parse: .name(allowing: "-", kind: "an AWS region, like eu-west-1"))
    /// `user_pool_id`: the user pool (``CognitoProvider``), like `eu-west-1_AbCdEf123`.
    public static let cognitoUserPoolID = Setting(
        "user_pool_id", help: "The user pool id, like eu-west-1_AbCdEf123.", group: .provider,
        parse: .name(allowing: "-_", kind: "a user pool id, like eu-west-1_AbCdEf123"))
}

extension Setting where Value == CognitoProvider.Domain {
    /// `domain`: the user pool domain of the hosted UI (``CognitoProvider``): a prefix, or a URL.
    public static let cognitoDomain = Setting(
        "domain", help: "The user pool domain: a prefix, or a custom domain URL.", group: .provider,
        parse: SettingParser { text, setting throws(AuthError) in
            guard text.contains("://") else {
                let prefix = SettingParser.name(allowing: "-", kind: "a domain prefix or a URL")
                return .prefix(try prefix.value(of: text, for: setting))
            }
            return .url(try SettingParser.baseURL.value(of: text, for: setting))
        })
}

extension Setting where Value == URL {
    /// `logout_uri`: an allowed sign-out URL of the app client (``CognitoProvider``); any scheme (an
    /// app's own, too).
    public static let cognitoLogoutURI = Setting(
        "logout_uri", help: "An allowed sign-out URL of the app client, where its logout page ends.",
        valueName: "url", group: .provider,
        parse: SettingParser { text, setting throws(AuthError) in
            guard let url = URL(string: text), url.scheme != nil else {
                throw AuthError.invalid(setting, "is not a URL")
            }
            return url
        })
}
