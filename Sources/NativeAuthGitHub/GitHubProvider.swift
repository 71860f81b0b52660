public import Foundation
public import HTTPTypes
public import LenientJSON
@_spi(Provider) public import NativeAuth

/// GitHub OAuth apps and GitHub Apps on github.com and GitHub Enterprise Server.
///
/// - Endpoints are static (GitHub has no discovery): `HOST/login/oauth/authorize`,
///   `HOST/login/oauth/access_token` and `HOST/login/device/code`, with `HOST` from the
///   configuration's `host` (`ProviderSetting.githubHost`, default `https://github.com`).
///   The API is ``apiBaseURL``: `https://api.github.com` for github.com and `HOST/api/v3` for a
///   server of your own; `userInfo()` is `GET /user`, whose `id` and `login` become `sub` and
///   `preferred_username`.
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

    /// `host`.
    public static let settings: [ProviderSetting] = [Setting.githubHost.declaration]

    public let configuration: ProviderConfiguration
    /// The web host: `https://github.com`, or a GitHub Enterprise Server.
    public let host: URL

    /// Builds the provider; `host` defaults to `https://github.com`.
    ///
    /// - Throws: `AuthError` (field `host`) when `host` is not an `https` URL.
    public init(configuration: ProviderConfiguration) throws {
        self.configuration = configuration
        self.host = try configuration.value(of: .githubHost) ?? Setting.githubHost.parse("https://github.com")
    }

    /// Whether this is github.com rather than an Enterprise Server.
    public var isGitHubDotCom: Bool { host.host?.lowercased() == "github.com" }

    /// The user name git sends with an access token as the password over HTTPS, as GitHub's
    /// documentation writes it for app tokens (`https://x-access-token:TOKEN@github.com/…`); GitHub
    /// reads only the password.
    public static let gitUsername = "x-access-token"

    /// Tokens are stored under the host: GitHub has no issuer.
    public var tokenIssuer: String { host.absoluteString }

    /// Where GitHub's REST API is: `https://api.github.com`, or `HOST/api/v3` on an Enterprise Server.
    public var apiBaseURL: URL? {
        isGitHubDotCom ? URL(string: "https://api.github.com") : URL(string: host.absoluteString + "/api/v3")
    }

    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        let base = host.absoluteString
        guard let authorize = URL(string: base + "/login/oauth/authorize"),
            let token = URL(string: base + "/login/oauth/access_token"),
            let device = URL(string: base + "/login/device/code")
        else {
            throw AuthError.invalid(Setting.githubHost, "cannot form endpoint URLs (\(base))")
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

    /// JSON answers, the client id in the form, and the client secret except in the device flow
    /// (which GitHub runs without one).
    public func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata) {
        request.headerFields[.accept] = "application/json"
        let isDeviceFlow = request.operation == .deviceAuthorization || request.grant == .deviceCode
        request.setForm("client_id", configuration.clientID)
        if !isDeviceFlow, let secret = configuration.clientSecret, !secret.isEmpty {
            request.setForm("client_secret", secret)
        }
    }

    /// Reads an answer as GitHub sends it: form-encoded when it says so, else JSON.
    public func parseBody(_ body: Data, of response: HTTPResponse) throws -> JSONObject? {
        let isForm = response.headerFields[.contentType]?.lowercased().hasPrefix(FormURLEncoding.mediaType) == true
        guard isForm else { return try JSONValue.parse(body).objectValue }
        return JSONObject(
            FormURLEncoding.decode(bytes: body).map { JSONObject.Member(key: $0.name, value: .string($0.value)) })
    }

    /// `GET /user` has no `sub`: the numeric `id` is the stable one, the `login` the readable one.
    public func fields(of object: JSONObject, for operation: AuthOperation) throws -> JSONObject {
        guard operation == .userInfo else { return object }
        var claims = object
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
        return claims
    }

    public var errorMapper: any ErrorMapper { GitHubErrorMapper() }
}

extension Setting where Value == URL {
    /// `host`: the GitHub web host (``GitHubProvider``), a server's base URL.
    public static let githubHost = Setting(
        "host", help: "A GitHub Enterprise Server URL (default: https://github.com).", valueName: "url",
        group: .provider, parse: .baseURL)
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}

/// GitHub's REST API is ``apiBaseURL``; git takes the access token on the web host as password
/// for ``gitUsername``.
extension GitHubProvider: ProviderService {
    public var gitHost: URL? { host }

    public var gitUsername: String { Self.gitUsername }
}
