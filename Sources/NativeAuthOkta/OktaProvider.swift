internal import Foundation
internal import LenientJSON
@_spi(Provider) public import NativeAuth

/// Okta: an org's own authorization server, or one of its custom authorization servers.
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `domain`: the org, like `acme.okta.com` (or its custom URL domain).
/// - `authorization_server`: `default` (the default, the custom server every org has:
///   `https://DOMAIN/oauth2/default`), a custom server's id (`aus…`: `https://DOMAIN/oauth2/ID`),
///   or `org` for the org authorization server (`https://DOMAIN`), whose access tokens are for
///   Okta's own APIs only and cannot be validated by yours.
/// - An `issuer` given directly wins.
///
/// Okta announces DPoP and pushed authorization requests on every server, but binds tokens only
/// for apps set to "Require DPoP", and documents pushed requests for confidential apps: neither is
/// used unless the configuration says `required` (`dpop`, `pushed_authorization_requests`), so a
/// native app's sign-in works as Okta sets it up by default.
///
/// `offline_access` is added for a refresh token. The device flow (`/v1/device/authorize`),
/// revocation (`/v1/revoke`) and logout (`/v1/logout`, which wants `id_token_hint`) come from the
/// server's discovery. Okta's refusals ("Policy evaluation failed", a scope the server does not
/// have, a grant type the app lacks) are mapped to hints (``OktaErrorMapper``).
public struct OktaProvider: AuthProvider {
    /// `"okta"`.
    public static let id = "okta"

    /// `false`: Okta issues a refresh token for `offline_access` when the app has the refresh token grant, with no consent asked; `prompt=consent` would show a consent page at every sign-in.
    public var offlineAccessNeedsConsent: Bool { false }

    /// `domain` and `authorization_server`.
    public static let settings: [ProviderSetting] = [
        Setting.oktaDomain.declaration, Setting.oktaAuthorizationServer.declaration,
    ]

    /// `false`: Okta binds tokens only for apps that require DPoP; `dpop: required` turns it on.
    public static var supportsDPoP: Bool { false }

    public let configuration: ProviderConfiguration
    /// Whether the issuer is the org authorization server (not a custom one).
    public let isOrgAuthorizationServer: Bool

    /// Builds the provider; it needs a domain or an issuer.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        if let issuer = configuration.issuer {
            isOrgAuthorizationServer = !issuer.path.hasPrefix("/oauth2/")
        } else {
            guard let domain = try configuration.value(of: .oktaDomain) else {
                throw AuthError.missing(Setting.oktaDomain)
            }
            let server = try configuration.value(of: .oktaAuthorizationServer) ?? "default"
            isOrgAuthorizationServer = server == "org"
            configuration.issuer = URL(
                string: "https://\(domain)" + (isOrgAuthorizationServer ? "" : "/oauth2/\(server)"))
        }
        if !configuration.scopes.contains("offline_access") { configuration.scopes.append("offline_access") }
        self.configuration = configuration
    }

    /// Discovery, without the pushed authorization request endpoint unless the configuration
    /// requires pushed requests.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        var metadata = try await loader.discover()
        if configuration.pushedAuthorizationRequests != .required, !metadata.requiresPushedAuthorizationRequests {
            metadata.pushedAuthorizationRequestEndpoint = nil
        }
        return metadata
    }

    public var errorMapper: any ErrorMapper { OktaErrorMapper() }
}

/// Okta's refusals, on top of the standard mapping (Okta's "OAuth 2.0 and OpenID Connect API"
/// error reference, and the `errorCode`/`errorSummary` bodies of its management API).
///
/// | Okta says | NativeAuth |
/// | --- | --- |
/// | `access_denied` "Policy evaluation failed for this request" | ``AuthError/Code/configurationInvalid``: no access policy rule lets this client use this grant |
/// | `invalid_scope` | the operation's code, with a hint about the authorization server's scopes |
/// | `unauthorized_client` "… Configured grant types: […]" | ``AuthError/Code/configurationInvalid``, naming the app's grant types |
/// | `errorCode` `E0000011` (invalid token) from an API | ``AuthError/Code/invalidToken`` |
public struct OktaErrorMapper: ErrorMapper {
    /// Creates the mapper.
    public init() {}

    public func map(_ failure: AuthFailure) -> AuthError? {
        if failure.operation == .apiRequest || failure.operation == .userInfo, failure.status == 401,
            let body = failure.body, let object = try? JSONValue.parse(body).objectValue,
            (try? object.string("errorCode")) == "E0000011"
        {
            return AuthError(
                .invalidToken, "Okta refused the access token (E0000011)",
                hint: "tokens of the org authorization server are for Okta's APIs; for your API use a custom one"
                    + " (authorization_server default or its id)",
                operation: failure.operation, status: 401)
        }
        guard let oauth = failure.oauthError else { return nil }
        let description = (oauth.errorDescription ?? "").lowercased()
        switch oauth.error {
        case "access_denied" where description.contains("policy evaluation failed"):
            return failure.mapped(
                .configurationInvalid, "no access policy of the Okta authorization server lets this client do this",
                hint: "add a rule for this app and grant type to the authorization server's Access Policies")
        case "invalid_scope":
            return failure.mapped(
                failure.operation.defaultErrorCode, "the Okta authorization server does not have a requested scope",
                hint: "add the scope to the authorization server's Scopes, or ask only for those it has (the org"
                    + " server has only OpenID Connect and okta.* scopes)")
        case "unauthorized_client" where description.contains("grant type"):
            return failure.mapped(
                .configurationInvalid, "the Okta app may not use this grant type",
                hint: "allow the grant type in the app's General Settings (Refresh Token, Device Authorization)")
        default:
            return nil
        }
    }
}

extension Setting where Value == String {
    /// `domain`: the Okta org (``OktaProvider``).
    public static let oktaDomain = Setting(
        "domain", help: "The Okta org's domain, like acme.okta.com.", group: .provider, parse: .domain)
    /// `authorization_server`: `default`, a custom server's id, or `org` (``OktaProvider``).
    public static let oktaAuthorizationServer = Setting(
        "authorization_server", help: "default (the default), a custom authorization server's id, or org.",
        group: .provider, parse: .name(allowing: "-_", kind: "default, org or a server id"))
}

/// The claim a Kubernetes API server takes as the user name: `email`, the person's address, in the ID token with the `email` scope.
extension OktaProvider: ProviderService {
    public var kubernetesUsernameClaim: String { "email" }
}
