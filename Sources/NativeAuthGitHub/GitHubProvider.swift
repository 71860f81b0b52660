public import Foundation
public import HTTPTypes
public import LenientJSON
public import NativeAuth

/// GitHub OAuth apps and GitHub Apps on github.com and GitHub Enterprise Server.
///
/// - Endpoints are static (GitHub has no discovery): `HOST/login/oauth/authorize`,
///   `HOST/login/oauth/access_token` and `HOST/login/device/code`, with `HOST` from the
///   configuration's `host` (default `https://github.com`). The API is `https://api.github.com`
///   for github.com and `HOST/api/v3` for a server of your own; `userInfo()` is `GET /user`.
/// - Token answers are read whether they come as JSON or form-encoded, and an `error` in an HTTP
///   200 body is an error (``GitHubErrorMapper`` gives GitHub's codes their meaning).
/// - `scope` comes comma-separated; tokens with and without `expires_in` (and a refresh token) work.
/// - A client secret is sent on the code exchange and refresh (GitHub treats every OAuth app as
///   confidential, even with PKCE), never with the device flow.
/// - There is no OpenID Connect: no ID token, no nonce.
///
/// ```swift
/// var registry = ProviderRegistry()
/// try registry.register(GitHubProvider.self)
/// ```
public struct GitHubProvider: AuthProvider {
    /// `"github"`.
    public static let id = "github"

    public let configuration: ProviderConfiguration
    /// The web host: `https://github.com`, or a GitHub Enterprise Server.
    public let host: URL

    /// Builds the provider; `host` (in ``ProviderConfiguration/additional``) defaults to
    /// `https://github.com`.
    public init(configuration: ProviderConfiguration) throws {
        let text = (try? configuration.additional.string("host")) ?? nil
        guard let host = URL(string: (text ?? "https://github.com").trimmingSuffix("/")), host.host != nil,
            host.scheme == "https" || host.scheme == "http"
        else {
            throw AuthError(
                .configurationInvalid,
                "the field \"host\" is not a URL",
                hint: "set it like --host https://github.example.com"
            )
        }
        self.configuration = configuration
        self.host = host
    }

    /// Whether this is github.com rather than an Enterprise Server.
    public var isGitHubDotCom: Bool { host.host?.lowercased() == "github.com" }

    public var tokenIssuer: String { host.absoluteString }

    public var apiBaseURL: URL? {
        isGitHubDotCom ? URL(string: "https://api.github.com") : URL(string: host.absoluteString + "/api/v3")
    }

    public func loadMetadata(using transport: any HTTPTransport) async throws -> ProviderMetadata {
        let base = host.absoluteString
        guard let authorize = URL(string: base + "/login/oauth/authorize"),
            let token = URL(string: base + "/login/oauth/access_token"),
            let device = URL(string: base + "/login/device/code")
        else {
            throw AuthError(.configurationInvalid, "the GitHub host \(base) cannot form endpoint URLs")
        }
        try EndpointPolicy.validate(token)
        return ProviderMetadata(
            issuer: nil,
            authorizationEndpoint: authorize,
            tokenEndpoint: token,
            userInfoEndpoint: apiBaseURL.flatMap { URL(string: $0.absoluteString + "/user") },
            deviceAuthorizationEndpoint: device,
            codeChallengeMethodsSupported: ["S256"]
        )
        .applying(configuration.endpoints)
    }

    public func prepareTokenRequest(_ request: inout TokenRequest, metadata: ProviderMetadata) {
        request.headerFields[.accept] = "application/json"
        let isDeviceFlow =
            request.operation == .deviceAuthorization
            || request.form.contains { $0.name == "grant_type" && $0.value.hasSuffix(":device_code") }
        request.setForm("client_id", configuration.clientID)
        if !isDeviceFlow, let secret = configuration.clientSecret, !secret.isEmpty {
            request.setForm("client_secret", secret)
        }
    }

    public func decodeTokenResponse(
        _ response: HTTPResponse,
        body: Data,
        context: TokenResponseDecoder.Context
    ) throws -> TokenSet {
        try TokenResponseDecoder.decodeSuccessful(
            response,
            body: body,
            operation: context.operation,
            requiredKey: "access_token",
            errorMapper: errorMapper,
            parse: Self.parser(for: response)
        ) { object in try TokenResponseDecoder.decode(object, context: context) }
    }

    public func decodeDeviceAuthorizationResponse(_ response: HTTPResponse, body: Data) throws -> DeviceAuthorization {
        try TokenResponseDecoder.decodeSuccessful(
            response,
            body: body,
            operation: .deviceAuthorization,
            requiredKey: "device_code",
            errorMapper: errorMapper,
            parse: Self.parser(for: response),
            build: DeviceAuthorization.decode
        )
    }

    public func decodeUserInfo(_ claims: JSONObject) throws -> UserInfo {
        // GET /user has no `sub`: the numeric id is the stable one, the login the readable one.
        var claims = claims
        if claims["sub"] == nil, let id = claims["id"] {
            switch id {
            case .integer(let number): claims["sub"] = .string(String(number))
            case .string(let text): claims["sub"] = .string(text)
            default: break
            }
        }
        if claims["preferred_username"] == nil, let login = try? claims.string("login") {
            claims["preferred_username"] = .string(login)
        }
        return try UserInfo(claims: claims)
    }

    public var errorMapper: any ErrorMapper { GitHubErrorMapper() }

    /// Reads an answer as GitHub sends it: form-encoded when it says so, else JSON.
    static func parser(for response: HTTPResponse) -> (Data) throws -> JSONObject? {
        let isForm = response.headerFields[.contentType]?.lowercased().hasPrefix(FormURLEncoding.mediaType) == true
        guard isForm else { return { try JSONValue.parse($0).objectValue } }
        return { body in
            JSONObject(
                FormURLEncoding.decode(bytes: body).map { JSONObject.Member(key: $0.name, value: .string($0.value)) })
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
