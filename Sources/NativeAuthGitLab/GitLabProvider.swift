public import Foundation
@_spi(Provider) public import NativeAuth

/// GitLab: gitlab.com and self-managed instances, as an OpenID Connect provider.
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `host`: the instance, default `https://gitlab.com`; it is the issuer (an `issuer` given
///   directly wins).
///
/// What it does, from GitLab's documentation ("OAuth 2.0 identity provider API", "GitLab as an
/// OpenID Connect identity provider"):
/// - Scopes: `openid read_user api` are typical (`api` for the REST and GraphQL APIs and git over
///   HTTPS, `read_repository`/`write_repository` for git only); the configured ones are sent as they are.
/// - Access tokens live two hours; **refresh tokens rotate**: each refresh returns a new one and
///   revokes the one it used, so a refresh token must never be spent twice (the store's lock
///   makes every process wait for the one refresh).
/// - **The device flow** (GitLab 17.2 and later) is at `HOST/oauth/authorize_device`, which the
///   discovery document does not list.
/// - Revocation at `/oauth/revoke` (from discovery).
/// - No RP-initiated logout: `logout` revokes and removes the tokens.
/// - `api PATH` goes to `HOST/api/v4` (``apiBaseURL``), and git over HTTPS takes the access token
///   as password with the user name `oauth2` (``gitUsername``).
public struct GitLabProvider: AuthProvider {
    /// `"gitlab"`.
    public static let id = "gitlab"
    /// gitlab.com.
    public static let defaultHost = "https://gitlab.com"
    /// The user name GitLab documents for an OAuth token used as a git password.
    public static let gitUsername = "oauth2"

    /// `host`.
    public static let settings: [ProviderSetting] = [Setting.gitLabHost.declaration]

    public let configuration: ProviderConfiguration
    /// The instance: `https://gitlab.com` or a self-managed host.
    public let host: URL

    /// Builds the provider; the issuer is the host.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        if let issuer = configuration.issuer {
            host = issuer
        } else {
            host = try configuration.value(of: .gitLabHost) ?? Setting.gitLabHost.parse(Self.defaultHost)
            configuration.issuer = host
        }
        self.configuration = configuration
    }

    /// The REST API: `HOST/api/v4`.
    public var apiBaseURL: URL? { URL(string: host.absoluteString + "/api/v4") }

    /// Discovery from the host, and the device authorization endpoint it does not list.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        if metadata.deviceAuthorizationEndpoint == nil {
            metadata.deviceAuthorizationEndpoint = URL(string: host.absoluteString + "/oauth/authorize_device")
        }
        return metadata
    }

    /// GitLab has no end-session endpoint: nothing to open.
    public func endSession(_ parameters: EndSessionParameters) -> EndSession? { nil }
}

extension Setting where Value == URL {
    /// `host`: the GitLab instance (``GitLabProvider``), a server's base URL.
    public static let gitLabHost = Setting(
        "host", help: "The GitLab instance, default https://gitlab.com.", valueName: "url", group: .provider,
        parse: .baseURL)
}

/// The API is `HOST/api/v4` (``apiBaseURL``); git over HTTPS to the instance takes the access
/// token as password for the user `oauth2`.
extension GitLabProvider: ProviderService {
    public var gitHost: URL? { host }
}
