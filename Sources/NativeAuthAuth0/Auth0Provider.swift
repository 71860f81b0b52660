internal import Foundation
@_spi(Provider) public import NativeAuth

/// Auth0: a tenant's domain (`acme.eu.auth0.com`) or its custom domain (`login.acme.com`).
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `domain`: the issuer is `https://DOMAIN/`, **with** the trailing slash Auth0 puts in `iss`
///   (an `issuer` given directly wins).
/// - `audience`: the identifier of the API the access token is for. Without it, Auth0 issues an
///   opaque access token that only its `/userinfo` takes; an API then refuses it, and `api` says
///   to set the audience (``Auth0ErrorMapper``). It is sent on the authorization and device
///   requests and with client credentials.
/// - `logout`: `oidc` (default) for RP-initiated logout at `/oidc/logout`, which returns to the app;
///   `legacy` for `/v2/logout?client_id=…`, which ends at the application's first allowed logout URL.
///
/// Refresh tokens come with `offline_access` (added to the scopes). Auth0's **refresh token
/// rotation** spends a refresh token at each refresh, and its **reuse detection** revokes every
/// token of the sign-in when a spent one comes back: NativeAuth's store lock makes every process
/// wait for the one refresh, so none is ever sent twice. The device flow and revocation come from
/// discovery.
public struct Auth0Provider: AuthProvider {
    /// `"auth0"`.
    public static let id = "auth0"

    /// `false`: Auth0 issues a refresh token for `offline_access` when the API allows offline access, with no consent asked; `prompt=consent` would show a consent page at every sign-in.
    public var offlineAccessNeedsConsent: Bool { false }

    /// `domain`, `audience` and `logout`.
    public static let settings: [ProviderSetting] = [
        Setting.auth0Domain.declaration, Setting.auth0Audience.declaration, Setting.auth0Logout.declaration,
    ]

    /// Which logout page ends the session: `/oidc/logout` (RP-Initiated Logout), or the older
    /// `/v2/logout`.
    public enum Logout: String, Sendable, CaseIterable {
        /// `/oidc/logout`, the default.
        case oidc
        /// `/v2/logout`.
        case legacy
    }

    public let configuration: ProviderConfiguration
    /// The API identifier access tokens are asked for, when configured.
    public let audience: String?
    /// Whether logout uses the legacy `/v2/logout` endpoint.
    public let usesLegacyLogout: Bool

    /// Builds the provider; it needs a domain or an issuer.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        if configuration.issuer == nil {
            guard let domain = try configuration.value(of: .auth0Domain) else {
                throw AuthError.missing(Setting.auth0Domain)
            }
            configuration.issuer = URL(string: "https://\(domain)/")
        }
        audience = try configuration.value(of: .auth0Audience)
        usesLegacyLogout = try configuration.value(of: .auth0Logout) == .legacy
        if !configuration.scopes.contains("offline_access") { configuration.scopes.append("offline_access") }
        self.configuration = configuration
    }

    /// `audience`, when configured.
    public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] {
        audience.map { [FormField("audience", $0)] } ?? []
    }

    /// The standard preparation, and `audience` on device and client-credentials requests.
    public func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata) {
        request.applyStandardPreparation(configuration: configuration, metadata: metadata)
        let wantsAudience = request.operation == .deviceAuthorization || request.grant == .clientCredentials
        if let audience, wantsAudience, !request.form.contains(where: { $0.name == "audience" }) {
            request.form.append(FormField("audience", audience))
        }
    }

    public var errorMapper: any ErrorMapper { Auth0ErrorMapper(hasAudience: audience != nil) }

    /// `/oidc/logout` (the default, from discovery) or the legacy `/v2/logout?client_id=…`.
    public func endSession(_ parameters: EndSessionParameters) -> EndSession? {
        guard usesLegacyLogout else {
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
        guard let issuer = configuration.issuer?.absoluteString else { return nil }
        return FormURLEncoding.url(issuer + "v2/logout", adding: [FormField("client_id", configuration.clientID)])
            .map(EndSession.endsElsewhere)
    }
}

/// Auth0's error answers, on top of the standard mapping.
///
/// | Auth0 says | NativeAuth |
/// | --- | --- |
/// | `access_denied` "Service not found" (the authorization redirect) or "Service not enabled within domain" (the token endpoint) | ``AuthError/Code/configurationInvalid``: no API has that audience |
/// | `unauthorized_client` "Grant type … not allowed for the client" | ``AuthError/Code/configurationInvalid``, naming the grant types setting |
/// | `invalid_grant` "Unknown or invalid refresh token" at refresh | ``AuthError/Code/loginRequired``, naming reuse detection |
/// | HTTP 401 from an API, without an audience configured | ``AuthError/Code/invalidToken``: the token is opaque, set the audience |
public struct Auth0ErrorMapper: ErrorMapper {
    /// Whether the provider asks for an audience.
    public let hasAudience: Bool

    /// Creates the mapper.
    public init(hasAudience: Bool) {
        self.hasAudience = hasAudience
    }

    public func map(_ failure: AuthFailure) -> AuthError? {
        if failure.operation == .apiRequest, failure.status == 401, !hasAudience {
            return AuthError(
                .invalidToken, "the API refused the access token",
                hint: "without an audience Auth0 issues an opaque access token that only its /userinfo takes: set"
                    + " audience (--audience) to the API's identifier and sign in again",
                operation: .apiRequest, status: 401)
        }
        guard let oauth = failure.oauthError else { return nil }
        let description = (oauth.errorDescription ?? "").lowercased()
        switch oauth.error {
        case "access_denied"
        where description.contains("service not enabled") || description.contains("service not found"):
            return failure.mapped(
                .configurationInvalid, "Auth0 knows no API with this audience",
                hint: "set audience to an API identifier from the tenant's APIs page")
        case "unauthorized_client" where description.contains("grant type"):
            return failure.mapped(
                .configurationInvalid, "the Auth0 application may not use this grant",
                hint: "turn the grant on in the application's Advanced Settings > Grant Types")
        case "invalid_grant" where failure.operation == .refresh:
            return failure.mapped(
                .loginRequired, "Auth0 no longer accepts the refresh token (expired, revoked, or reused)",
                hint: "sign in again; with rotation, a refresh token sent twice revokes every token of the sign-in")
        default:
            return nil
        }
    }
}

extension Setting where Value == String {
    /// `domain`: the Auth0 tenant's domain or custom domain (``Auth0Provider``).
    public static let auth0Domain = Setting(
        "domain", help: "The tenant's domain (acme.eu.auth0.com) or custom domain.", group: .provider,
        parse: .domain)
    /// `audience`: the API identifier (``Auth0Provider``).
    public static let auth0Audience = Setting(
        "audience", help: "The identifier of the API the access token is for.", group: .provider, parse: .text)
}

extension Setting where Value == Auth0Provider.Logout {
    /// `logout`: `oidc` or `legacy` (``Auth0Provider``).
    public static let auth0Logout = Setting(
        "logout", help: "oidc (default, /oidc/logout) or legacy (/v2/logout).", valueName: "oidc|legacy",
        group: .provider, parse: .cases())
}
