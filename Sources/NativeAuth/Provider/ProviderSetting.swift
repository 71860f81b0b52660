internal import Foundation

/// A configuration key, declared once: what it is called in a configuration file, what it is for,
/// and from that the command-line option and environment variable that set it.
///
/// The standard keys every provider reads are declared here (``issuer``, ``clientID``, …); a
/// provider declares its own in ``AuthProvider/settings`` and reads them with
/// ``ProviderConfiguration/value(of:)``. NativeAuthCommands turns every declared key into an
/// option (`--user-pool-id`), an environment variable (`NATIVEAUTH_USER_POOL_ID`) and the hint of
/// any ``AuthError`` whose ``AuthError/field`` names it.
///
/// ```swift
/// extension ProviderSetting {
///     static let tenant = ProviderSetting("tenant", help: "The Acme tenant, like main.")
/// }
/// struct AcmeProvider: AuthProvider {
///     static let settings: [ProviderSetting] = [.tenant]
///     …
///     init(configuration: ProviderConfiguration) throws {
///         tenant = try configuration.value(of: .tenant) ?? "main"
///     }
/// }
/// ```
public struct ProviderSetting: Sendable, Hashable, CustomStringConvertible {
    /// The key in a configuration file, snake_case: `user_pool_id`.
    public let key: String
    /// One sentence for people: what the value is, with an example or the default.
    public let help: String

    /// Declares a key.
    ///
    /// - Parameters:
    ///   - key: The snake_case key (letters, digits and `_`).
    ///   - help: What the value is.
    public init(_ key: String, help: String) {
        self.key = key
        self.help = help
    }

    /// The command-line option: `--` and the key with `-` for `_` (`--user-pool-id`).
    public var flag: String { "--" + key.replacingOccurrences(of: "_", with: "-") }

    /// The environment variable: `NATIVEAUTH_` and the key in capitals (`NATIVEAUTH_USER_POOL_ID`).
    public var environmentVariable: String { "NATIVEAUTH_" + key.uppercased() }

    public var description: String { key }
}

extension ProviderSetting {
    /// `issuer`: the issuer URL, exactly as the provider's metadata states it.
    public static let issuer = ProviderSetting("issuer", help: "The issuer URL of the authorization server.")
    /// `client_id`: the OAuth client id.
    public static let clientID = ProviderSetting("client_id", help: "The OAuth client id.")
    /// `client_secret`: the secret of a confidential client.
    public static let clientSecret = ProviderSetting(
        "client_secret",
        help: "The client secret, for confidential clients. On a command line it is visible to every user"
            + " (ps); prefer a file only you can read, or the environment.")
    /// `scope`: the scopes to ask for.
    public static let scope = ProviderSetting("scope", help: "The scopes to ask for, space-separated.")
    /// `client_auth`: how the client authenticates at the token endpoint.
    public static let clientAuthentication = ProviderSetting(
        "client_auth",
        help: "Client authentication: basic, post, none, tls (RFC 8705 mutual TLS, with --client-cert), private_key_jwt"
            + " (with --client-assertion-key) or secret_jwt.")
    /// `client_assertion_key`: the private key of `private_key_jwt`.
    public static let clientAssertionKey = ProviderSetting(
        "client_assertion_key",
        help: "A private key file (PEM or JWK: P-256, Ed25519, RSA) the client signs its token requests with"
            + " (private_key_jwt, RFC 7523); only you may read it.")
    /// `client_assertion_kid`: the `kid` the client's assertions carry.
    public static let clientAssertionKeyID = ProviderSetting(
        "client_assertion_kid", help: "The key id (kid) of the client assertion key, for servers that hold several.")

    /// `subject_token_file`: a workload's subject token, read from this file at each request.
    public static let subjectTokenFile = ProviderSetting(
        "subject_token_file",
        help: "A file holding the workload's token (a Kubernetes service-account token), traded for tokens (RFC 8693)"
            + " and read again at every request.")
    /// `subject_token_command`: a command whose output is a workload's subject token.
    public static let subjectTokenCommand = ProviderSetting(
        "subject_token_command",
        help: "A command (run without a shell) that prints the workload's token; run again at every request.")
    /// `subject_token_github_actions`: the audience of a GitHub Actions OIDC token as the subject token.
    public static let subjectTokenGitHubActions = ProviderSetting(
        "subject_token_github_actions",
        help: "Use this GitHub Actions job's OIDC token, asked for with this audience, as the workload's token.")
    /// `subject_token_type`: the subject token's type.
    public static let subjectTokenType = ProviderSetting(
        "subject_token_type", help: "The workload token's type: jwt (default), id_token, access_token or a URN.")
    /// `workload_grant`: how the subject token is used.
    public static let workloadGrant = ProviderSetting(
        "workload_grant",
        help: "How the workload's token is used: token_exchange (RFC 8693, the default) or jwt_bearer (RFC 7523).")
    /// `token_exchange_audience`: the `audience` of a token exchange.
    public static let tokenExchangeAudience = ProviderSetting(
        "token_exchange_audience", help: "The audience to ask a token exchange for.")

    /// `resource`: the protected resources (RFC 8707) the tokens are for.
    public static let resource = ProviderSetting(
        "resource",
        help: "A protected resource (RFC 8707) the tokens are for: an absolute URL; several are space-separated.")

    /// `dpop`: whether tokens are bound to a key with DPoP (RFC 9449).
    public static let dpop = ProviderSetting(
        "dpop",
        help: "Bind the tokens to a key of this sign-in with DPoP (RFC 9449): auto (when the server announces it,"
            + " the default), required, or off.")
    /// `pushed_authorization_requests`: whether the authorization request is pushed first (RFC 9126).
    public static let pushedAuthorizationRequests = ProviderSetting(
        "pushed_authorization_requests",
        help: "Push the authorization request to the server first (RFC 9126 PAR), so that the browser gets only a"
            + " reference: auto (when the server has the endpoint, the default), required, or off.")

    /// The keys every provider reads, in the order people set them.
    public static let standard: [ProviderSetting] = [
        .issuer, .clientID, .clientSecret, .scope, .resource, .clientAuthentication, .clientAssertionKey,
        .clientAssertionKeyID, .dpop, .pushedAuthorizationRequests,
        .subjectTokenFile, .subjectTokenCommand, .subjectTokenGitHubActions, .subjectTokenType, .workloadGrant,
        .tokenExchangeAudience,
    ]
}
