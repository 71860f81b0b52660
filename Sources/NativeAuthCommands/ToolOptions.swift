public import ArgumentParser
internal import Foundation
internal import LenientJSON
public import NativeAuth
internal import NativeAuthKeyring

/// The options every command of a tool takes, and the authenticator they describe: where to sign
/// in, as whom, where tokens are kept, and the settings the tool's providers declare.
///
/// - `--issuer`, `--client-id`, `--client-secret`, `--client-secret-file`, `--scope`, `--client-auth`,
///   `--client-assertion-key` (and its `--client-assertion-kid`), `--provider`,
///   `--config FILE`, `--store DIR` and `--token-storage auto|keyring|file|none`;
/// - the HTTP transport's trust: `--ca-file`, `--client-cert` and `--client-key` (`ca_file`,
///   `client_cert`, `client_key`; `http_transport` picks `asynchttpclient` or `urlsession`); the
///   proxy variables and `SSL_CERT_FILE` are read as curl reads them;
/// - one option per setting the registered providers declare (`AuthProvider.settings`: Cognito's
///   `--user-pool-id`, GitHub's `--host`), with the declaration's help.
///
/// Each can also come from the environment (`NATIVEAUTH_` and the key in capitals:
/// `NATIVEAUTH_ISSUER`, `NATIVEAUTH_CLIENT_ID`, `NATIVEAUTH_USER_POOL_ID`, `NATIVEAUTH_STORE` and
/// `NATIVEAUTH_TOKEN_STORAGE`) or
/// from the JSON file given with `--config` (snake_case keys). Flags win over the environment, the
/// environment over the file.
///
/// A tool's own commands take them the way the ready ones do:
///
/// ```swift
/// struct WhoAmI<Tool: NativeAuthTool>: AsyncParsableCommand {
///     @OptionGroup var options: ToolOptions<Tool>
///     func run() async throws {
///         let authenticator = try await options.makeAuthenticator()
///         print(try await authenticator.userInfo().subject)
///     }
/// }
/// ```
public struct ToolOptions<Tool: NativeAuthTool>: ParsableArguments {
    typealias Slots = ProviderSettingSlots<Tool>

    @Option(name: .long, help: ArgumentHelp(ProviderSetting.issuer.help))
    var issuer: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp(ProviderSetting.clientID.help))
    var clientID: String?

    @Option(name: .customLong("client-secret"), help: ArgumentHelp(ProviderSetting.clientSecret.help))
    var clientSecret: String?

    @Option(
        name: .customLong("client-secret-file"),
        help: "A file holding the client secret (only you may read it), or - for standard input.")
    var clientSecretFile: String?

    @Option(name: .long, help: ArgumentHelp(ProviderSetting.scope.help))
    var scope: String?

    @Option(name: .customLong("client-auth"), help: ArgumentHelp(ProviderSetting.clientAuthentication.help))
    var clientAuth: String?

    @Option(
        name: .customLong("client-assertion-key"),
        help: ArgumentHelp(ProviderSetting.clientAssertionKey.help, valueName: "file"))
    var clientAssertionKey: String?

    @Option(
        name: .customLong("client-assertion-kid"),
        help: ArgumentHelp(ProviderSetting.clientAssertionKeyID.help, valueName: "kid"))
    var clientAssertionKeyID: String?

    @Option(name: .long, help: ArgumentHelp(ProviderSetting.dpop.help, valueName: "auto|required|off"))
    var dpop: String?

    @Option(
        name: .customLong("pushed-authorization-requests"),
        help: ArgumentHelp(ProviderSetting.pushedAuthorizationRequests.help, valueName: "auto|required|off"))
    var pushedAuthorizationRequests: String?

    @Option(
        name: .customLong("resource"),
        help: ArgumentHelp(
            "A protected resource (RFC 8707) the tokens are for, an absolute URL; repeat for several. With `token`"
                + " and `api`: a token for this resource alone, under the same sign-in.",
            valueName: "url"))
    var resource: [String] = []

    @Option(
        name: .customLong("subject-token-file"),
        help: ArgumentHelp(ProviderSetting.subjectTokenFile.help, valueName: "file"))
    var subjectTokenFile: String?

    @Option(
        name: .customLong("subject-token-command"),
        help: ArgumentHelp(ProviderSetting.subjectTokenCommand.help, valueName: "command"))
    var subjectTokenCommand: String?

    @Option(
        name: .customLong("subject-token-github-actions"),
        help: ArgumentHelp(ProviderSetting.subjectTokenGitHubActions.help, valueName: "audience"))
    var subjectTokenGitHubActions: String?

    @Option(
        name: .customLong("subject-token-type"),
        help: ArgumentHelp(ProviderSetting.subjectTokenType.help, valueName: "type"))
    var subjectTokenType: String?

    @Option(
        name: .customLong("workload-grant"),
        help: ArgumentHelp(ProviderSetting.workloadGrant.help, valueName: "token_exchange|jwt_bearer"))
    var workloadGrant: String?

    @Option(
        name: .customLong("token-exchange-audience"),
        help: ArgumentHelp(ProviderSetting.tokenExchangeAudience.help, valueName: "audience"))
    var tokenExchangeAudience: String?

    @Flag(
        name: .customLong("register-client"),
        help: ArgumentHelp(
            "Without --client-id, register this tool as a client of the issuer (RFC 7591 dynamic registration, or"
                + " a client id metadata document): once, kept beside the tokens, again when it expires."
                + " NATIVEAUTH_INITIAL_ACCESS_TOKEN gives the token a server may want for it."))
    var registerClient = false

    @Option(name: .long, help: "The provider id (as registered by the tool).")
    var provider: String?

    @Option(name: .long, help: "A JSON configuration file (snake_case keys).")
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A named profile of settings (see `profile`); also NATIVEAUTH_PROFILE or a .nativeauth.json here.",
            valueName: "name"))
    var profile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The account to act on, without changing the active one (also NATIVEAUTH_ACCOUNT); for login, the name"
                + " to keep the sign-in under (default: who signed in).",
            valueName: "name"))
    var account: String?

    @Option(
        name: .long,
        help: "The token file directory (default: $XDG_STATE_HOME/nativeauth); given, tokens are kept in files there.")
    var store: String?

    @Option(
        name: .customLong("token-storage"),
        help: ArgumentHelp(
            "Where tokens are kept: auto (the OS keyring when one answers, else files), keyring, file or none (memory only).",
            valueName: "auto|keyring|file|none"))
    var tokenStorage: String?

    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "PEM certificates to trust in addition to the system's (a private CA, a TLS-inspecting proxy's).",
            valueName: "file"))
    var caFile: String?

    @Option(
        name: .customLong("client-cert"),
        help: ArgumentHelp("A PEM client certificate for servers that ask for one (mutual TLS).", valueName: "file"))
    var clientCert: String?

    @Option(
        name: .customLong("client-key"),
        help: ArgumentHelp("The PEM private key of --client-cert (only you may read it).", valueName: "file"))
    var clientKey: String?

    // One option per declared provider setting (see ProviderSettingSlots). Every option is here
    // rather than in option groups of its own: argument-parser's debug-build checks go through each
    // option once per level of nesting, and the sample CLIs start hundreds of times in the tests.
    @Option(name: Slots.name(0), help: Slots.help(0)) var slot0: String?
    @Option(name: Slots.name(1), help: Slots.help(1)) var slot1: String?
    @Option(name: Slots.name(2), help: Slots.help(2)) var slot2: String?
    @Option(name: Slots.name(3), help: Slots.help(3)) var slot3: String?
    @Option(name: Slots.name(4), help: Slots.help(4)) var slot4: String?
    @Option(name: Slots.name(5), help: Slots.help(5)) var slot5: String?
    @Option(name: Slots.name(6), help: Slots.help(6)) var slot6: String?
    @Option(name: Slots.name(7), help: Slots.help(7)) var slot7: String?
    @Option(name: Slots.name(8), help: Slots.help(8)) var slot8: String?
    @Option(name: Slots.name(9), help: Slots.help(9)) var slot9: String?
    @Option(name: Slots.name(10), help: Slots.help(10)) var slot10: String?
    @Option(name: Slots.name(11), help: Slots.help(11)) var slot11: String?
    @Option(name: Slots.name(12), help: Slots.help(12)) var slot12: String?
    @Option(name: Slots.name(13), help: Slots.help(13)) var slot13: String?
    @Option(name: Slots.name(14), help: Slots.help(14)) var slot14: String?
    @Option(name: Slots.name(15), help: Slots.help(15)) var slot15: String?

    /// Creates empty options (argument-parser fills them in).
    public init() {}

    /// The keys of the options that are the command line's own, not a provider's setting.
    static var ownKeys: [String] {
        ["provider", "config", "store", "token_storage", "profile", "account"] + TransportChoice.keys
    }

    var slots: [String?] {
        [
            slot0, slot1, slot2, slot3, slot4, slot5, slot6, slot7, slot8, slot9, slot10, slot11, slot12, slot13,
            slot14, slot15,
        ]
    }

    public func validate() throws {
        try Slots.checkUnused(slots)
    }

    /// The authenticator these options describe, for the account they choose (`--account`,
    /// `NATIVEAUTH_ACCOUNT`, a `.nativeauth.json`, else the active account), with the token storage
    /// they choose (`--token-storage`, default `auto`: the OS keyring when one answers, else files)
    /// and the standard transport (with `--ca-file`, `--client-cert`, `--client-key` and
    /// `http_transport`), logging at `NATIVEAUTH_LOG_LEVEL`.
    ///
    /// - Parameter settings: Settings of the command itself (such as `login --device-endpoint`),
    ///   which win over everything else.
    /// - Throws: `AuthError` for a configuration that is missing something or wrong, naming the key
    ///   in its `field`, for a keyring that was asked for and does not answer, and for an account
    ///   that is not signed in, or several accounts of which none is active.
    public func makeAuthenticator(settings: [String: String] = [:]) async throws -> Authenticator {
        try await prepare(settings: settings).authenticator
    }

    /// What a command works with: the accounts, the selected one and why, and the storage.
    struct Prepared {
        /// The authenticator of the selected account.
        var authenticator: Authenticator
        var storage: TokenStorage
        var accounts: Accounts
        /// The selected account.
        var account: String
        /// The account named by `--account`, `NATIVEAUTH_ACCOUNT` or a `.nativeauth.json` (its
        /// path), and which; `nil` when the active account was taken.
        var named: (name: String, source: String)?
        /// The profile used, and what chose it.
        var profile: (name: String, source: String)?

        /// What selected the account: ``named``'s source, or `the active account`.
        var accountSource: String { named?.source ?? "the active account" }
    }

    /// How a command uses the selected account.
    enum AccountUse {
        /// Acts on it: a named account must be signed in (`token`, `api`, `logout`, …).
        case act
        /// Describes it: a named account may be missing (`status`).
        case describe
        /// Only a named account matters, as a name (`login`), or none (`switch`, `--all`).
        case none
    }

    /// What the options name, before any storage is opened: the account and profile chosen, the
    /// resolved settings and the provider.
    struct Configured {
        var selection: Selection
        var resolved: Resolved
        var provider: any AuthProvider
    }

    /// The provider and settings these options describe, without opening the token storage (which
    /// may probe a keyring): for commands that only need the provider, or must decide first whether
    /// they have anything to do.
    func configure(
        settings: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Configured {
        let merged = Slots.settings(slots).merging(settings) { $1 }
        let selection = try select(environment: environment)
        let resolved = try resolve(environment: environment, settings: merged, profile: selection.profile?.name)
        let registry = try Tool.makeRegistry()
        do {
            return Configured(
                selection: selection, resolved: resolved, provider: try registry.makeProvider(resolved.configuration))
        } catch let error as AuthError where error.code == .providerNotRegistered {
            var error = error
            if let hint = Tool.omittedProviders[resolved.configuration.provider] { error.hint = hint }
            throw error
        }
    }

    /// The one `--resource` given on the command line, for `token` and `api`; `nil` without one.
    ///
    /// - Throws: `AuthError` for several, or one that is not a resource indicator.
    func singleResource() throws(AuthError) -> URL? {
        guard let first = resource.first else { return nil }
        guard resource.count == 1 else {
            throw AuthError(
                .configurationInvalid, "a token is for one resource; \(resource.count) --resource options were given",
                field: ProviderSetting.resource.key)
        }
        return try ProviderConfiguration.resourceIndicator(first)
    }

    /// The transport the options describe, without a provider configuration (which may be
    /// missing): for a request that needs none.
    func transportChoice(environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError)
        -> TransportChoice
    {
        var object = try merged(environment: environment, profile: try select(environment: environment).profile?.name)
        return try TransportChoice(taking: &object)
    }

    /// The authenticator and the storage picked for it.
    ///
    /// - Parameters:
    ///   - use: How the command uses the selected account.
    ///   - registers: Whether `--register-client` may register the client now; default: unless the
    ///     command only describes (a kept registration is used then, and none made).
    func prepare(
        settings: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        use: AccountUse = .act,
        registers: Bool? = nil
    ) async throws -> Prepared {
        try await open(
            configure(settings: settings, environment: environment), environment: environment, use: use,
            registers: registers ?? (use != .describe))
    }

    /// Opens the storage of `configured` and picks the account.
    func open(
        _ configured: Configured,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        use: AccountUse,
        registers: Bool
    ) async throws -> Prepared {
        let resolved = configured.resolved
        let selection = configured.selection
        let storage = try await CommandStorage.open(
            resolved.storage, fileDirectory: resolved.storeDirectory, environment: environment)
        let logger = CommandSupport.makeLogger(label: Tool.toolName)
        var base = Authenticator(
            provider: configured.provider,
            store: storage.store,
            transport: resolved.transport.makeTransport(logger: logger),
            logger: logger
        )
        if resolved.configuration.registersClient {
            base = try await Self.registered(base, registers: registers, environment: environment)
        }
        let accounts = Accounts(base, active: storage.activeAccounts)
        let account = try await Self.account(selection.account, of: accounts, use: use)
        return Prepared(
            authenticator: accounts.authenticator(for: account), storage: storage, accounts: accounts,
            account: account, named: selection.account, profile: selection.profile)
    }

    /// `base` registered as a client of its issuer (`--register-client` without `--client-id`),
    /// with a notice when it was registered now; without `registers`, a registration that was
    /// kept is used, and none made.
    private static func registered(
        _ base: Authenticator, registers: Bool, environment: [String: String]
    ) async throws -> Authenticator {
        let scopes = base.provider.configuration.scopes
        let client = ClientMetadata(
            clientName: Tool.toolName, scope: scopes.isEmpty ? nil : scopes.joined(separator: " "),
            softwareID: Tool.toolName, softwareVersion: NativeAuthVersion.current,
            metadataDocument: base.provider.configuration.clientMetadataDocument)
        let kept = try await base.storedRegistration(of: client)
        if !registers, kept == nil { return base }
        let token = environment["NATIVEAUTH_INITIAL_ACCESS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let registered = try await base.registeringClient(client, initialAccessToken: token)
        let clientID = registered.provider.configuration.clientID
        if clientID != kept?.clientID, clientID != client.metadataDocument?.absoluteString {
            CommandSupport.notice(
                "registered as client \(clientID) at \(base.provider.tokenIssuer)")
        }
        return registered
    }

    /// The account a command acts on: the named one (checked to be signed in when the command
    /// acts on it), else the active one.
    private static func account(
        _ named: (name: String, source: String)?,
        of accounts: Accounts,
        use: AccountUse
    ) async throws -> String {
        if let named {
            try Accounts.validate(name: named.name)
            guard use == .act else { return named.name }
            let names = try await accounts.names()
            if !names.contains(named.name), try await accounts.authenticator(for: named.name).currentTokens() == nil {
                var error = Accounts.unknown(named.name, among: names)
                error.message += " (chosen by \(named.source))"
                if names.isEmpty { error.hint = "run `\(Tool.toolName) login --account \(named.name)`" }
                throw error
            }
            return named.name
        }
        guard use != .none else { return TokenKey.defaultAccount }
        let names = try await accounts.names()
        if let active = try await accounts.active(among: names) { return active }
        guard names.isEmpty else {
            throw AuthError(
                .configurationInvalid,
                "several accounts are signed in (\(names.joined(separator: ", "))) and none is active",
                hint: "choose one with `\(Tool.toolName) switch NAME`, or --account NAME", field: "account")
        }
        // Nothing listed here: the account last active (its tokens may be in another backend, for
        // a logout to remove), else "default", a sign-in stored before accounts had names.
        let key = accounts.authenticator.key
        return try await accounts.activeStore.activeAccount(issuer: key.issuer, clientID: key.clientID)
            ?? TokenKey.defaultAccount
    }

    /// The account and profile named by flags, the environment or a `.nativeauth.json`.
    func select(environment: [String: String]) throws(AuthError) -> Selection {
        let directory = try DirectoryChoice.find(from: FileManager.default.currentDirectoryPath)
        return Selection.resolve(
            accountFlag: account, profileFlag: profile, environment: environment, directory: directory)
    }

    /// The settings from the profile, then the `--config` file, then the environment, then the flags.
    func merged(environment: [String: String], profile: String? = nil) throws(AuthError) -> JSONObject {
        var object = JSONObject()
        if let profile {
            let path = Profiles.path(configurationName: Tool.configurationName, environment: environment)
            object = try Profiles.load(path: path).profile(profile)
        }
        if let config {
            for member in try ProviderConfiguration.load(contentsOf: config) { object[member.key] = member.value }
        }
        let settings = ProviderSetting.standard + Tool.providerSettings.map(\.setting)
        let variables =
            settings.map { ($0.environmentVariable, $0.key) } + [
                ("NATIVEAUTH_STORE", "store"), ("NATIVEAUTH_TOKEN_STORAGE", "token_storage"),
            ] + TransportChoice.keys.map { ("NATIVEAUTH_" + $0.uppercased(), $0) }
        for (variable, key) in variables {
            if let value = environment[variable], !value.isEmpty { object[key] = .string(value) }
        }
        for (key, value) in try flagSettings(secretAlternative: "--client-secret-file or NATIVEAUTH_CLIENT_SECRET") {
            object[key] = .string(value)
        }
        return object
    }

    /// The settings the flags give, by key (paths made absolute, a client secret file read);
    /// `--client-secret` warns, naming `secretAlternative` as the safe way.
    private func flagSettings(secretAlternative: String) throws(AuthError) -> [(String, String)] {
        if clientSecret != nil {
            CommandSupport.warn(
                "--client-secret puts the secret in the process list, where every user of this machine can read it;"
                    + " use " + secretAlternative)
        }
        let secretFromFile = try clientSecretFile.map { path throws(AuthError) in try ClientSecretFile.read(path) }
        let flags: [(String, String?)] = [
            ("provider", provider), ("issuer", issuer), ("client_id", clientID),
            ("client_secret", secretFromFile ?? clientSecret), ("scope", scope), ("client_auth", clientAuth),
            ("resource", resource.isEmpty ? nil : resource.joined(separator: " ")), ("store", store),
            ("token_storage", tokenStorage),
            ("ca_file", caFile.map { ToolInvocation.absolute($0) }),
            ("client_cert", clientCert.map { ToolInvocation.absolute($0) }),
            ("client_key", clientKey.map { ToolInvocation.absolute($0) }),
            ("client_assertion_key", clientAssertionKey.map { ToolInvocation.absolute($0) }),
            ("client_assertion_kid", clientAssertionKeyID),
            ("subject_token_file", subjectTokenFile.map { ToolInvocation.absolute($0) }),
            ("subject_token_command", subjectTokenCommand),
            ("subject_token_github_actions", subjectTokenGitHubActions), ("subject_token_type", subjectTokenType),
            ("workload_grant", workloadGrant), ("token_exchange_audience", tokenExchangeAudience),
            ("register_client", registerClient ? "true" : nil), ("dpop", dpop),
            ("pushed_authorization_requests", pushedAuthorizationRequests),
        ]
        return flags.compactMap { key, value in value.map { (key, $0) } }
    }

    /// The settings given as flags (a client secret file read), for `profile add`: no profile,
    /// `--config` file or environment variable.
    func givenSettings() throws(AuthError) -> JSONObject {
        var object = JSONObject()
        for (key, value) in try flagSettings(secretAlternative: "--client-secret-file") { object[key] = .string(value) }
        for (key, value) in Slots.settings(slots).sorted(by: { $0.key < $1.key }) { object[key] = .string(value) }
        if let storage = tokenStorage { _ = try Self.storageChoice(storage, storeGiven: store != nil) }
        return object
    }

    /// What the options resolve to: the provider configuration and where tokens are kept.
    struct Resolved {
        var configuration: ProviderConfiguration
        /// `--store` (or its variable or key), when given.
        var storeDirectory: String?
        var storage: TokenStorage.Choice
        /// The HTTP transport and its trust.
        var transport: TransportChoice
    }

    /// The provider configuration and the storage.
    ///
    /// - Parameter settings: The provider options and the command's own settings, which win over
    ///   everything else.
    func resolve(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        settings: [String: String] = [:],
        profile: String? = nil
    ) throws(AuthError) -> Resolved {
        var object = try merged(environment: environment, profile: profile)
        for (key, value) in settings { object[key] = .string(value) }
        let store = (try? object.string("store")) ?? nil
        let storage = try Self.storageChoice((try? object.string("token_storage")) ?? nil, storeGiven: store != nil)
        object["store"] = nil
        object["token_storage"] = nil
        let transport = try TransportChoice(taking: &object)
        if object["provider"] == nil { object["provider"] = .string(Tool.defaultProvider) }
        return Resolved(
            configuration: try ProviderConfiguration(json: object), storeDirectory: store, storage: storage,
            transport: transport)
    }

    /// The storage named by `value`; without one, `auto`, or `file` when a token directory was
    /// given (`--store DIR` asks for files there).
    static func storageChoice(_ value: String?, storeGiven: Bool) throws(AuthError) -> TokenStorage.Choice {
        guard let value else { return storeGiven ? .file : .auto }
        guard let choice = TokenStorage.Choice(rawValue: value.lowercased()) else {
            throw AuthError(
                .configurationInvalid, "unknown token storage '\(value)'",
                hint: "use one of: auto, keyring, file, none", field: "token_storage")
        }
        return choice
    }
}

/// The options of the settings a tool's providers declare (`AuthProvider.settings`):
/// `--user-pool-id VALUE` for `user_pool_id`, with the declaration's help.
///
/// argument-parser finds options by reflecting stored properties, so a type cannot have as many
/// options as a list has entries. ``ToolOptions`` has ``count`` slots instead, each named at run
/// time after the declaration at its index; the slots past the last declaration are hidden from
/// help and completion, and a value given to one is refused.
enum ProviderSettingSlots<Tool: NativeAuthTool> {
    /// How many settings a tool's providers may declare between them.
    static var count: Int { 16 }

    private static var declared: [DeclaredSetting] {
        let declared = Tool.providerSettings
        precondition(
            declared.count <= count,
            "\(Tool.toolName)'s providers declare \(declared.count) settings; NativeAuthCommands offers \(count)"
        )
        return declared
    }

    private static func unusedName(_ slot: Int) -> String { "nativeauth-unused-setting-\(slot)" }

    static func name(_ slot: Int) -> NameSpecification {
        let declared = declared
        guard slot < declared.count else { return .customLong(unusedName(slot)) }
        return .customLong(declared[slot].optionName)
    }

    static func help(_ slot: Int) -> ArgumentHelp {
        let declared = declared
        guard slot < declared.count else { return .private }
        return ArgumentHelp(declared[slot].help, valueName: declared[slot].optionName)
    }

    /// The settings given on the command line, by configuration key.
    static func settings(_ slots: [String?]) -> [String: String] {
        var settings: [String: String] = [:]
        for (declared, value) in zip(declared, slots) {
            if let value { settings[declared.setting.key] = value }
        }
        return settings
    }

    /// Refuses a value given to a slot that no declaration names.
    static func checkUnused(_ slots: [String?]) throws {
        for (slot, value) in slots.enumerated() where slot >= declared.count && value != nil {
            throw ValidationError("Unknown option '--\(unusedName(slot))'")
        }
    }
}
