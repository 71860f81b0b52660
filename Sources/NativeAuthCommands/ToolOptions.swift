public import ArgumentParser
internal import Configuration
internal import Foundation
internal import LenientJSON
public import NativeAuth
internal import NativeAuthAgent
internal import NativeAuthKeyring

/// The options every command of a tool takes: ``CommandOptions`` with every group of settings.
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
public typealias ToolOptions<Tool: NativeAuthTool> = CommandOptions<Tool, EverySetting>

/// The options of a command, made from the setting declarations of the groups it uses
/// (``SettingUse``), and the authenticator they describe: where to sign in, as whom, where tokens
/// are kept, and the settings the tool's providers declare.
///
/// Each declaration (`ProviderSetting`: the core's, NativeAuthCommands' own, and each registered
/// provider's `AuthProvider.settings`) is one option under a titled section of the command's
/// help: `--issuer`, `--client-id`, `--scope`, … and, for Cognito, `--user-pool-id`. Lists are
/// repeated (`--resource`), switches are flags (`--register-client`), files are made absolute.
///
/// Settings are read in layers, through swift-configuration's `ConfigReader`: the flags, then the
/// environment (`NATIVEAUTH_` and the key in capitals: `NATIVEAUTH_ISSUER`,
/// `NATIVEAUTH_USER_POOL_ID`), then the JSON file given with `--config`, then the profile
/// (`--profile`, `NATIVEAUTH_PROFILE` or a `.nativeauth.json`). A command's own settings (`login
/// --device-endpoint`) win over all of them.
public struct CommandOptions<Tool: NativeAuthTool, Use: SettingUse>: ParsableArguments, CustomReflectable, Sendable {
    /// The values given on the command line, by key (see ``SettingOptions/given``).
    var given: [String: [String]] = [:]

    /// Creates empty options (argument-parser fills them in).
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SettingCodingKey.self)
        for (label, section, _) in Self.sections {
            given.merge(try section.decode(container, key: SettingCodingKey(label))) { $1 }
        }
    }

    /// Every section, each with its label and whether the command's help shows it: the groups the
    /// command uses (``SettingUse``) are shown, in their order, then the providers' (when the use
    /// takes them); the other groups are hidden but still taken, so that one set of options can be
    /// passed to every command of a tool (a script's `--issuer … --scope …`).
    static var sections: [(label: String, section: any OptionSection.Type, hidden: Bool)] {
        let standard: [(SettingGroup, any OptionSection.Type)] = [
            (.server, ServerSection.self), (.clientAuthentication, ClientAuthenticationSection.self),
            (.request, RequestSection.self), (.workload, WorkloadSection.self), (.storage, StorageSection.self),
            (.transport, TransportSection.self),
        ]
        var sections = Use.groups.compactMap { group in
            standard.first { $0.0 == group }.map { (group.rawValue, $0.1, false) }
        }
        sections += standard.filter { !Use.groups.contains($0.0) }.map { ($0.0.rawValue, $0.1, true) }
        sections += Tool.providerSections.enumerated().map {
            ("provider\($0.offset)", $0.element, !Use.providerSettings)
        }
        return sections
    }

    public var customMirror: Mirror {
        Mirror(self, children: Self.sections.map { ("_" + $0.label, $0.section.optionGroup(hidden: $0.hidden)) })
    }

    /// The value given on the command line for `setting`.
    func flag<Value>(_ setting: Setting<Value>) -> String? { given[setting.key]?.first }

    /// The authenticator these options describe, for the account they choose (`--account`,
    /// `NATIVEAUTH_ACCOUNT`, a `.nativeauth.json`, else the active account), with the token storage
    /// they choose (`--token-storage`, default `auto`: the OS keyring when one answers, else files)
    /// and the standard transport (with `--ca-file`, `--client-cert`, `--client-key` and
    /// `--http-transport`), logging at `NATIVEAUTH_LOG_LEVEL`.
    ///
    /// - Parameter settings: Settings of the command itself (such as `login --device-endpoint`),
    ///   set or cleared over everything else.
    /// - Throws: `AuthError` for a configuration that is missing something or wrong, naming the key
    ///   in its `field`, for a keyring that was asked for and does not answer, and for an account
    ///   that is not signed in, or several accounts of which none is active.
    public func makeAuthenticator(settings: SettingOverrides = SettingOverrides()) async throws -> Authenticator {
        try await prepare(settings: settings).authenticator
    }

    typealias Prepared = PreparedAccount
    typealias Configured = ConfiguredTool

    /// The provider and settings these options describe, without opening the token storage (which
    /// may probe a keyring): for commands that only need the provider, or must decide first whether
    /// they have anything to do.
    func configure(
        settings: SettingOverrides = SettingOverrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Configured {
        let selection = try select(environment: environment)
        let layers = try layers(environment: environment, profile: selection.profile?.name, command: settings)
        let resolved = try ResolvedSettings(layers, tool: Tool.self)
        let provider: any AuthProvider
        do {
            provider = try Self.provider(resolved.configuration)
        } catch let error as AuthError {
            throw layers.naming(error)
        }
        return Configured(selection: selection, resolved: resolved, provider: provider)
    }

    /// The provider of `configuration`, with the tool's hint for a provider its build left out.
    private static func provider(_ configuration: ProviderConfiguration) throws -> any AuthProvider {
        do {
            return try Tool.makeRegistry().makeProvider(configuration)
        } catch let error as AuthError where error.code == .providerNotRegistered {
            var error = error
            if let hint = Tool.omittedProviders[configuration.provider] { error.hint = hint }
            throw error
        }
    }

    /// The one `--resource` given on the command line, for `token` and `api`; `nil` without one.
    ///
    /// - Throws: `AuthError` for several, or one that is not a resource indicator.
    func singleResource() throws(AuthError) -> URL? {
        let resources = given[Setting.resource.key] ?? []
        guard let first = resources.first else { return nil }
        guard resources.count == 1 else {
            throw AuthError(
                .configurationInvalid, "a token is for one resource; \(resources.count) were given",
                field: Setting.resource.key)
        }
        return try ProviderConfiguration.resourceIndicator(first)
    }

    /// The transport the options describe, without a provider configuration (which may be
    /// missing): for a request that needs none.
    func transportChoice(environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError)
        -> TransportChoice
    {
        let layers = try layers(environment: environment, profile: try select(environment: environment).profile?.name)
        return try TransportChoice(layers)
    }

    /// The authenticator and the storage picked for it.
    ///
    /// - Parameters:
    ///   - use: How the command uses the selected account.
    ///   - registers: Whether `--register-client` may register the client now; default: unless the
    ///     command only describes (a kept registration is used then, and none made).
    ///   - registrationScopes: The scopes to register the client for; default: the configuration's.
    func prepare(
        settings: SettingOverrides = SettingOverrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        use: AccountUse = .act,
        registers: Bool? = nil,
        registrationScopes: [String]? = nil
    ) async throws -> Prepared {
        try await open(
            configure(settings: settings, environment: environment), environment: environment, use: use,
            registers: registers ?? (use != .describe), registrationScopes: registrationScopes)
    }

    /// Opens the storage of `configured` and picks the account.
    func open(
        _ configured: Configured,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        use: AccountUse,
        registers: Bool,
        registrationScopes: [String]? = nil
    ) async throws -> Prepared {
        if let socket = AgentSocket.named(in: environment) {
            return try await borrowing(
                configured, from: AgentClient(socket: socket), environment: environment, use: use)
        }
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
            base = try await Self.registered(
                base, registers: registers, scopes: registrationScopes ?? base.provider.configuration.scopes,
                environment: environment)
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
        _ base: Authenticator, registers: Bool, scopes: [String], environment: [String: String]
    ) async throws -> Authenticator {
        // One loopback port, registered exactly: servers that match redirect URIs exactly (the
        // MCP SDK's) take it, and the others take it as any port. A kept registration keeps its own.
        let client = ClientMetadata(
            clientName: Tool.toolName, redirectURIs: try ClientMetadata.loopbackRedirectURIs(),
            scope: scopes.isEmpty ? nil : scopes.joined(separator: " "),
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
                hint: "choose one with `\(Tool.toolName) switch NAME`, or --account NAME", field: Setting.account.key)
        }
        // Nothing listed here: the account last active (its tokens may be in another backend, for
        // a logout to remove), else "default", a sign-in stored before accounts had names.
        let key = accounts.authenticator.key
        return try await accounts.activeStore.activeAccount(issuer: key.issuer, clientID: key.clientID)
            ?? TokenKey.defaultAccount
    }

    /// The account and profile named by flags, the environment or a `.nativeauth.json`.
    func select(environment: [String: String]) throws(AuthError) -> Selection {
        // A helper another program runs (git's, Docker's, kubectl's) runs in that program's
        // directory, a cloned repository say: its `.nativeauth.json` is not the person's choice.
        let ignoresDirectory =
            flag(.ignoreDirectoryFile) != nil
            || ["1", "true", "yes"].contains(environment["NATIVEAUTH_IGNORE_DIRECTORY_FILE"]?.lowercased() ?? "")
        let directory =
            ignoresDirectory ? nil : try DirectoryChoice.find(from: FileManager.default.currentDirectoryPath)
        return Selection.resolve(
            accountFlag: flag(.account), profileFlag: flag(.profile), environment: environment, directory: directory)
    }

    /// The layers the settings are read from: the command's own settings, the flags, the
    /// environment, the `--config` file, the profile.
    func layers(
        environment: [String: String], profile: String?, command: SettingOverrides = SettingOverrides()
    ) throws(AuthError) -> SettingLayers {
        let declared = Tool.allSettings
        var layers = SettingLayers(declared: declared, defaults: [Setting.provider.key: Tool.defaultProvider])
        layers.add("the command", overrides: command)
        layers.add(
            "the command line",
            values: try flagSettings(secretAlternative: "--client-secret-file or NATIVEAUTH_CLIENT_SECRET"))
        layers.addEnvironment(environment)
        if let config = flag(.config) {
            try layers.add("the file \(config)", object: try ProviderConfiguration.load(contentsOf: config))
        }
        if let profile {
            let path = Profiles.path(configurationName: Tool.configurationName, environment: environment)
            try layers.add("the profile \(profile)", object: try Profiles.load(path: path).profile(profile))
        }
        return layers
    }

    /// The settings the flags give, by key (paths made absolute, a client secret file read);
    /// `--client-secret` warns, naming `secretAlternative` as the safe way.
    private func flagSettings(secretAlternative: String) throws(AuthError) -> [String: String] {
        if flag(.clientSecret) != nil {
            CommandSupport.warn(
                "--client-secret puts the secret in the process list, where every user of this machine can read it;"
                    + " use " + secretAlternative)
        }
        var settings: [String: String] = [:]
        for setting in Tool.allSettings {
            guard let values = given[setting.key] else { continue }
            settings[setting.key] = values.map { setting.isPath ? ToolInvocation.absolute($0) : $0 }
                .joined(separator: " ")
        }
        for key in [Setting.config.key, Setting.profile.key, Setting.account.key, Setting.clientSecretFile.key] {
            settings[key] = nil
        }
        if let path = flag(.clientSecretFile) {
            settings[Setting.clientSecret.key] = try ClientSecretFile.read(path)
        }
        return settings
    }

    /// The settings given as flags (a client secret file read), for `profile add`: no profile,
    /// `--config` file or environment variable; each checked by its declaration.
    func givenSettings() throws(AuthError) -> JSONObject {
        var object = JSONObject()
        let declared = Tool.allSettings
        for (key, value) in try flagSettings(secretAlternative: "--client-secret-file").sorted(by: { $0.key < $1.key })
        {
            try declared.first { $0.key == key }?.validate(value)
            object[key] = .string(value)
        }
        return object
    }
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

/// What a command works with: the accounts, the selected one and why, and the storage.
struct PreparedAccount {
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

/// What the options name, before any storage is opened: the account and profile chosen, the
/// resolved settings and the provider.
struct ConfiguredTool {
    var selection: Selection
    var resolved: ResolvedSettings
    var provider: any AuthProvider
}

/// What the settings resolve to: the provider configuration, where tokens are kept, the transport.
struct ResolvedSettings {
    var configuration: ProviderConfiguration
    /// `--store` (or its variable or key), when given.
    var storeDirectory: String?
    var storage: TokenStorage.Choice
    /// The HTTP transport and its trust.
    var transport: TransportChoice

    init<Tool: NativeAuthTool>(_ layers: SettingLayers, tool: Tool.Type) throws(AuthError) {
        do {
            try self.init(reading: layers, tool: tool)
        } catch {
            // The value is wrong where it was given: the error says which layer gave it.
            throw layers.naming(error)
        }
    }

    private init<Tool: NativeAuthTool>(reading layers: SettingLayers, tool: Tool.Type) throws(AuthError) {
        storeDirectory = try layers.read(.store)
        // `--store DIR` alone asks for files there.
        storage = try layers.read(.tokenStorage) ?? (storeDirectory == nil ? .auto : .file)
        transport = try TransportChoice(layers)
        let id = try layers.read(.provider) ?? Tool.defaultProvider
        let settings = (try? Tool.makeRegistry().type(for: id).settings) ?? []
        configuration = try ProviderConfiguration(reading: layers.reader, settings: settings)
    }
}
