public import Foundation
internal import LenientJSON

// The settings every provider reads, each declared once: ProviderConfiguration reads them, and a
// command-line tool offers them, from these declarations.

extension Setting where Value == String {
    /// `provider`: the registry id of the provider (``AuthProvider/id``), `oidc` by default.
    public static let provider = Setting(
        "provider", help: "The provider id (as the tool registered it).", valueName: "id", group: .server,
        parse: .text)
    /// `client_id`: the OAuth client id.
    public static let clientID = Setting("client_id", help: "The OAuth client id.", group: .server, parse: .text)
    /// `client_secret`: the secret of a confidential client.
    public static let clientSecret = Setting(
        "client_secret",
        help: "The client secret, for confidential clients. On a command line it is visible to every user"
            + " (ps); prefer a file only you can read, or the environment.",
        group: .clientAuthentication, isSecret: true, parse: .text)
    /// `client_assertion_key`: the file of the private key of `private_key_jwt`.
    public static let clientAssertionKey = Setting(
        "client_assertion_key",
        help: "A private key file (PEM or JWK: P-256, Ed25519, RSA) the client signs its token requests with"
            + " (private_key_jwt, RFC 7523); only you may read it.",
        valueName: "file", group: .clientAuthentication, isPath: true, parse: .text)
    /// `client_assertion_kid`: the `kid` the client's assertions carry.
    public static let clientAssertionKeyID = Setting(
        "client_assertion_kid", help: "The key id (kid) of the client assertion key, for servers that hold several.",
        valueName: "kid", group: .clientAuthentication, parse: .text)
    /// `subject_token_file`: a workload's subject token, read from this file at each request.
    public static let subjectTokenFile = Setting(
        "subject_token_file",
        help: "A file holding the workload's token (a Kubernetes service-account token), traded for tokens (RFC 8693)"
            + " and read again at every request.",
        valueName: "file", group: .workload, isPath: true, parse: .text)
    /// `subject_token_command`: a command whose output is a workload's subject token.
    public static let subjectTokenCommand = Setting(
        "subject_token_command",
        help: "A command (run without a shell) that prints the workload's token; run again at every request.",
        valueName: "command", group: .workload, parse: .text)
    /// `subject_token_github_actions`: the audience of a GitHub Actions OIDC token as the subject token.
    public static let subjectTokenGitHubActions = Setting(
        "subject_token_github_actions",
        help: "Use this GitHub Actions job's OIDC token, asked for with this audience, as the workload's token.",
        valueName: "audience", group: .workload, parse: .text)
    /// `workload_grant`: how the subject token is used, `token_exchange` (the default) or `jwt_bearer`.
    public static let workloadGrant = Setting(
        "workload_grant",
        help: "How the workload's token is used: token_exchange (RFC 8693, the default) or jwt_bearer (RFC 7523).",
        valueName: "token_exchange|jwt_bearer", group: .workload,
        parse: .choice(["token_exchange", "jwt_bearer"]) { ["token_exchange", "jwt_bearer"].contains($0) ? $0 : nil })
    /// `id_token_signed_response_alg`: the one JWS algorithm the client is registered to get ID
    /// tokens in (OIDC Dynamic Client Registration §2).
    public static let idTokenSigningAlgorithm = Setting(
        "id_token_signed_response_alg",
        help: "The algorithm the client is registered to get ID tokens signed with (RS256, ES384, HS512, …):"
            + " ID tokens signed otherwise are refused.",
        valueName: "alg", group: .server,
        parse: .choice(IDTokenValidator.supportedAlgorithms) {
            IDTokenValidator.supportedAlgorithms.contains($0) ? $0 : nil
        })
    /// `account`: the account to act on (``Accounts``): what errors about an account name name.
    public static let account = Setting(
        "account",
        help: "The account to act on, without changing the active one (also NATIVEAUTH_ACCOUNT); for login, the name"
            + " to keep the sign-in under (default: who signed in).",
        valueName: "name", group: .storage, parse: .text)
    /// `token_exchange_audience`: the `audience` of a token exchange.
    public static let tokenExchangeAudience = Setting(
        "token_exchange_audience", help: "The audience to ask a token exchange for.", valueName: "audience",
        group: .workload, parse: .text)
}

extension Setting where Value == URL {
    /// `issuer`: the issuer URL, exactly as the provider's metadata states it.
    public static let issuer = Setting(
        "issuer", help: "The issuer URL of the authorization server.", valueName: "url", group: .server, parse: .url)
    /// `client_id_metadata_document`: the URL of the app's Client ID Metadata Document.
    public static let clientMetadataDocument = Setting(
        "client_id_metadata_document",
        help: "The https URL of this client's Client ID Metadata Document, for servers that take it as the client id.",
        valueName: "url", group: .server, parse: .url)
}

extension Setting where Value == [String] {
    /// `subject_token_command_environment`: the variables the subject-token command needs beyond
    /// ``ChildEnvironment/standard``.
    public static let subjectTokenCommandEnvironment = Setting(
        "subject_token_command_environment",
        help: "Environment variables the subject token command gets besides PATH, HOME, locale, display and proxy"
            + " ones, space-separated (NAME, or PREFIX* for every one that starts so).",
        valueName: "names", group: .workload, parse: .words)
    /// `trusted_audience`: audiences an ID token may name besides the client id.
    public static let trustedAudiences = Setting(
        "trusted_audience",
        help: "An audience an ID token may name besides the client id (OIDC Core §3.1.3.7), such as an API the"
            + " server adds; several are space-separated (on a command line, repeated). Others are refused.",
        valueName: "audience", group: .server, parse: .words)
    /// `scope`: the scopes to ask for, `openid` by default.
    public static let scope = Setting(
        "scope", help: "The scopes to ask for, space-separated.", valueName: "scopes", group: .request, parse: .words)
}

extension Setting where Value == [URL] {
    /// `resource`: the protected resources (RFC 8707) the tokens are for.
    public static let resource = Setting(
        "resource",
        help: "A protected resource (RFC 8707) the tokens are for: an absolute URL; several are space-separated"
            + " (on a command line, repeated). With a token or a request of its own: a token for this resource alone,"
            + " under the same sign-in. With no issuer configured: the resource's 401 names its authorization server"
            + " (RFC 9728), where the tool signs in for it once.",
        valueName: "url", group: .request,
        parse: SettingParser(form: .list) { text, _ throws(AuthError) in
            var resources: [URL] = []
            for word in JSONValue.string(text).lenientStringList ?? [] {
                resources.append(try ProviderConfiguration.resourceIndicator(word))
            }
            return resources
        })
}

extension Setting where Value == Bool {
    /// `register_client`: without a client id, register one (RFC 7591 or a client ID metadata document).
    public static let registerClient = Setting(
        "register_client",
        help: "Without a client id, register this tool as a client of the issuer (RFC 7591 dynamic registration, or"
            + " a client id metadata document): once, kept beside the tokens, again when it expires.",
        group: .server, parse: .flag)
    /// `follow_resource_metadata`: follow an API's 401 to its protected resource metadata (RFC 9728).
    public static let followResourceMetadata = Setting(
        "follow_resource_metadata",
        help: "Follow an API's 401 that names its protected resource metadata (RFC 9728): get a token for that"
            + " resource under the sign-in, when the metadata names this issuer.",
        group: .request, parse: .flag)
    /// `require_pkce`: refuse a provider whose metadata does not announce PKCE S256.
    public static let requirePKCE = Setting(
        "require_pkce",
        help: "Refuse a server whose metadata does not announce PKCE S256 (S256 is always sent).",
        group: .server, parse: .flag)
}

extension Setting where Value == EndSessionMethod {
    /// `end_session_method`: how the browser sends the end-session request.
    public static let endSessionMethod = Setting(
        "end_session_method",
        help: "How the browser sends the end-session request: post (the default; the ID token stays out of the"
            + " browser's history) or get, for servers that take it only by GET.",
        valueName: "post|get", group: .server, parse: .cases())
}

extension Setting where Value == MetadataOrder {
    /// `metadata_order`: which well-known metadata document is asked for first.
    public static let metadataOrder = Setting(
        "metadata_order",
        help: "Which metadata document to ask the issuer for first: openid (OpenID Connect Discovery, then RFC 8414;"
            + " the default) or oauth (RFC 8414, then OpenID Connect: the MCP authorization spec's order, which"
            + " discovery from an API's resource metadata uses).",
        valueName: "openid|oauth", group: .server, parse: .cases())
}

extension Setting where Value == OfflineAccessConsent {
    /// `offline_access_consent`: whether asking for `offline_access` adds `prompt=consent`.
    public static let offlineAccessConsent = Setting(
        "offline_access_consent",
        help: "Whether a sign-in asking for offline_access also asks for consent (prompt=consent), without which"
            + " OpenID Connect servers may ignore offline_access (OIDC Core §11): on or off; the provider decides"
            + " when unset (on for a generic OpenID provider).",
        valueName: "on|off", group: .request, parse: .cases())
}

extension Setting where Value == ClientAuthentication {
    /// `client_auth`: how the client authenticates at the token endpoint.
    public static let clientAuthentication = Setting(
        "client_auth",
        help: "Client authentication: basic, post, none, tls (RFC 8705 mutual TLS, with a client certificate),"
            + " private_key_jwt (with a client assertion key) or secret_jwt.",
        valueName: "method", group: .clientAuthentication,
        parse: SettingParser { text, setting throws(AuthError) in
            guard let method = ClientAuthentication(name: text) else {
                throw AuthError.invalid(
                    setting, "should be one of none, post, basic, tls, self_signed_tls, private_key_jwt, secret_jwt")
            }
            return method
        })
}

extension Setting where Value == ClientAssertionAudience {
    /// `client_assertion_audience`: the audience of client assertions.
    public static let clientAssertionAudience = Setting(
        "client_assertion_audience",
        help: "The audience of the client's assertions: token_endpoint (the default) or issuer.",
        valueName: "token_endpoint|issuer", group: .clientAuthentication, parse: .cases())
}

extension Setting where Value == FeaturePolicy {
    /// `dpop`: whether tokens are bound to a key with DPoP (RFC 9449).
    public static let dpop = Setting(
        "dpop",
        help: "Bind the tokens to a key of this sign-in with DPoP (RFC 9449): auto (when the server announces it,"
            + " the default), required, or off.",
        valueName: "auto|required|off", group: .request, parse: .cases())
    /// `pushed_authorization_requests`: whether the authorization request is pushed first (RFC 9126).
    public static let pushedAuthorizationRequests = Setting(
        "pushed_authorization_requests",
        help: "Push the authorization request to the server first (RFC 9126 PAR), so that the browser gets only a"
            + " reference: auto (when the server has the endpoint, the default), required, or off.",
        valueName: "auto|required|off", group: .request, parse: .cases())
}

extension Setting where Value == Grant.TokenType {
    /// `subject_token_type`: the subject token's type.
    public static let subjectTokenType = Setting(
        "subject_token_type", help: "The workload token's type: jwt (default), id_token, access_token or a URN.",
        valueName: "type", group: .workload,
        parse: SettingParser { text, setting throws(AuthError) in
            guard let type = Grant.TokenType(name: text) else {
                throw AuthError.invalid(setting, "should be jwt, id_token, access_token or a urn: URI")
            }
            return type
        })
}

extension ProviderSetting {
    /// The keys every provider reads, in the order people set them.
    public static let standard: [ProviderSetting] =
        [
            Setting.provider.declaration, Setting.issuer.declaration, Setting.clientID.declaration,
            Setting.registerClient.declaration, Setting.clientMetadataDocument.declaration,
            Setting.requirePKCE.declaration,
            Setting.clientSecret.declaration, Setting.clientAuthentication.declaration,
            Setting.clientAssertionKey.declaration, Setting.clientAssertionKeyID.declaration,
            Setting.clientAssertionAudience.declaration, Setting.trustedAudiences.declaration,
            Setting.idTokenSigningAlgorithm.declaration, Setting.endSessionMethod.declaration,
            Setting.metadataOrder.declaration,
            Setting.scope.declaration, Setting.offlineAccessConsent.declaration, Setting.resource.declaration,
            Setting.dpop.declaration,
            Setting.pushedAuthorizationRequests.declaration, Setting.followResourceMetadata.declaration,
            Setting.subjectTokenFile.declaration, Setting.subjectTokenCommand.declaration,
            Setting.subjectTokenCommandEnvironment.declaration,
            Setting.subjectTokenGitHubActions.declaration, Setting.subjectTokenType.declaration,
            Setting.workloadGrant.declaration, Setting.tokenExchangeAudience.declaration,
        ] + EndpointOverrides.fields.map(\.setting.declaration)
}
