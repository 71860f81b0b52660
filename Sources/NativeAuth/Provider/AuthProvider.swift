public import Foundation
public import HTTPTypes
public import LenientJSON

/// One identity provider's behaviour: the plug-in point for provider modules.
///
/// Every hook has the standard behaviour as a default (see the extension), so a provider
/// implements only what differs. ``GenericOIDCProvider`` uses every default.
///
/// ```swift
/// struct AcmeProvider: AuthProvider {
///     static let id = "acme"
///     let configuration: ProviderConfiguration
///     init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
///     // Acme wants its tenant in every authorization request.
///     func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] {
///         [FormField("tenant", "main")]
///     }
/// }
/// ```
///
/// ### Implementation requirements
/// - `init(configuration:)` validates what the provider needs and throws ``AuthError`` with code
///   ``AuthError/Code/configurationInvalid`` naming the missing or wrong field.
/// - Hooks are pure or async and `Sendable`; they never log or print tokens or secrets.
/// - An overridden hook that only adds to the standard behaviour calls the standard
///   implementation itself (``Discovery``, ``TokenRequest/applyStandardClientAuthentication(_:configuration:)``,
///   ``TokenResponseDecoder``).
public protocol AuthProvider: Sendable {
    /// The registry key, for example `"oidc"` or `"github"`.
    static var id: String { get }

    /// Builds the provider from its configuration.
    init(configuration: ProviderConfiguration) throws

    /// The configuration the provider was built from.
    var configuration: ProviderConfiguration { get }

    /// The name under which tokens are stored: the issuer, or the provider id when there is none.
    var tokenIssuer: String { get }

    /// Loads the provider's metadata. Default: ``Discovery`` from the configured issuer, with the
    /// configuration's endpoint overrides.
    func loadMetadata(using transport: any HTTPTransport) async throws -> ProviderMetadata

    /// Extra parameters for the authorization request. Default: none. Parameters NativeAuth sets
    /// itself (`state`, `code_challenge`, `redirect_uri`, …) cannot be replaced.
    func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField]

    /// How the client authenticates at the token endpoint. Default: the configured method; without
    /// one, `none` for a client without a secret, else the first of the metadata's
    /// `token_endpoint_auth_methods_supported` that NativeAuth supports, `client_secret_basic` when
    /// the metadata does not say (the OIDC default).
    func clientAuthentication(metadata: ProviderMetadata) -> ClientAuthentication

    /// Adjusts a token request (headers, client authentication). Default: `Accept: application/json`
    /// and the standard client authentication.
    func prepareTokenRequest(_ request: inout TokenRequest, metadata: ProviderMetadata)

    /// Turns the token endpoint's answer into tokens or an error. Default: RFC 6749 §5.1 JSON
    /// through ``TokenResponseDecoder``.
    func decodeTokenResponse(
        _ response: HTTPResponse,
        body: Data,
        context: TokenResponseDecoder.Context
    ) throws -> TokenSet

    /// Turns the device authorization endpoint's answer (RFC 8628 §3.2) into a
    /// ``DeviceAuthorization``. Default: JSON through ``DeviceAuthorization/decodeJSON(_:body:errorMapper:)``.
    ///
    /// The device authorization request itself is prepared by ``prepareTokenRequest(_:metadata:)``
    /// with the operation ``AuthOperation/deviceAuthorization``, so client authentication is the
    /// same as at the token endpoint.
    func decodeDeviceAuthorizationResponse(_ response: HTTPResponse, body: Data) throws -> DeviceAuthorization

    /// Turns the userinfo answer into ``UserInfo``. Default: the OIDC claims as they are (`sub`
    /// required). Providers without OIDC map their own account document here.
    func decodeUserInfo(_ claims: JSONObject) throws -> UserInfo

    /// The provider's error dialect; the standard mapper handles whatever it returns `nil` for.
    var errorMapper: any ErrorMapper { get }

    /// How ID tokens are validated. Default: every check, with a 60-second leeway. Turn a check off
    /// only for a server that cannot comply, and say why (see ``IDTokenValidationOptions``).
    var idTokenValidation: IDTokenValidationOptions { get }

    /// Where API paths are resolved (`api PATH`). Default: the issuer.
    var apiBaseURL: URL? { get }

    /// The URL that ends the session at the provider, or `nil` when it has none. Default: OIDC
    /// RP-Initiated Logout on the metadata's `end_session_endpoint` with `id_token_hint`,
    /// `post_logout_redirect_uri`, `client_id` and `state`.
    func endSessionURL(
        metadata: ProviderMetadata,
        idToken: String?,
        postLogoutRedirectURI: URL?,
        state: String
    ) -> URL?

    /// Whether the end-session page redirects back to the app's `post_logout_redirect_uri` with
    /// its `state`, so that a presenter can wait for it. Default `true`; `false` for a logout page
    /// that returns to a fixed URL of its own (Cognito's `logout_uri`): the caller opens the URL
    /// from ``LogoutResult/endSessionURL`` and nothing is awaited.
    var endSessionReturnsToApp: Bool { get }
}

extension AuthProvider {
    public var tokenIssuer: String { configuration.issuer?.absoluteString ?? Self.id }

    public func loadMetadata(using transport: any HTTPTransport) async throws -> ProviderMetadata {
        guard let issuer = configuration.issuer else {
            throw AuthError(
                .configurationInvalid,
                "the field \"issuer\" is missing",
                hint: "set the issuer URL (--issuer, NATIVEAUTH_ISSUER or \"issuer\" in the config file)"
            )
        }
        return try await Discovery.load(
            issuer: issuer,
            overrides: configuration.endpoints,
            transport: transport,
            errorMapper: errorMapper
        )
    }

    public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] { [] }

    public func clientAuthentication(metadata: ProviderMetadata) -> ClientAuthentication {
        if let configured = configuration.clientAuthentication { return configured }
        guard let secret = configuration.clientSecret, !secret.isEmpty else { return .none }
        let supported = metadata.tokenEndpointAuthMethodsSupported ?? []
        for name in supported {
            if let method = ClientAuthentication(name: name), method != .none { return method }
        }
        return .clientSecretBasic
    }

    public func prepareTokenRequest(_ request: inout TokenRequest, metadata: ProviderMetadata) {
        request.headerFields[.accept] = "application/json"
        request.applyStandardClientAuthentication(
            clientAuthentication(metadata: metadata),
            configuration: configuration
        )
    }

    public func decodeTokenResponse(
        _ response: HTTPResponse,
        body: Data,
        context: TokenResponseDecoder.Context
    ) throws -> TokenSet {
        try TokenResponseDecoder.decodeJSON(response, body: body, context: context, errorMapper: errorMapper)
    }

    public func decodeDeviceAuthorizationResponse(_ response: HTTPResponse, body: Data) throws -> DeviceAuthorization {
        try DeviceAuthorization.decodeJSON(response, body: body, errorMapper: errorMapper)
    }

    public func decodeUserInfo(_ claims: JSONObject) throws -> UserInfo {
        try UserInfo(claims: claims)
    }

    public var errorMapper: any ErrorMapper { StandardErrorMapper() }

    public var idTokenValidation: IDTokenValidationOptions { IDTokenValidationOptions() }

    public var apiBaseURL: URL? { configuration.issuer }

    public var endSessionReturnsToApp: Bool { true }

    public func endSessionURL(
        metadata: ProviderMetadata,
        idToken: String?,
        postLogoutRedirectURI: URL?,
        state: String
    ) -> URL? {
        guard let endpoint = metadata.endSessionEndpoint else { return nil }
        var fields: [FormField] = []
        if let idToken { fields.append(FormField("id_token_hint", idToken)) }
        if let postLogoutRedirectURI {
            fields.append(FormField("post_logout_redirect_uri", postLogoutRedirectURI.absoluteString))
        }
        fields.append(FormField("client_id", configuration.clientID))
        fields.append(FormField("state", state))
        return FormURLEncoding.url(endpoint.absoluteString, adding: fields)
    }
}
