public import Foundation
internal import LenientJSON
@_spi(Provider) public import NativeAuth

/// Keycloak (and Red Hat build of Keycloak): one realm of a Keycloak server.
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `base_url` and `realm` give the issuer `BASE_URL/realms/REALM` (Keycloak 17 and later; for
///   the older `/auth` context path, give `https://host/auth` as the base URL). An `issuer` given
///   directly wins.
/// - `offline_tokens`: `true` asks for `offline_access`, an offline token that outlives the SSO
///   session (and survives a server restart); Keycloak then answers `refresh_expires_in: 0`.
/// - `idp_hint`: an identity provider alias sent as `kc_idp_hint`, which skips Keycloak's own login
///   page and goes straight to that provider (a social login, a corporate IdP).
///
/// Everything else is standard OpenID Connect, from the realm's discovery document: the device
/// flow (when the client has "OAuth 2.0 Device Authorization Grant" on), revocation, RP-initiated
/// logout with `id_token_hint` and `client_id` (Keycloak 18 and later want one of them with
/// `post_logout_redirect_uri`), and the realm's pushed authorization requests and DPoP, which the
/// core honours from the metadata (`require_pushed_authorization_requests`,
/// `dpop_signing_alg_values_supported`). `refresh_expires_in` becomes
/// ``TokenSet/refreshExpiresAt`` (the SSO session's idle limit; `status` shows it), 0 meaning none.
/// Keycloak's `invalid_grant` descriptions are mapped to what ended the session
/// (``KeycloakErrorMapper``).
public struct KeycloakProvider: AuthProvider {
    /// `"keycloak"`.
    public static let id = "keycloak"

    /// `false`: Keycloak issues an offline token for `offline_access` under the client's own consent setting; `prompt=consent` would show a consent page at every sign-in.
    public var offlineAccessNeedsConsent: Bool { false }

    /// `base_url`, `realm`, `offline_tokens` and `idp_hint`.
    public static let settings: [ProviderSetting] = [
        Setting.keycloakBaseURL.declaration, Setting.keycloakRealm.declaration,
        Setting.keycloakOfflineTokens.declaration, Setting.keycloakIdentityProviderHint.declaration,
    ]

    public let configuration: ProviderConfiguration
    /// The identity provider alias sent as `kc_idp_hint`, when configured.
    public let identityProviderHint: String?

    /// Builds the provider; it needs an issuer, or a base URL and a realm.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        if configuration.issuer == nil {
            guard let base = try configuration.value(of: .keycloakBaseURL) else {
                throw AuthError(
                    .configurationInvalid,
                    "the field \"base_url\" is missing (with \"realm\", or an \"issuer\")",
                    hint: "set the server's base URL and the realm, or the realm's issuer",
                    field: Setting.keycloakBaseURL.key)
            }
            guard let realm = try configuration.value(of: .keycloakRealm) else {
                throw AuthError.missing(Setting.keycloakRealm)
            }
            guard let issuer = URL(string: base.absoluteString + "/realms/" + realm) else {
                throw AuthError.invalid(Setting.keycloakRealm, "is not a realm name")
            }
            configuration.issuer = issuer
        }
        let offline = try configuration.value(of: .keycloakOfflineTokens) ?? false
        if offline, !configuration.scopes.contains("offline_access") { configuration.scopes.append("offline_access") }
        identityProviderHint = try configuration.value(of: .keycloakIdentityProviderHint)
        self.configuration = configuration
    }

    /// Discovery from the realm's issuer. Keycloak's `revocation_endpoint_auth_methods_supported`
    /// lists only confidential clients' methods, yet its revocation endpoint takes a public
    /// client's `client_id` alone: `none` is added, so that a public client's logout revokes.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        if var methods = (try? metadata.document.stringList("revocation_endpoint_auth_methods_supported")) ?? nil,
            !methods.contains("none")
        {
            methods.append("none")
            metadata.document["revocation_endpoint_auth_methods_supported"] = .array(methods.map(JSONValue.string))
        }
        return metadata
    }

    /// `kc_idp_hint`, when configured.
    public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] {
        identityProviderHint.map { [FormField("kc_idp_hint", $0)] } ?? []
    }

    public var errorMapper: any ErrorMapper { KeycloakErrorMapper() }
}

/// Keycloak's `error_description`s, on top of the standard mapping: what ended a session, and
/// what a client's settings lack.
///
/// | Keycloak says | NativeAuth |
/// | --- | --- |
/// | `invalid_grant` "Session not active", "Token is not active", "Stale token" at refresh | ``AuthError/Code/loginRequired``: the SSO session ended (idle or max time, logout, or an administrator) |
/// | `invalid_grant` "Offline user session not found", "Offline session not active" | ``AuthError/Code/loginRequired``: the offline token was revoked or expired |
/// | `unauthorized_client` "Client not allowed for direct access grants" and the like | ``AuthError/Code/configurationInvalid``, naming the client setting |
/// | `invalid_client` "Invalid client credentials" / "Invalid client or Invalid client credentials" | ``AuthError/Code/configurationInvalid`` |
public struct KeycloakErrorMapper: ErrorMapper {
    /// Creates the mapper.
    public init() {}

    public func map(_ failure: AuthFailure) -> AuthError? {
        guard let oauth = failure.oauthError else { return nil }
        let description = (oauth.errorDescription ?? "").lowercased()
        switch oauth.error {
        case "invalid_grant" where description.contains("offline"):
            return failure.mapped(
                .loginRequired, "the offline token was revoked or expired at Keycloak",
                hint: "sign in again (an administrator or the account console may have revoked it)")
        case "invalid_grant"
        where failure.operation == .refresh
            && ["session not active", "token is not active", "stale token", "session doesn't have required client"]
                .contains(where: description.contains):
            return failure.mapped(
                .loginRequired, "the Keycloak session ended (idle or maximum time, a logout, or an administrator)",
                hint: "sign in again; for tokens that outlive the session, set offline_tokens")
        case "unauthorized_client":
            return failure.mapped(
                .configurationInvalid, "the Keycloak client is not allowed this flow",
                hint: "in the client's settings, turn on the flow it refused (Standard flow, OAuth 2.0 Device"
                    + " Authorization Grant, Service accounts)")
        default:
            return nil
        }
    }
}

extension Setting where Value == URL {
    /// `base_url`: the Keycloak server (``KeycloakProvider``), a server's base URL.
    public static let keycloakBaseURL = Setting(
        "base_url", help: "The Keycloak server's URL, like https://sso.example.com (with /auth for old servers).",
        valueName: "url", group: .provider, parse: .baseURL)
}

extension Setting where Value == String {
    /// `realm`: the realm (``KeycloakProvider``), percent-encoded for the issuer's path.
    public static let keycloakRealm = Setting(
        "realm", help: "The realm, like myrealm.", group: .provider,
        parse: SettingParser { text, setting throws(AuthError) in
            guard !text.contains("/"),
                let encoded = text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"]))
            else { throw AuthError.invalid(setting, "is not a realm name") }
            return encoded
        })
    /// `idp_hint`: the identity provider to go to at once (``KeycloakProvider``).
    public static let keycloakIdentityProviderHint = Setting(
        "idp_hint", help: "An identity provider alias, sent as kc_idp_hint.", group: .provider, parse: .text)
}

extension Setting where Value == Bool {
    /// `offline_tokens`: whether to ask for offline tokens (``KeycloakProvider``).
    public static let keycloakOfflineTokens = Setting(
        "offline_tokens", help: "true to ask for an offline token (offline_access), which outlives the session.",
        group: .provider, parse: .boolean)
}

/// The claim a Kubernetes API server takes as the user name: `preferred_username`, the realm's user name.
extension KeycloakProvider: ProviderService {
    public var kubernetesUsernameClaim: String { "preferred_username" }
}
