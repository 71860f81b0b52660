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

    /// The configuration-file key of each override, with its key path.
    static var fields: [(key: String, path: WritableKeyPath<EndpointOverrides, URL?>)] {
        [
            ("authorization_endpoint", \.authorization),
            ("token_endpoint", \.token),
            ("userinfo_endpoint", \.userInfo),
            ("jwks_uri", \.jwks),
            ("revocation_endpoint", \.revocation),
            ("end_session_endpoint", \.endSession),
            ("device_authorization_endpoint", \.deviceAuthorization),
        ]
    }
}
