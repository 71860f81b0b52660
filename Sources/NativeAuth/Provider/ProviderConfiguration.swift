public import Foundation
public import LenientJSON

/// What a provider is built from: the client's registration and where the provider lives.
///
/// Build one in code, or read it from JSON (a configuration file, or flags and environment merged
/// into one object by the CLI) with ``init(json:)``. JSON keys are snake_case:
///
/// ```json
/// {
///   "provider": "oidc",
///   "issuer": "https://id.example.com",
///   "client_id": "my-cli",
///   "scope": "openid profile email",
///   "client_auth": "none",
///   "device_authorization_endpoint": "https://id.example.com/device"
/// }
/// ```
///
/// Unknown keys are kept in ``additional`` for provider modules (GitHub's `host`, Cognito's `domain`).
public struct ProviderConfiguration: Sendable {
    /// The registry id of the provider (``AuthProvider/id``), `"oidc"` by default.
    public var provider: String
    /// The issuer URL, exactly as the provider's metadata states it.
    public var issuer: URL?
    /// The OAuth client id.
    public var clientID: String
    /// The client secret, for confidential clients. Never printed.
    public var clientSecret: String?
    /// The scopes to ask for.
    public var scopes: [String]
    /// The protected resources (RFC 8707 resource indicators) the tokens are for: sent as
    /// `resource` on the authorization request and on every token request (code, refresh, device
    /// code, client credentials, workload grants). Empty by default: the server's default
    /// audience. Tokens for one resource at a time, under the same sign-in, come from
    /// ``Authenticator/accessToken(for:scopes:minimumValidity:)``. JSON key `resource` (URLs
    /// separated by spaces, or an array).
    public var resources: [URL] = []
    /// Whether ``Authenticator/send(_:body:)`` follows an API's 401 that points to its protected
    /// resource metadata (RFC 9728 `resource_metadata`): when the metadata names this
    /// configuration's issuer, a token for that resource is got under the sign-in
    /// (``Authenticator/accessToken(for:scopes:minimumValidity:)``) and the request retried once;
    /// later requests under that resource use its token at once. When it names another issuer, the
    /// error says which. Off by default: an API's answer never decides, unasked, what the app asks
    /// its authorization server for. JSON key `follow_resource_metadata` (a boolean).
    public var followsResourceMetadata = false
    /// Whether a configuration without a client id registers one (RFC 7591 dynamic client
    /// registration, or a Client ID Metadata Document): the app then calls
    /// ``Authenticator/registeringClient(_:initialAccessToken:)``, and ``clientID`` is empty until
    /// it did. JSON key `register_client` (a boolean); without it, a missing `client_id` is an error.
    public var registersClient = false
    /// The URL of the app's Client ID Metadata Document, for servers that take one as the client id
    /// when it registers (``ClientMetadata/metadataDocument``). JSON key
    /// `client_id_metadata_document` (an `https` URL).
    public var clientMetadataDocument: URL?
    /// How to authenticate at the token endpoint; `nil` chooses from the metadata (see
    /// ``ClientAuthentication/standard(for:metadata:)``).
    public var clientAuthentication: ClientAuthentication?
    /// The private key of `private_key_jwt` client authentication; with one, that is the method
    /// unless ``clientAuthentication`` says otherwise. JSON key `client_assertion_key` (a file
    /// path; `client_assertion_kid` sets its key id).
    public var clientAssertionKey: ClientAssertionKey?
    /// The audience of client assertions: the token endpoint (the default), or the issuer where
    /// the server asks for it. JSON key `client_assertion_audience` (`token_endpoint` or `issuer`).
    public var clientAssertionAudience: ClientAssertionAudience = .tokenEndpoint
    /// Whether tokens are bound to a key with DPoP (RFC 9449): ``FeaturePolicy/automatic`` (the
    /// default) when the server announces `dpop_signing_alg_values_supported` and the provider
    /// module allows it (``AuthProvider/supportsDPoP``); ``FeaturePolicy/required`` always, refusing
    /// a server that answers with `Bearer` tokens; ``FeaturePolicy/disabled`` never. JSON key `dpop`
    /// (`auto`, `required` or `off`).
    public var dpop: FeaturePolicy = .automatic
    /// Whether the authorization request is pushed to the server first (RFC 9126), and the browser
    /// gets only its `request_uri`: ``FeaturePolicy/automatic`` (the default) when the metadata has
    /// a `pushed_authorization_request_endpoint`; ``FeaturePolicy/required`` always (an error
    /// without that endpoint); ``FeaturePolicy/disabled`` never, unless the server requires it
    /// (`require_pushed_authorization_requests`). JSON key `pushed_authorization_requests`.
    public var pushedAuthorizationRequests: FeaturePolicy = .automatic
    /// How a workload gets tokens from a token of its own (token exchange, JWT bearer), for
    /// ``Authenticator/loginAsWorkload(scopes:)`` and the renewals of what it got. JSON keys
    /// `subject_token_file`, `subject_token_command` or `subject_token_github_actions` (one of
    /// them), with `subject_token_type`, `workload_grant` and `token_exchange_audience`.
    public var workload: WorkloadGrant?
    /// Endpoints that win over the metadata's.
    public var endpoints: EndpointOverrides
    /// Every other key of the JSON the configuration was read from, for provider modules.
    public var additional: JSONObject
    /// Whether a sign-in is refused when the provider's metadata does not announce PKCE S256
    /// (`code_challenge_methods_supported`). Default `false`: S256 is always sent, and a provider
    /// that publishes nothing (Cognito) is used with a warning in the log; a provider that
    /// announces methods without S256 is always refused. JSON key `require_pkce` (a boolean).
    public var requiresAnnouncedPKCE: Bool

    /// Creates a configuration in code.
    public init(
        provider: String = "oidc",
        issuer: URL? = nil,
        clientID: String,
        clientSecret: String? = nil,
        scopes: [String] = ["openid"],
        clientAuthentication: ClientAuthentication? = nil,
        endpoints: EndpointOverrides = EndpointOverrides(),
        additional: JSONObject = JSONObject(),
        requiresAnnouncedPKCE: Bool = false,
        clientAssertionKey: ClientAssertionKey? = nil,
        workload: WorkloadGrant? = nil
    ) {
        self.provider = provider
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.clientAuthentication = clientAuthentication
        self.endpoints = endpoints
        self.additional = additional
        self.requiresAnnouncedPKCE = requiresAnnouncedPKCE
        self.clientAssertionKey = clientAssertionKey
        self.workload = workload
    }

    static let knownKeys: Set<String> = Set(
        [
            "provider", "require_pkce", "follow_resource_metadata", "register_client", "client_assertion_audience",
            "client_id_metadata_document",
        ]
            + ProviderSetting.standard.map(\.key)
            + EndpointOverrides.fields.map(\.key)
    )

    /// Reads a configuration from a JSON object.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/configurationInvalid`` naming the missing
    ///   or invalid field, for example `the field "client_id" is missing`, with ``AuthError/field``
    ///   set to its key.
    public init(json object: JSONObject) throws(AuthError) {
        func invalid(_ key: String, _ problem: String) -> AuthError {
            AuthError(.configurationInvalid, "the field \"\(key)\" \(problem)", field: key)
        }
        func string(_ key: String) throws(AuthError) -> String? {
            do {
                let value = try object.string(key)
                return value?.isEmpty == true ? nil : value
            } catch {
                throw invalid(key, "should be a string")
            }
        }
        func url(_ key: String) throws(AuthError) -> URL? {
            guard let text = try string(key) else { return nil }
            guard let url = URL(string: text), url.scheme != nil, url.host?.isEmpty == false else {
                throw invalid(key, "is not an absolute URL")
            }
            do {
                try EndpointPolicy.validate(url)
            } catch {
                throw invalid(key, "must use https (plain http only for 127.0.0.1 or [::1])")
            }
            return url
        }

        func flag(_ key: String) throws(AuthError) -> Bool {
            switch object[key] {
            case nil, .null?, .string("false")?: return false
            case .bool(let value)?: return value
            case .string("true")?: return true
            default: throw invalid(key, "should be true or false")
            }
        }
        let registersClient = try flag("register_client")
        let clientID = try string(ProviderSetting.clientID.key)
        guard clientID != nil || registersClient else {
            var error = AuthError.missing(.clientID)
            error.hint =
                (error.hint.map { $0 + ", or " } ?? "") + "set \"register_client\": true to register one (RFC 7591)"
            throw error
        }
        var endpoints = EndpointOverrides()
        for field in EndpointOverrides.fields {
            endpoints[keyPath: field.path] = try url(field.key)
        }
        var authentication: ClientAuthentication?
        if let name = try string("client_auth") {
            guard let parsed = ClientAuthentication(name: name) else {
                throw invalid(
                    "client_auth",
                    "should be one of none, post, basic, tls, self_signed_tls, private_key_jwt, secret_jwt")
            }
            authentication = parsed
        }
        let scopes: [String]
        do {
            scopes = try object.stringList("scope") ?? ["openid"]
        } catch {
            throw invalid("scope", "should be a string of space-separated scopes, or an array of strings")
        }
        let requiresAnnouncedPKCE: Bool
        switch object["require_pkce"] {
        case nil, .null?: requiresAnnouncedPKCE = false
        case .bool(let value)?: requiresAnnouncedPKCE = value
        default: throw invalid("require_pkce", "should be true or false")
        }
        let followsResourceMetadata = try flag("follow_resource_metadata")
        var assertionAudience = ClientAssertionAudience.tokenEndpoint
        if let name = try string("client_assertion_audience") {
            guard let parsed = ClientAssertionAudience(rawValue: name) else {
                throw invalid("client_assertion_audience", "should be token_endpoint or issuer")
            }
            assertionAudience = parsed
        }
        func policy(_ setting: ProviderSetting) throws(AuthError) -> FeaturePolicy {
            guard let name = try string(setting.key) else { return .automatic }
            guard let parsed = FeaturePolicy(rawValue: name) else {
                throw invalid(setting.key, "should be auto, required or off")
            }
            return parsed
        }
        let dpop = try policy(.dpop)
        let pushed = try policy(.pushedAuthorizationRequests)
        let workload = try Self.workload(string)
        let resources: [URL]
        do {
            resources = try (object.stringList(ProviderSetting.resource.key) ?? []).map { text throws(AuthError) in
                try Self.resourceIndicator(text)
            }
        } catch let error as AuthError {
            throw error
        } catch {
            throw invalid("resource", "should be a string of space-separated URLs, or an array of strings")
        }
        var additional = JSONObject()
        for member in object where !Self.knownKeys.contains(member.key) {
            additional[member.key] = member.value
        }
        self.init(
            provider: try string("provider") ?? "oidc",
            issuer: try url("issuer"),
            clientID: clientID ?? "",
            clientSecret: try string("client_secret"),
            scopes: scopes,
            clientAuthentication: authentication,
            endpoints: endpoints,
            additional: additional,
            requiresAnnouncedPKCE: requiresAnnouncedPKCE,
            clientAssertionKey: try string(ProviderSetting.clientAssertionKey.key).map { path throws(AuthError) in
                try ClientAssertionKey.contentsOf(path, keyID: try string(ProviderSetting.clientAssertionKeyID.key))
            },
            workload: workload
        )
        self.resources = resources
        self.followsResourceMetadata = followsResourceMetadata
        self.registersClient = registersClient && clientID == nil
        self.clientAssertionAudience = assertionAudience
        self.clientMetadataDocument = try url("client_id_metadata_document")
        self.dpop = dpop
        self.pushedAuthorizationRequests = pushed
    }

    /// A resource indicator (RFC 8707 §2): an absolute `https` URL (plain `http` only to the
    /// loopback interface) without a fragment.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, field `resource`) naming
    ///   what is wrong.
    public static func resourceIndicator(_ text: String) throws(AuthError) -> URL {
        guard let url = URL(string: text), url.scheme != nil, url.host?.isEmpty == false else {
            throw AuthError(
                .configurationInvalid, "the resource \(Redaction.scrubURL(text)) is not an absolute URL",
                hint: "give the API's URL, like https://api.example.com/", field: ProviderSetting.resource.key)
        }
        guard url.fragment == nil else {
            throw AuthError(
                .configurationInvalid, "a resource indicator has no fragment (RFC 8707 §2)",
                field: ProviderSetting.resource.key)
        }
        do {
            try EndpointPolicy.validate(url)
        } catch {
            throw AuthError(
                .configurationInvalid, error.message, hint: error.hint, field: ProviderSetting.resource.key)
        }
        return url
    }

    /// The workload grant the settings describe, if any.
    private static func workload(_ string: (String) throws(AuthError) -> String?) throws(AuthError) -> WorkloadGrant? {
        var sources: [SubjectTokenSource] = []
        if let path = try string(ProviderSetting.subjectTokenFile.key) { sources.append(.file(path)) }
        if let line = try string(ProviderSetting.subjectTokenCommand.key) { sources.append(.command(line: line)) }
        if let audience = try string(ProviderSetting.subjectTokenGitHubActions.key) {
            sources.append(.gitHubActions(audience: audience))
        }
        let grantName = try string(ProviderSetting.workloadGrant.key)
        guard let subject = sources.first else {
            if grantName != nil {
                throw AuthError(
                    .configurationInvalid, "workload_grant needs a subject token",
                    hint: "give --subject-token-file, --subject-token-command or --subject-token-github-actions",
                    field: ProviderSetting.workloadGrant.key)
            }
            return nil
        }
        guard sources.count == 1 else {
            throw AuthError(
                .configurationInvalid,
                "give one of subject_token_file, subject_token_command and subject_token_github_actions",
                field: ProviderSetting.subjectTokenFile.key)
        }
        var type = Grant.TokenType.jwt
        if let name = try string(ProviderSetting.subjectTokenType.key) {
            guard let parsed = Grant.TokenType(name: name) else {
                throw AuthError(
                    .configurationInvalid,
                    "the field \"subject_token_type\" should be jwt, id_token, access_token or a urn: URI",
                    field: ProviderSetting.subjectTokenType.key)
            }
            type = parsed
        }
        switch grantName {
        case nil, "token_exchange":
            return .tokenExchange(
                subject: subject, type: type, audience: try string(ProviderSetting.tokenExchangeAudience.key))
        case "jwt_bearer":
            return .jwtBearer(subject)
        default:
            throw AuthError(
                .configurationInvalid, "the field \"workload_grant\" should be token_exchange or jwt_bearer",
                field: ProviderSetting.workloadGrant.key)
        }
    }

    /// The value of a provider's own setting (declared in ``AuthProvider/settings``) from
    /// ``additional``: a non-empty string, or `nil` when it is absent or empty.
    ///
    /// - Parameter setting: The declared key.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set)
    ///   when the value is not a string.
    public func value(of setting: ProviderSetting) throws(AuthError) -> String? {
        let value: String?
        do {
            value = try additional.string(setting.key)
        } catch {
            throw AuthError.invalid(setting, "should be a string")
        }
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Whether `object`, or an object within it, has a `client_secret`.
    private static func holdsClientSecret(_ object: JSONObject) -> Bool {
        object.contains(ProviderSetting.clientSecret.key)
            || object.contains(where: { $0.value.objectValue.map(holdsClientSecret) ?? false })
    }

    /// Reads a JSON configuration file.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) naming the file and, for a
    ///   parse error, the line and column; never quoting a secret from it; for a file holding a
    ///   `client_secret` (at any depth) that other users can read or change.
    public static func load(contentsOf path: String) throws(AuthError) -> JSONObject {
        let file = try SecretFile(path, what: "configuration file")
        do {
            guard
                let object = try JSONValue.parse(file.contents, options: JSONParseOptions(maxBytes: 1 << 20))
                    .objectValue
            else {
                throw AuthError(.configurationInvalid, "the configuration file \(path) does not hold a JSON object")
            }
            // A file holding a secret, at its top or in a nested object (a named profile), must
            // be the user's alone.
            if holdsClientSecret(object) { try file.requirePrivate() }
            return object
        } catch let error as JSONParseError {
            throw AuthError(
                .configurationInvalid,
                "the configuration file \(path) is not valid JSON: \(error.summary)",
                underlying: error
            )
        } catch {
            throw error as? AuthError ?? AuthError(.configurationInvalid, "cannot read \(path)", underlying: error)
        }
    }
}

extension ProviderConfiguration: CustomStringConvertible {
    /// The configuration without the client secret.
    public var description: String {
        let issuer = issuer?.absoluteString ?? "none"
        let secret = clientSecret == nil ? "" : ", client secret set"
        return "ProviderConfiguration(provider: \(provider), issuer: \(issuer), client: \(clientID)\(secret))"
    }
}

extension ProviderConfiguration: CustomReflectable {
    /// Reflection (`dump`, debuggers) hides the client secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "provider": provider,
                "issuer": issuer as Any,
                "clientID": clientID,
                "clientSecret": clientSecret == nil ? "nil" : "<redacted>",
                "scopes": scopes,
                "resources": resources,
                "clientAuthentication": clientAuthentication as Any,
                "clientAssertionKey": clientAssertionKey.map { "\($0)" } as Any,
                "endpoints": endpoints,
            ],
            displayStyle: .struct
        )
    }
}
