public import Foundation
public import HTTPTypes
public import LenientJSON

/// One identity provider's behaviour: the plug-in point for provider modules.
///
/// Every hook has the standard behaviour as a default (see the extension), so a provider
/// implements only what differs. ``GenericOIDCProvider`` uses every default. The hooks are at the
/// grain where providers differ:
///
/// | hook | decides | standard behaviour |
/// | --- | --- | --- |
/// | ``settings`` | which configuration keys of its own it reads | none |
/// | ``tokenIssuer`` | the name tokens are stored under | the issuer, else the provider id |
/// | ``loadMetadata(_:)`` | where the endpoints come from | discovery from the issuer |
/// | ``authorizationParameters(for:)`` | extra parameters of the authorization request | none |
/// | ``prepare(_:metadata:)`` | headers and client authentication of a request to an OAuth endpoint | `Accept: application/json`, ``ClientAuthentication/standard(for:metadata:)`` |
/// | ``parseBody(_:of:)`` | how an answer's body is encoded | JSON |
/// | ``fields(of:for:)`` | where the fields sit in that body | at the top |
/// | ``errorMapper`` | the provider's error dialect | ``StandardErrorMapper`` |
/// | ``idTokenValidation`` | how ID tokens are checked | every check |
/// | ``endSession(_:)`` | the page that ends the session, and whether it comes back | OIDC RP-Initiated Logout |
/// | ``offlineAccessNeedsConsent`` | whether `offline_access` also sends `prompt=consent` | yes (OIDC Core §11) |
///
/// NativeAuth does the rest the same way for every provider: one exchange path sends every request,
/// reads every answer and maps every error.
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
///   ``AuthError/Code/configurationInvalid`` and the ``AuthError/field`` at fault
///   (``AuthError/missing(_:)-(ProviderSetting)``, ``AuthError/invalid(_:_:hint:)-(ProviderSetting,_,_)``).
/// - Declare every key of your own in ``settings`` and read it with
///   ``ProviderConfiguration/value(of:)-(ProviderSetting)``.
/// - Hooks are pure or async and `Sendable`; they never log or print tokens or secrets.
/// - Helpers for provider authors (``MetadataLoader``'s discovery, ``OAuthRequest``'s form and
///   headers, form encoding, the endpoint policy) are plumbing: `@_spi(Provider) import NativeAuth`.
/// - Run NativeAuthTesting's `ErrorMapperConformance` on the ``errorMapper``.
public protocol AuthProvider: Sendable {
    /// The registry key, for example `"oidc"` or `"github"`.
    static var id: String { get }

    /// The configuration keys of this provider's own (beyond ``ProviderSetting/standard``), which it
    /// reads from ``ProviderConfiguration/additional``. Default: none.
    static var settings: [ProviderSetting] { get }

    /// Builds the provider from its configuration.
    init(configuration: ProviderConfiguration) throws

    /// The configuration the provider was built from.
    var configuration: ProviderConfiguration { get }

    /// The name under which tokens are stored. Default: the issuer, or the provider id when there
    /// is none.
    var tokenIssuer: String { get }

    /// Loads the provider's metadata. Default: `loader.discover()`, discovery from the configured
    /// issuer with the configuration's endpoint overrides.
    func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata

    /// Extra parameters for the authorization request. Default: none. Parameters NativeAuth sets
    /// itself (`state`, `code_challenge`, `redirect_uri`, …) cannot be replaced.
    func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField]

    /// Adjusts a request to the token, device authorization or revocation endpoint before it is
    /// sent. Default: `Accept: application/json` and the standard client authentication
    /// (``ClientAuthentication/standard(for:metadata:)``).
    func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata)

    /// Reads the body of an answer from an OAuth endpoint or the userinfo endpoint as an object;
    /// `nil` when it is not one. Default: JSON. GitHub reads form-encoded bodies here.
    ///
    /// - Throws: What a parser throws for a body it cannot read (reported as
    ///   ``AuthError/Code/responseMalformed``).
    func parseBody(_ body: Data, of response: HTTPResponse) throws -> JSONObject?

    /// The fields of an answer's object for `operation` (``AuthOperation/tokenExchange``,
    /// ``AuthOperation/refresh``, ``AuthOperation/deviceAuthorization``, ``AuthOperation/userInfo``):
    /// the standard names, where the standard puts them. Default: the object itself. A provider
    /// that wraps its fields (Initech's `"data"`) unwraps them here; one that names them otherwise
    /// (GitHub's `id` for `sub`) renames them.
    ///
    /// - Throws: A `JSONFieldError` for a field that is missing or of the wrong kind.
    func fields(of object: JSONObject, for operation: AuthOperation) throws -> JSONObject

    /// The provider's error dialect; the standard mapper handles whatever it returns `nil` for.
    var errorMapper: any ErrorMapper { get }

    /// How ID tokens are validated. Default: every check, with a 60-second leeway. Turn a check off
    /// only for a server that cannot comply, and say why (see ``IDTokenValidationOptions``).
    var idTokenValidation: IDTokenValidationOptions { get }

    /// The page that ends the session at the provider, or `nil` when there is none. Default: OIDC
    /// RP-Initiated Logout on the metadata's `end_session_endpoint` with `id_token_hint`,
    /// `post_logout_redirect_uri`, `client_id` and `state`, which returns to the app.
    func endSession(_ parameters: EndSessionParameters) -> EndSession?

    /// Whether a sign-in that asks for `offline_access` also sends `prompt=consent`, when the
    /// configuration does not say (``ProviderConfiguration/offlineAccessConsent``). Default `true`,
    /// as OpenID Connect Core §11 asks; a module whose server issues refresh tokens for
    /// `offline_access` without consent (and would show a consent page at every sign-in) says `false`.
    var offlineAccessNeedsConsent: Bool { get }

    /// Whether DPoP (RFC 9449) is used with this provider when its metadata announces it and the
    /// configuration leaves ``ProviderConfiguration/dpop`` at ``FeaturePolicy/automatic``. Default
    /// `true`; a module whose server announces DPoP but mishandles it says `false`, and why.
    static var supportsDPoP: Bool { get }
}

extension AuthProvider {
    public static var settings: [ProviderSetting] { [] }

    public static var supportsDPoP: Bool { true }

    public var tokenIssuer: String { configuration.issuer?.absoluteString ?? Self.id }

    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        try await loader.discover()
    }

    public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] { [] }

    public func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata) {
        request.applyStandardPreparation(configuration: configuration, metadata: metadata)
    }

    public func parseBody(_ body: Data, of response: HTTPResponse) throws -> JSONObject? {
        try JSONValue.parse(body).objectValue
    }

    public func fields(of object: JSONObject, for operation: AuthOperation) throws -> JSONObject { object }

    public var errorMapper: any ErrorMapper { StandardErrorMapper() }

    public var idTokenValidation: IDTokenValidationOptions { IDTokenValidationOptions() }

    public var offlineAccessNeedsConsent: Bool { true }

    public func endSession(_ parameters: EndSessionParameters) -> EndSession? {
        guard let endpoint = parameters.metadata.endSessionEndpoint else { return nil }
        var fields: [FormField] = []
        if let idToken = parameters.idToken { fields.append(FormField("id_token_hint", idToken)) }
        if let redirect = parameters.postLogoutRedirectURI {
            fields.append(FormField("post_logout_redirect_uri", redirect.absoluteString))
        }
        fields.append(FormField("client_id", configuration.clientID))
        fields.append(FormField("state", parameters.state))
        return FormURLEncoding.url(endpoint.absoluteString, adding: fields).map(EndSession.returnsToApp)
    }
}
