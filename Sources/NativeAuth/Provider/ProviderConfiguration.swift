public import Configuration
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
    /// Whether ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)`` follows an API's 401 that points to its protected
    /// resource metadata (RFC 9728 `resource_metadata`): when the metadata names this
    /// configuration's issuer, a token for that resource is got under the sign-in
    /// (``Authenticator/accessToken(for:scopes:minimumValidity:)``) and the request retried once;
    /// later requests under that resource use its token at once. When it names another issuer, the
    /// error says which. Off by default: an API's answer never decides, unasked, what the app asks
    /// its authorization server for. JSON key `follow_resource_metadata` (a boolean).
    public var followsResourceMetadata = false
    /// The loopback port the client's redirect URI was registered with, when its registration
    /// names one (``ClientRegistration/loopbackRedirectPort``): a loopback presenter listens there,
    /// for servers that match redirect URIs exactly. `nil`: any port (RFC 8252 §7.3). Set by
    /// ``Authenticator/registeringClient(_:initialAccessToken:)``; not a setting.
    public var loopbackRedirectPort: Int?
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
    /// ``Authenticator/login(_:scopes:)`` with ``SignInMethod/workload`` and the renewals of what it got. JSON keys
    /// `subject_token_file`, `subject_token_command` or `subject_token_github_actions` (one of
    /// them), with `subject_token_type`, `workload_grant` and `token_exchange_audience`.
    public var workload: WorkloadGrant?
    /// The audiences an ID token may name besides the client id (OIDC Core §3.1.3.7), added to the
    /// provider's ``IDTokenValidationOptions/trustedAudiences``. JSON key `trusted_audience` (words
    /// separated by spaces, or an array).
    public var trustedAudiences: Set<String> = []
    /// The `id_token_signed_response_alg` the client is registered with: ID tokens signed with any
    /// other algorithm are refused. `nil`, the default: any the provider allows. JSON key
    /// `id_token_signed_response_alg`.
    public var idTokenSigningAlgorithm: String?
    /// How the browser sends the end-session request (RP-Initiated Logout §2):
    /// ``EndSessionMethod/post`` (the default) or ``EndSessionMethod/get``. JSON key `end_session_method`.
    public var endSessionMethod: EndSessionMethod = .post
    /// Which metadata document discovery asks the issuer for first: ``MetadataOrder/openID`` (the
    /// default) or ``MetadataOrder/oauth`` (MCP's order). JSON key `metadata_order`.
    public var metadataOrder: MetadataOrder = .openID
    /// Whether a sign-in that asks for `offline_access` also sends `prompt=consent` (OIDC Core §11:
    /// without it the server must ignore `offline_access`); `nil`, the default: as the provider says
    /// (``AuthProvider/offlineAccessNeedsConsent``). JSON key `offline_access_consent` (`on` or `off`).
    public var offlineAccessConsent: OfflineAccessConsent?
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

    /// Reads a configuration from a JSON object: the standard settings (``ProviderSetting/standard``)
    /// where their declarations say, every other key into ``additional``.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/configurationInvalid`` naming the missing
    ///   or invalid field, for example `the field "client_id" is missing`, with ``AuthError/field``
    ///   set to its key.
    public init(json object: JSONObject) throws(AuthError) {
        try self.init(SettingValues { setting throws(AuthError) in try object[setting.key].flatMap(setting.text(of:)) })
        let standard = Set(ProviderSetting.standard.map(\.key))
        for member in object where !standard.contains(member.key) {
            additional[member.key] = member.value
        }
    }

    /// Reads a configuration through swift-configuration: each setting of ``ProviderSetting/standard``
    /// and of `settings` (a provider module's own, ``AuthProvider/settings``) by its key, from the
    /// reader's providers in their order (a command line, the environment, a file). The provider
    /// module's settings go into ``additional``.
    ///
    /// ```swift
    /// let config = ConfigReader(providers: [
    ///     EnvironmentVariablesProvider().prefixKeys(with: "nativeauth"),   // NATIVEAUTH_CLIENT_ID, …
    ///     InMemoryProvider(values: ["issuer": "https://id.example.com", "client_id": "cli"]),
    /// ])
    /// let configuration = try ProviderConfiguration(reading: config, settings: CognitoProvider.settings)
    /// ```
    ///
    /// Values are read as text (`"true"` for a flag, space-separated words for a list), and an
    /// empty text counts as absent.
    ///
    /// - Throws: ``AuthError`` as ``init(json:)`` does.
    public init(reading config: ConfigReader, settings: [ProviderSetting] = []) throws(AuthError) {
        let values = SettingValues { setting throws(AuthError) in
            config.string(forKey: ConfigKey([setting.key]), isSecret: setting.isSecret)
        }
        try self.init(values)
        for setting in settings where !ProviderSetting.standard.contains(setting) {
            guard let text = try values.text(of: setting) else { continue }
            try setting.validate(text)
            additional[setting.key] = .string(text)
        }
    }

    /// Reads the standard settings from `values`.
    private init(_ values: SettingValues) throws(AuthError) {
        let registersClient = try values.read(.registerClient) ?? false
        let clientID = try values.read(.clientID)
        guard clientID != nil || registersClient else {
            var error = AuthError.missing(.clientID)
            error.hint =
                (error.hint.map { $0 + ", or " } ?? "") + "set \"register_client\": true to register one (RFC 7591)"
            throw error
        }
        var endpoints = EndpointOverrides()
        for field in EndpointOverrides.fields {
            endpoints[keyPath: field.path] = try values.read(field.setting)
        }
        let keyPath = try values.read(.clientAssertionKey)
        self.init(
            provider: try values.read(.provider) ?? "oidc",
            issuer: try values.read(.issuer),
            clientID: clientID ?? "",
            clientSecret: try values.read(.clientSecret),
            // Absent: `openid`. Given empty (a resource that names no scope, MCP): none at all.
            scopes: try values.lookup(Setting.scope.declaration).map { text throws(AuthError) in
                try Setting.scope.parse(text)
            } ?? ["openid"],
            clientAuthentication: try values.read(.clientAuthentication),
            endpoints: endpoints,
            requiresAnnouncedPKCE: try values.read(.requirePKCE) ?? false,
            clientAssertionKey: try keyPath.map { path throws(AuthError) in
                try ClientAssertionKey.contentsOf(path, keyID: try values.read(.clientAssertionKeyID))
            },
            workload: try Self.workload(values)
        )
        self.resources = try values.read(.resource) ?? []
        self.followsResourceMetadata = try values.read(.followResourceMetadata) ?? false
        self.registersClient = registersClient && clientID == nil
        self.clientAssertionAudience = try values.read(.clientAssertionAudience) ?? .tokenEndpoint
        self.clientMetadataDocument = try values.read(.clientMetadataDocument)
        self.dpop = try values.read(.dpop) ?? .automatic
        self.pushedAuthorizationRequests = try values.read(.pushedAuthorizationRequests) ?? .automatic
        self.trustedAudiences = Set(try values.read(.trustedAudiences) ?? [])
        self.idTokenSigningAlgorithm = try values.read(.idTokenSigningAlgorithm)
        self.endSessionMethod = try values.read(.endSessionMethod) ?? .post
        self.metadataOrder = try values.read(.metadataOrder) ?? .openID
        self.offlineAccessConsent = try values.read(.offlineAccessConsent)
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
                hint: "give the API's URL, like https://api.example.com/", field: Setting.resource.key)
        }
        guard url.fragment == nil else {
            throw AuthError(
                .configurationInvalid, "a resource indicator has no fragment (RFC 8707 §2)",
                field: Setting.resource.key)
        }
        do {
            try EndpointPolicy.validate(url)
        } catch {
            throw AuthError(
                .configurationInvalid, error.message, hint: error.hint, field: Setting.resource.key)
        }
        return url
    }

    /// The workload grant the settings describe, if any.
    private static func workload(_ values: SettingValues) throws(AuthError) -> WorkloadGrant? {
        var sources: [SubjectTokenSource] = []
        if let path = try values.read(.subjectTokenFile) { sources.append(.file(path)) }
        if let line = try values.read(.subjectTokenCommand) {
            let names = try values.read(.subjectTokenCommandEnvironment) ?? []
            sources.append(.command(line: line, environment: ChildEnvironment.standard.adding(names)))
        }
        if let audience = try values.read(.subjectTokenGitHubActions) {
            sources.append(.gitHubActions(audience: audience))
        }
        let grantName = try values.read(.workloadGrant)
        guard let subject = sources.first else {
            if grantName != nil {
                throw AuthError(
                    .configurationInvalid, "workload_grant needs a subject token",
                    hint: "give `subject_token_file`, `subject_token_command` or `subject_token_github_actions`",
                    field: Setting.subjectTokenFile.key)
            }
            return nil
        }
        guard sources.count == 1 else {
            throw AuthError(
                .configurationInvalid,
                "give one of subject_token_file, subject_token_command and subject_token_github_actions",
                field: Setting.subjectTokenFile.key)
        }
        if grantName == "jwt_bearer" { return .jwtBearer(subject) }
        return .tokenExchange(
            subject: subject, type: try values.read(.subjectTokenType) ?? .jwt,
            audience: try values.read(.tokenExchangeAudience))
    }

    /// The value of a provider's own setting (declared in ``AuthProvider/settings``) from
    /// ``additional``: a non-empty string, or `nil` when it is absent or empty.
    ///
    /// - Parameter setting: The declared key.
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set)
    ///   when the value is not a string.
    public func value(of setting: ProviderSetting) throws(AuthError) -> String? {
        guard let value = try additional[setting.key].flatMap(setting.text(of:)), !value.isEmpty else { return nil }
        return value
    }

    /// The typed value of a provider's own setting from ``additional``, parsed as its declaration
    /// says; `nil` when it is absent or empty.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set)
    ///   for a value its parse refuses.
    public func value<Value>(of setting: Setting<Value>) throws(AuthError) -> Value? {
        try value(of: setting.declaration).map { text throws(AuthError) in try setting.parse(text) }
    }

    /// Whether `object`, or an object within it, has a `client_secret`.
    private static func holdsClientSecret(_ object: JSONObject) -> Bool {
        object.contains(Setting.clientSecret.key)
            || object.contains(where: { $0.value.objectValue.map(holdsClientSecret) ?? false })
    }

    /// Reads a JSON configuration file.
    ///
    /// The file must be one only the user could have written, as OpenSSH asks of `~/.ssh/config`
    /// (a configuration may name a command to run): a regular file (not a symbolic link, not a
    /// FIFO), owned by the user or root, that neither group nor others may change.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) naming the file and, for a
    ///   parse error, the line and column; never quoting a secret from it; for a file that is not
    ///   such a file (with the `chmod` or `chown` that fixes it); for a file holding a
    ///   `client_secret` (at any depth) that other users can read.
    public static func load(contentsOf path: String) throws(AuthError) -> JSONObject {
        let file = try SecretFile(path, what: "configuration file", trusted: true)
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

/// Where a configuration's settings come from: the text of each (``ProviderSetting/text(of:)``).
struct SettingValues {
    let lookup: (ProviderSetting) throws(AuthError) -> String?

    init(_ lookup: @escaping (ProviderSetting) throws(AuthError) -> String?) { self.lookup = lookup }

    /// The text of `setting`; `nil` when it is absent or empty.
    func text(of setting: ProviderSetting) throws(AuthError) -> String? {
        guard let text = try lookup(setting), !text.isEmpty else { return nil }
        return text
    }

    /// The value of `setting`; `nil` when it is absent or empty.
    func read<Value>(_ setting: Setting<Value>) throws(AuthError) -> Value? {
        try text(of: setting.declaration).map { text throws(AuthError) in try setting.parse(text) }
    }
}
