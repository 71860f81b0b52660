public import Foundation
internal import LenientJSON
public import NativeAuth

/// Amazon Cognito user pools.
///
/// Configuration (``ProviderConfiguration`` and its ``ProviderConfiguration/additional`` keys):
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

    public let configuration: ProviderConfiguration
    /// The user pool domain (hosted UI), when configured.
    public let domain: URL?
    /// The allowed sign-out URL the logout page returns to, when configured.
    public let logoutURI: URL?

    /// Builds the provider; it needs an issuer, or a region and a user pool id.
    public init(configuration: ProviderConfiguration) throws {
        func setting(_ key: String) -> String? {
            guard let value = try? configuration.additional.string(key), !value.isEmpty else { return nil }
            return value
        }
        var configuration = configuration
        var region = setting("region")
        if configuration.issuer == nil {
            guard let region, let pool = setting("user_pool_id") else {
                throw AuthError(
                    .configurationInvalid,
                    "the fields \"region\" and \"user_pool_id\" (or \"issuer\") are missing",
                    hint: "set --region and --user-pool-id, or --issuer"
                )
            }
            configuration.issuer = URL(string: "https://cognito-idp.\(region).amazonaws.com/\(pool)")
        }
        if region == nil, let host = configuration.issuer?.host, host.hasPrefix("cognito-idp.") {
            region = host.split(separator: ".").dropFirst().first.map(String.init)
        }
        if let text = setting("domain") {
            if text.contains("://") {
                guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), url.host != nil
                else {
                    throw AuthError(.configurationInvalid, "the field \"domain\" is not a URL")
                }
                domain = url
            } else {
                guard let region else {
                    throw AuthError(
                        .configurationInvalid,
                        "the domain prefix \"\(text)\" needs a region",
                        hint: "set --region, or give the whole domain URL"
                    )
                }
                domain = URL(string: "https://\(text).auth.\(region).amazoncognito.com")
            }
        } else {
            domain = nil
        }
        if let text = setting("logout_uri") {
            guard let url = URL(string: text), url.scheme != nil else {
                throw AuthError(.configurationInvalid, "the field \"logout_uri\" is not a URL")
            }
            logoutURI = url
        } else {
            logoutURI = nil
        }
        self.configuration = configuration
    }

    public func loadMetadata(using transport: any HTTPTransport) async throws -> ProviderMetadata {
        guard let issuer = configuration.issuer else {
            throw AuthError(.configurationInvalid, "the field \"issuer\" is missing")
        }
        var metadata = try await Discovery.load(
            issuer: issuer,
            overrides: configuration.endpoints,
            transport: transport,
            errorMapper: errorMapper
        )
        if metadata.revocationEndpoint == nil, let domain {
            metadata.revocationEndpoint = URL(string: domain.absoluteString + "/oauth2/revoke")
        }
        return metadata
    }

    public var endSessionReturnsToApp: Bool { false }

    public func endSessionURL(
        metadata: ProviderMetadata,
        idToken: String?,
        postLogoutRedirectURI: URL?,
        state: String
    ) -> URL? {
        guard let domain, let logoutURI else { return nil }
        return FormURLEncoding.url(
            domain.absoluteString + "/logout",
            adding: [FormField("client_id", configuration.clientID), FormField("logout_uri", logoutURI.absoluteString)]
        )
    }
}
