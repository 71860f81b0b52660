/// What NativeAuth was doing when something went wrong; an open set like ``AuthError/Code``.
public struct AuthOperation: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The operation's stable name, for example `"refresh"`.
    public let rawValue: String

    /// Creates an operation name.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// Loading provider metadata (discovery document or JWKS).
    public static let discovery = Self(rawValue: "discovery")
    /// The authorization request in the browser and its callback.
    public static let authorization = Self(rawValue: "authorization")
    /// Exchanging an authorization code or device code for tokens.
    public static let tokenExchange = Self(rawValue: "token_exchange")
    /// Refreshing tokens with a refresh token.
    public static let refresh = Self(rawValue: "refresh")
    /// The device authorization request (RFC 8628 §3.1).
    public static let deviceAuthorization = Self(rawValue: "device_authorization")
    /// Token revocation (RFC 7009).
    public static let revocation = Self(rawValue: "revocation")
    /// The userinfo request.
    public static let userInfo = Self(rawValue: "userinfo")
    /// A request to a resource server with the access token.
    public static let apiRequest = Self(rawValue: "api_request")
    /// Logging out.
    public static let logout = Self(rawValue: "logout")
    /// Registering the client (RFC 7591 dynamic client registration).
    public static let registration = Self(rawValue: "registration")
    /// Pushing the authorization request to the server (RFC 9126).
    public static let pushedAuthorization = Self(rawValue: "pushed_authorization")

    /// The code an error in this operation gets when nothing more specific applies.
    public var defaultErrorCode: AuthError.Code {
        switch self {
        case .discovery: .metadataUnavailable
        case .authorization, .deviceAuthorization, .pushedAuthorization: .authorizationFailed
        case .tokenExchange: .tokenExchangeFailed
        case .refresh: .refreshFailed
        case .revocation, .logout: .logoutFailed
        case .registration: .registrationFailed
        default: .requestFailed
        }
    }
}
