public import Foundation

/// Endpoints set in the configuration, which win over (or fill in for) the provider's metadata.
///
/// django-oauth-toolkit's OIDC document lists no revocation or device endpoint; GitHub has no
/// discovery at all. Any endpoint here is used as given.
public struct EndpointOverrides: Sendable, Equatable {
    /// The authorization endpoint.
    public var authorization: URL?
    /// The token endpoint.
    public var token: URL?
    /// The userinfo endpoint.
    public var userInfo: URL?
    /// The JWKS document.
    public var jwks: URL?
    /// The revocation endpoint (RFC 7009).
    public var revocation: URL?
    /// The end-session endpoint (OIDC RP-Initiated Logout).
    public var endSession: URL?
    /// The device authorization endpoint (RFC 8628).
    public var deviceAuthorization: URL?

    /// Creates overrides; every endpoint defaults to `nil` (use the metadata's).
    public init(
        authorization: URL? = nil,
        token: URL? = nil,
        userInfo: URL? = nil,
        jwks: URL? = nil,
        revocation: URL? = nil,
        endSession: URL? = nil,
        deviceAuthorization: URL? = nil
    ) {
        self.authorization = authorization
        self.token = token
        self.userInfo = userInfo
        self.jwks = jwks
        self.revocation = revocation
        self.endSession = endSession
        self.deviceAuthorization = deviceAuthorization
    }

    /// The setting of each override (configuration files and the environment only), with its key
    /// path.
    static var fields: [(setting: Setting<URL>, path: WritableKeyPath<EndpointOverrides, URL?>)] {
        [
            (.authorizationEndpoint, \.authorization), (.tokenEndpoint, \.token), (.userInfoEndpoint, \.userInfo),
            (.jwksURI, \.jwks), (.revocationEndpoint, \.revocation), (.endSessionEndpoint, \.endSession),
            (.deviceAuthorizationEndpoint, \.deviceAuthorization),
        ]
    }

    static func endpoint(_ key: String, _ name: String) -> Setting<URL> {
        Setting(
            key, help: "The \(name), for a server whose metadata names none or another.", valueName: "url",
            group: .endpoints, parse: .url)
    }
}

extension Setting where Value == URL {
    /// `authorization_endpoint`, replacing the metadata's.
    public static let authorizationEndpoint = EndpointOverrides.endpoint(
        "authorization_endpoint", "authorization endpoint")
    /// `token_endpoint`, replacing the metadata's.
    public static let tokenEndpoint = EndpointOverrides.endpoint("token_endpoint", "token endpoint")
    /// `userinfo_endpoint`, replacing the metadata's.
    public static let userInfoEndpoint = EndpointOverrides.endpoint("userinfo_endpoint", "userinfo endpoint")
    /// `jwks_uri`, replacing the metadata's.
    public static let jwksURI = EndpointOverrides.endpoint("jwks_uri", "JWKS document")
    /// `revocation_endpoint`, replacing the metadata's.
    public static let revocationEndpoint = EndpointOverrides.endpoint(
        "revocation_endpoint", "revocation endpoint (RFC 7009)")
    /// `end_session_endpoint`, replacing the metadata's.
    public static let endSessionEndpoint = EndpointOverrides.endpoint(
        "end_session_endpoint", "end-session endpoint (OIDC RP-Initiated Logout)")
    /// `device_authorization_endpoint`, replacing the metadata's (RFC 8628).
    public static let deviceAuthorizationEndpoint = EndpointOverrides.endpoint(
        "device_authorization_endpoint", "device authorization endpoint (RFC 8628)")
}
