public import Foundation
@_spi(Provider) public import NativeAuth

/// Microsoft Entra ID (the Microsoft identity platform, v2.0 endpoints).
///
/// Configuration (``ProviderConfiguration`` and the keys declared in ``settings``):
/// - `tenant`: a tenant id (a GUID), one of its domains (`contoso.onmicrosoft.com`), or one of the
///   multi-tenant authorities `common` (work, school and personal accounts), `organizations` (work
///   and school) or `consumers` (personal). The issuer is `https://login.microsoftonline.com/TENANT/v2.0`;
///   an `issuer` given directly wins, and names the tenant in its path.
/// - `authority_host`: another cloud's sign-in host (`https://login.microsoftonline.us`, or a
///   stand-in in tests). Default `https://login.microsoftonline.com`.
///
/// What it does differently from a generic OpenID Connect server, each from Microsoft's documentation:
/// - **Multi-tenant issuers.** The discovery document of `common`, `organizations` and
///   `consumers` names the issuer `https://login.microsoftonline.com/{tenantid}/v2.0`, a template.
///   Discovery accepts exactly that template, and an ID token's `iss` must be the template with its
///   own `tid` claim in it (``IDTokenValidationOptions/tenantIssuerTemplate``): the check stays on,
///   and a token whose `iss` names another tenant than its `tid` is refused. A tenant id or domain
///   is checked exactly, as any issuer.
/// - **Refresh tokens need `offline_access`**, which is added to the scopes; and every refresh
///   sends the scopes (`scope`), which the v2.0 token endpoint wants (a refresh for one resource's
///   `.default` scope asks for that resource).
/// - **`.default` scopes** (`api://APP/.default`, `https://graph.microsoft.com/.default`) are sent as
///   they are; they ask for every permission the app was granted for that resource.
/// - **The device flow**: Entra's discovery does not list a device authorization endpoint; it is
///   `…/TENANT/oauth2/v2.0/devicecode`.
/// - **Errors** carry `AADSTS` codes in `error_description` (and `error_codes`): they are mapped to
///   clear messages and hints (``EntraErrorMapper``); a `claims` challenge at the token endpoint
///   becomes a step-up (``AuthError/stepUp``), like one from an API.
/// - **Logout**: RP-initiated logout at the discovery's `end_session_endpoint`, which comes back
///   to a registered `post_logout_redirect_uri`.
/// - No revocation endpoint exists: `logout` removes the tokens and ends the session.
public struct EntraProvider: AuthProvider {
    /// `"entra"`.
    public static let id = "entra"

    /// `false`: Microsoft Entra issues a refresh token for `offline_access` once the app is consented; `prompt=consent` would show the consent page at every sign-in.
    public var offlineAccessNeedsConsent: Bool { false }
    /// The sign-in host of Microsoft's global cloud.
    public static let defaultAuthorityHost = "https://login.microsoftonline.com"
    /// The multi-tenant authorities, whose issuer is a template.
    public static let multiTenantAuthorities: Set<String> = ["common", "organizations", "consumers"]

    /// Microsoft Graph's v1.0 API, where an app's calls usually go.
    public static let defaultGraphURL = "https://graph.microsoft.com/v1.0"

    /// `tenant`, `authority_host` and `graph_url`.
    public static let settings: [ProviderSetting] = [
        Setting.entraTenant.declaration, Setting.entraAuthorityHost.declaration, Setting.entraGraphURL.declaration,
    ]

    public let configuration: ProviderConfiguration
    /// The tenant: an id, a domain, or `common`, `organizations` or `consumers`.
    public let tenant: String
    /// Where the tenant's endpoints are: `https://login.microsoftonline.com/TENANT`.
    public let authority: URL
    /// The sign-in host: `https://login.microsoftonline.com`.
    public let authorityHost: URL
    /// Microsoft Graph's base URL, for API calls by path: `https://graph.microsoft.com/v1.0`.
    public let graphURL: URL

    /// Whether the tenant is a multi-tenant authority (`common`, `organizations`, `consumers`).
    public var isMultiTenant: Bool { Self.multiTenantAuthorities.contains(tenant.lowercased()) }

    /// Builds the provider; it needs a tenant, or an issuer that names one.
    public init(configuration: ProviderConfiguration) throws {
        var configuration = configuration
        let base =
            try configuration.value(of: .entraAuthorityHost)
            ?? Setting.entraAuthorityHost.parse(Self.defaultAuthorityHost)
        let tenant: String
        if let configured = try configuration.value(of: .entraTenant) {
            tenant = configured
        } else if let issuer = configuration.issuer, let first = issuer.pathComponents.dropFirst().first {
            tenant = try Setting.entraTenant.parse(first)
        } else {
            throw AuthError(
                .configurationInvalid,
                "the field \"tenant\" is missing (or an \"issuer\" that names the tenant)",
                hint: "set the tenant: its id or domain, or common, organizations or consumers",
                field: Setting.entraTenant.key
            )
        }
        self.tenant = tenant
        guard let authority = URL(string: base.absoluteString + "/" + tenant) else {
            throw AuthError.invalid(Setting.entraTenant, "does not make a URL")
        }
        self.authority = authority
        self.authorityHost = base
        self.graphURL =
            try configuration.value(of: .entraGraphURL) ?? Setting.entraGraphURL.parse(Self.defaultGraphURL)
        if configuration.issuer == nil { configuration.issuer = URL(string: authority.absoluteString + "/v2.0") }
        // A refresh token comes only with offline_access.
        if !configuration.scopes.contains("offline_access") { configuration.scopes.append("offline_access") }
        self.configuration = configuration
    }

    /// The issuer the discovery document of a multi-tenant authority names, and ID tokens fill in
    /// with their `tid`: `…/{tenantid}/v2.0`. `nil` for a single tenant.
    public var tenantIssuerTemplate: String? {
        guard isMultiTenant, let issuer = configuration.issuer?.absoluteString,
            issuer.hasPrefix(authority.absoluteString)
        else { return nil }
        return authorityHost.absoluteString + "/{tenantid}" + issuer.dropFirst(authority.absoluteString.count)
    }

    /// Discovery from the tenant's issuer, and the device authorization endpoint Entra's discovery
    /// leaves out. The document must name the issuer exactly; a multi-tenant authority's names the
    /// template (``tenantIssuerTemplate``), and a tenant's domain names the tenant's id
    /// (`…/GUID/v2.0`), which ID tokens must then name.
    public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
        guard let issuer = configuration.issuer else { throw AuthError.missing(.issuer) }
        let configured = issuer.absoluteString
        let template = tenantIssuerTemplate
        let byDomain = tenant.contains(".") && configured.hasPrefix(authority.absoluteString)
        let host = authorityHost.absoluteString
        let suffix = String(configured.dropFirst(authority.absoluteString.count))
        var metadata = try await loader.discover(
            issuer: issuer,
            acceptsStatedIssuer: { stated in
                if let template { return stated == template }
                if stated == configured { return true }
                guard byDomain, stated.hasPrefix(host + "/"), stated.hasSuffix(suffix) else { return false }
                let id = stated.dropFirst(host.count + 1).dropLast(suffix.count)
                return Self.isTenantID(id)
            },
            overrides: configuration.endpoints)
        if metadata.deviceAuthorizationEndpoint == nil {
            metadata.deviceAuthorizationEndpoint = URL(string: authority.absoluteString + "/oauth2/v2.0/devicecode")
        }
        return metadata
    }

    /// The standard preparation, and `scope` on every refresh that does not name one.
    public func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata) {
        request.applyStandardPreparation(configuration: configuration, metadata: metadata)
        if request.operation == .refresh, !request.form.contains(where: { $0.name == "scope" }),
            !configuration.scopes.isEmpty
        {
            request.form.append(FormField("scope", configuration.scopes.joined(separator: " ")))
        }
    }

    public var errorMapper: any ErrorMapper { EntraErrorMapper() }

    /// Whether `text` is a tenant id: a GUID, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hex digits.
    static func isTenantID(_ text: some StringProtocol) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.allSatisfy { $0.isHexDigit } }
    }

    public var idTokenValidation: IDTokenValidationOptions {
        IDTokenValidationOptions(tenantIssuerTemplate: tenantIssuerTemplate)
    }
}

extension Setting where Value == String {
    /// `tenant`: the Microsoft Entra tenant (``EntraProvider``). A tenant id is a GUID and a domain
    /// is a host name: nothing else may reach a URL path.
    public static let entraTenant = Setting(
        "tenant", help: "The tenant: its id or domain, or common, organizations or consumers.", group: .provider,
        parse: .name(allowing: "-.", kind: "a tenant id, a domain, or common, organizations or consumers"))
}

extension Setting where Value == URL {
    /// `authority_host`: the sign-in host of another Microsoft cloud (``EntraProvider``).
    public static let entraAuthorityHost = Setting(
        "authority_host", help: "The sign-in host, default https://login.microsoftonline.com.", valueName: "url",
        group: .provider, parse: .baseURL)
    /// `graph_url`: Microsoft Graph's base URL in another cloud (``EntraProvider``).
    public static let entraGraphURL = Setting(
        "graph_url", help: "Microsoft Graph's base URL, default https://graph.microsoft.com/v1.0.",
        valueName: "url", group: .provider, parse: .baseURL)
}

/// The API is Microsoft Graph (``graphURL``).
extension EntraProvider: ProviderService {
    public var apiBaseURL: URL? { graphURL }
    /// `oid`: the object id, which stays when the person's name or address changes (Microsoft's
    /// advice for authorization).
    public var kubernetesUsernameClaim: String { "oid" }
}
