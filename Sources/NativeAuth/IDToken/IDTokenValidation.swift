public import Foundation

/// How a provider's ID tokens are validated: the leeway for clock skew, and opt-outs for servers
/// that cannot comply.
///
/// Every check is on by default. Each opt-out is named for what it gives up, is documented here,
/// and is logged at warning level each time it is used; use one only for a server that cannot be
/// fixed, and say why in the provider module.
public struct IDTokenValidationOptions: Sendable, Equatable {
    /// The clock skew tolerated for `exp`, `iat` and `auth_time`. Default 60 seconds.
    public var leeway: TimeInterval

    /// Accepts ID tokens whose signature is not checked. **Insecure**: anyone who can hand the
    /// client a token can claim any identity. Only for servers whose JWKS is unreachable.
    public var insecureSkipSignatureCheck: Bool

    /// Accepts an `iss` that differs from the configured issuer (some multi-tenant servers put a
    /// tenant-specific issuer in the token). The signature and audience are still checked.
    public var allowIssuerMismatch: Bool

    /// Accepts extra audiences that are not in ``trustedAudiences``.
    public var allowUntrustedAudiences: Bool

    /// Accepts a sign-in that asked for `openid` but got no ID token (a server that is OAuth only
    /// for this client). Nobody is named as signed in then.
    public var allowMissingIDToken: Bool

    /// The audiences an ID token may name besides the client id (OIDC Core §3.1.3.7: the client
    /// rejects audiences it does not trust). Not an opt-out: only these exact values.
    public var trustedAudiences: Set<String>

    /// The JWS algorithms this provider's ID tokens may be signed with; `nil`, the default: every
    /// one OpenID Connect names (RS, PS and ES with SHA-256, -384 and -512, EdDSA, and for a
    /// confidential client HS256–HS512 keyed by its secret). A provider narrows it to what its
    /// server uses; it never widens it: `none` is never accepted, nor HS* for a public client.
    public var allowedAlgorithms: Set<String>?

    /// Other spellings of the issuer that the provider documents for `iss` (Google:
    /// `accounts.google.com` beside `https://accounts.google.com`). Not an opt-out: only these
    /// exact values are accepted besides the issuer.
    public var issuerAliases: Set<String>

    /// For a multi-tenant authority (Microsoft Entra's `common`, `organizations`, `consumers`): the
    /// issuer with `{tenantid}` in place of the tenant, as its discovery document names it. An
    /// `iss` is then accepted when it is this template with `{tenantid}` replaced by the token's own
    /// `tid` claim (letters, digits, `-` and `.` only), as Microsoft documents for multi-tenant
    /// apps. Not an opt-out: a token whose `iss` and `tid` disagree, or without `tid`, is refused.
    public var tenantIssuerTemplate: String?

    /// Creates options; every check is on unless turned off here.
    public init(
        leeway: TimeInterval = 60,
        insecureSkipSignatureCheck: Bool = false,
        allowIssuerMismatch: Bool = false,
        allowUntrustedAudiences: Bool = false,
        issuerAliases: Set<String> = [],
        allowMissingIDToken: Bool = false,
        trustedAudiences: Set<String> = [],
        tenantIssuerTemplate: String? = nil,
        allowedAlgorithms: Set<String>? = nil
    ) {
        self.allowedAlgorithms = allowedAlgorithms
        self.tenantIssuerTemplate = tenantIssuerTemplate
        self.leeway = leeway
        self.insecureSkipSignatureCheck = insecureSkipSignatureCheck
        self.allowIssuerMismatch = allowIssuerMismatch
        self.allowUntrustedAudiences = allowUntrustedAudiences
        self.issuerAliases = issuerAliases
        self.allowMissingIDToken = allowMissingIDToken
        self.trustedAudiences = trustedAudiences
    }

    /// The names of the opt-outs in use, for the warning logged with each validation.
    var optOuts: [String] {
        var names: [String] = []
        if insecureSkipSignatureCheck { names.append("insecureSkipSignatureCheck") }
        if allowIssuerMismatch { names.append("allowIssuerMismatch") }
        if allowUntrustedAudiences { names.append("allowUntrustedAudiences") }
        if allowMissingIDToken { names.append("allowMissingIDToken") }
        return names
    }
}

/// What the ID token is checked against.
struct IDTokenExpectations: Sendable {
    /// The issuer `iss` must equal.
    var issuer: String
    /// The client id `aud` must contain.
    var clientID: String
    /// The `nonce` sent with the authorization request; `nil` at refresh and for the device flow.
    var nonce: String?
    /// The access token issued with the ID token, for `at_hash`.
    var accessToken: String?
    /// The `max_age` sent with the authorization request, in seconds, if any.
    var maxAge: Int?
    /// The `acr_values` sent with the authorization request: `acr` must be one of them.
    var acrValues: [String] = []
    /// At refresh: the `sub` of the ID token being replaced, which the new one must repeat.
    var previousSubject: String?
    /// Whether the client has a secret (HS* tokens are refused for public clients).
    var isPublicClient: Bool
    /// The client secret, the key of HS256–HS512 tokens (OIDC Core §10.1). Secret.
    var clientSecret: String?
    /// The `id_token_signed_response_alg` the client is registered with: only that one is accepted.
    var registeredAlgorithm: String?
    /// The metadata's `id_token_signing_alg_values_supported`, when stated.
    var advertisedAlgorithms: [String]?

    /// Creates expectations.
    init(
        issuer: String,
        clientID: String,
        nonce: String?,
        accessToken: String?,
        maxAge: Int? = nil,
        previousSubject: String? = nil,
        isPublicClient: Bool,
        advertisedAlgorithms: [String]?
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.nonce = nonce
        self.accessToken = accessToken
        self.maxAge = maxAge
        self.previousSubject = previousSubject
        self.isPublicClient = isPublicClient
        self.advertisedAlgorithms = advertisedAlgorithms
    }
}
