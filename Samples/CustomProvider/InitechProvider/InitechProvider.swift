public import Foundation
public import HTTPTypes
public import LenientJSON
public import NativeAuth

/// Initech Identity, the fictional in-house sign-in server of this sample: what a provider module
/// for a server with quirks of its own looks like.
///
/// What Initech does differently from the standard, and the hook that deals with it:
///
/// | Initech | Hook |
/// | --- | --- |
/// | No discovery: fixed endpoints on its host | ``loadMetadata(using:)`` |
/// | Token answers wrap their fields in `"data"`, and `expires_in` is a string | ``decodeTokenResponse(_:body:context:)`` |
/// | Its errors are `{"status": "error", "errors": [{"code": …}]}` | ``errorMapper`` (``InitechErrorMapper``) |
/// | `GET /api/me` wraps the claims in `"data"` too | ``decodeUserInfo(_:)`` |
/// | Logout is its own URL: `/session/end?client=…&return_to=…&state=…` | ``endSessionURL(metadata:idToken:postLogoutRedirectURI:state:)`` |
///
/// Everything else (PKCE, `state`, the loopback redirect, refresh with rotation, the token store)
/// is NativeAuth's standard behaviour. Configuration: `host` in
/// ``ProviderConfiguration/additional`` (`--host`), default ``defaultHost``.
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

    /// The configuration the provider was built from.
    public let configuration: ProviderConfiguration
    /// The host the endpoints are on.
    public let host: URL

    /// Builds the provider; `host` (in ``ProviderConfiguration/additional``) defaults to
    /// ``defaultHost``.
    ///
    /// - Parameter configuration: The client's registration.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when `host` is not a URL.
    public init(configuration: ProviderConfiguration) throws {
        var text = (try? configuration.additional.string("host")) ?? Self.defaultHost
        while text.hasSuffix("/") { text.removeLast() }
        guard let host = URL(string: text), host.host != nil, host.scheme == "https" || host.scheme == "http" else {
            throw AuthError(
                .configurationInvalid,
                "the field \"host\" is not a URL",
                hint: "set it like --host \(Self.defaultHost)"
            )
        }
        self.configuration = configuration
        self.host = host
    }

    /// Tokens are stored under the host: Initech has no issuer.
    public var tokenIssuer: String { host.absoluteString }

    /// `api PATH` and `send` resolve paths on the host.
    public var apiBaseURL: URL? { host }

    /// Initech has no discovery: its endpoints are fixed paths on the host (`/oauth/authorize`,
    /// `/oauth/token`, `/api/me`, `/session/end`), with the configuration's overrides on top.
    public func loadMetadata(using transport: any HTTPTransport) async throws -> ProviderMetadata {
        func endpoint(_ path: String) throws -> URL {
            guard let url = URL(string: host.absoluteString + path) else {
                throw AuthError(.configurationInvalid, "the host \(host) cannot form endpoint URLs")
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

    /// Initech answers `{"status": "ok", "data": {"access_token": …, "expires_in": "3600", …}}`:
    /// the standard fields inside `"data"`. The shared path reads the envelope (HTTP errors and a
    /// body that is no JSON object go to the error mapper); the standard decoder reads what is
    /// inside, and it takes `expires_in` as a number or a numeric string.
    public func decodeTokenResponse(
        _ response: HTTPResponse,
        body: Data,
        context: TokenResponseDecoder.Context
    ) throws -> TokenSet {
        try TokenResponseDecoder.decodeSuccessful(
            response,
            body: body,
            operation: context.operation,
            requiredKey: "data",
            errorMapper: errorMapper
        ) { envelope in
            guard let data = try envelope.object("data") else {
                throw JSONFieldError(key: "data", problem: .missing)
            }
            return try TokenResponseDecoder.decode(data, context: context)
        }
    }

    /// `GET /api/me` answers `{"data": {"sub": …, "name": …}}`: the claims are inside `"data"`.
    public func decodeUserInfo(_ claims: JSONObject) throws -> UserInfo {
        try UserInfo(claims: try claims.object("data") ?? claims)
    }

    /// Initech's logout page, `HOST/session/end?client=…&return_to=…&state=…`, which sends the
    /// browser back to `return_to` with the `state`, so the loopback presenter can wait for it.
    public func endSessionURL(
        metadata: ProviderMetadata,
        idToken: String?,
        postLogoutRedirectURI: URL?,
        state: String
    ) -> URL? {
        guard let endpoint = metadata.endSessionEndpoint else { return nil }
        var fields = [FormField("client", configuration.clientID)]
        if let postLogoutRedirectURI { fields.append(FormField("return_to", postLogoutRedirectURI.absoluteString)) }
        fields.append(FormField("state", state))
        return FormURLEncoding.url(endpoint.absoluteString, adding: fields)
    }

    /// Initech's error codes; see ``InitechErrorMapper``.
    public var errorMapper: any ErrorMapper { InitechErrorMapper() }
}
