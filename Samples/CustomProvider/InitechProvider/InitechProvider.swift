public import Foundation
public import LenientJSON
@_spi(Provider) public import NativeAuth

/// Initech Identity, the fictional in-house sign-in server of this sample: what a provider module
/// for a server with quirks of its own looks like.
///
/// What Initech does differently from the standard, and the hook that deals with it:
///
/// | Initech | Hook |
/// | --- | --- |
/// | A `host` setting of its own | ``settings`` |
/// | No discovery: fixed endpoints on its host | ``loadMetadata(_:)`` |
/// | Token answers and `GET /api/me` wrap their fields in `"data"` (and `expires_in` is a string, which NativeAuth reads anyway) | ``fields(of:for:)`` |
/// | Its errors are `{"status": "error", "errors": [{"code": …}]}` | ``errorMapper`` (``InitechErrorMapper``) |
/// | Logout is its own page: `/session/end?client=…&return_to=…&state=…`, which comes back | ``endSession(_:)`` |
///
/// Everything else (PKCE, `state`, the loopback redirect, refresh with rotation, the token store)
/// is NativeAuth's standard behaviour. Configuration: `host` (`Setting.initechHost`,
/// `--host`), default ``defaultHost``.
///
/// ```swift
/// var registry = ProviderRegistry()
/// try registry.register(InitechProvider.self)
/// ```
public struct InitechProvider: AuthProvider {
    /// `"initech"`.
    public static let id = "initech"

    /// The host when the configuration names none.
    public static let defaultHost = "https://sso.initech.example"

    /// `host`.
    public static let settings: [ProviderSetting] = [Setting.initechHost.declaration]

    /// The configuration the provider was built from.
    public let configuration: ProviderConfiguration
    /// The host the endpoints are on.
    public let host: URL

    /// Builds the provider; `host` defaults to ``defaultHost``.
    ///
    /// - Parameter configuration: The client's registration.
    /// - Throws: `AuthError` (`configuration_invalid`, field
    ///   `host`) when `host` is not a URL.
    public init(configuration: ProviderConfiguration) throws {
        self.configuration = configuration
        self.host = try configuration.value(of: .initechHost) ?? Setting.initechHost.parse(Self.defaultHost)
    }

    /// Tokens are stored under the host: Initech has no issuer.
    public var tokenIssuer: String { host.absoluteString }

    /// Initech has no discovery: its endpoints are fixed paths on the host (`/oauth/authorize`,
    /// `/oauth/token`, `/api/me`, `/session/end`), with the configuration's overrides on top.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        func endpoint(_ path: String) throws -> URL {
            guard let url = URL(string: host.absoluteString + path) else {
                throw AuthError.invalid(Setting.initechHost, "cannot form endpoint URLs (\(host))")
            }
            return url
        }
        let token = try endpoint("/oauth/token")
        try EndpointPolicy.validate(token)
        return ProviderMetadata(
            issuer: nil,
            authorizationEndpoint: try endpoint("/oauth/authorize"),
            tokenEndpoint: token,
            userInfoEndpoint: try endpoint("/api/me"),
            endSessionEndpoint: try endpoint("/session/end"),
            codeChallengeMethodsSupported: ["S256"]
        )
        .applying(configuration.endpoints)
    }

    /// Initech answers `{"status": "ok", "data": {"access_token": …, "expires_in": "3600", …}}` and
    /// `{"data": {"sub": …, "name": …}}`: the standard fields inside `"data"`. NativeAuth reads the
    /// envelope (HTTP errors and a body that is no JSON object go to the error mapper) and then
    /// what this returns.
    public func fields(of object: JSONObject, for operation: AuthOperation) throws -> JSONObject {
        if let data = try object.object("data") { return data }
        // A userinfo answer without the envelope is read as it is; a token answer must have one.
        guard operation == .userInfo else { throw JSONFieldError(key: "data", problem: .missing) }
        return object
    }

    /// Initech's logout page, `HOST/session/end?client=…&return_to=…&state=…`, which sends the
    /// browser back to `return_to` with the `state`, so the loopback presenter can wait for it.
    public func endSession(_ parameters: EndSessionParameters) -> EndSession? {
        guard let endpoint = parameters.metadata.endSessionEndpoint else { return nil }
        var fields = [FormField("client", configuration.clientID)]
        if let redirect = parameters.postLogoutRedirectURI {
            fields.append(FormField("return_to", redirect.absoluteString))
        }
        fields.append(FormField("state", parameters.state))
        return FormURLEncoding.url(endpoint.absoluteString, adding: fields).map(EndSession.returnsToApp)
    }

    /// Initech's error codes; see ``InitechErrorMapper``.
    public var errorMapper: any ErrorMapper { InitechErrorMapper() }
}

extension Setting where Value == URL {
    /// `host`: where Initech Identity runs (``InitechProvider``): a server's base URL, parsed by
    /// the declaration, so that a bad value is refused wherever it is given.
    public static let initechHost = Setting(
        "host", help: "The Initech Identity host (default: \(InitechProvider.defaultHost)).", valueName: "url",
        group: .provider, parse: .baseURL)
}

/// Initech's API is on its host (it has no issuer).
extension InitechProvider: ProviderService {
    public var apiBaseURL: URL? { host }
}
