public import ArgumentParser
public import Foundation
public import NativeAuth

/// What a command-line tool tells the ready-made commands about itself.
///
/// A sample CLI conforms its root command to this protocol, lists the provider modules it links
/// and the commands it wants:
///
/// ```swift
/// @main struct OIDCLogin: AsyncParsableCommand, NativeAuthTool {
///     static let configuration = CommandConfiguration(
///         commandName: "oidc-login",
///         subcommands: [LoginCommand<OIDCLogin>.self, StatusCommand<OIDCLogin>.self]
///     )
///     static let toolName = "oidc-login"
///     static let defaultProvider = GenericOIDCProvider.id
///     static let providers: [any AuthProvider.Type] = [GenericOIDCProvider.self]
/// }
/// ```
///
/// Every command takes the standard options it uses (`--issuer`, `--client-id`, …) and one option
/// per setting the providers declare (`AuthProvider.settings`: Cognito's `--region`, GitHub's
/// `--host`) under a section of each provider's, with its environment variable
/// (`NATIVEAUTH_REGION`), its key in a `--config` file, and the hint of an error about it, all
/// derived from the declaration.
public protocol NativeAuthTool: SendableMetatype {
    /// The tool's command name, used in hints ("run `oidc-login login`").
    static var toolName: String { get }
    /// The provider id used when neither `--provider` nor the configuration names one.
    static var defaultProvider: String { get }
    /// The provider modules this tool links, in the order its help lists their settings.
    /// Default: those ``makeRegistry()`` registers.
    static var providers: [any AuthProvider.Type] { get }
    /// The providers this tool linked, registered. Default: each of ``providers``.
    static func makeRegistry() throws -> ProviderRegistry
    /// Hints for provider ids this build left out, by id ("rebuild with the GitHub trait"); shown
    /// when a configuration asks for one. Default: none.
    static var omittedProviders: [String: String] { get }
    /// The directory name of the tool's profiles under `$XDG_CONFIG_HOME` (`~/.config`).
    /// Default: `nativeauth`, shared by every tool built on NativeAuth.
    static var configurationName: String { get }
    /// Where `api PATH` resolves a relative path for `provider`. Default: the provider's
    /// `ProviderService.apiBaseURL` when it tells one, else its issuer.
    static func apiBaseURL(for provider: any AuthProvider) -> URL?
    /// The git host and user name of `provider`, for `git-credential` and `setup-git`. Default:
    /// the provider's `ProviderService.gitHost` and `ProviderService.gitUsername` when it
    /// tells them, else no host (`--git-host` names it) and the user name `oauth2`.
    static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults
}

extension NativeAuthTool {
    public static var providers: [any AuthProvider.Type] { (try? makeRegistry())?.providerTypes ?? [] }

    public static func makeRegistry() throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        for type in providers { try registry.register(type) }
        return registry
    }

    public static var omittedProviders: [String: String] { [:] }

    public static var configurationName: String { "nativeauth" }

    public static func apiBaseURL(for provider: any AuthProvider) -> URL? {
        (provider as? any ProviderService)?.apiBaseURL ?? provider.configuration.issuer
    }

    public static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults {
        guard let service = provider as? any ProviderService else { return GitCredentialDefaults() }
        return GitCredentialDefaults(host: service.gitHost, username: service.gitUsername)
    }

    /// Every ready-made command, in the order `--help` lists them: `login`, `status`, `token`, `api`,
    /// `userinfo`, `refresh`, `logout`, `switch`, `profile`, and the adapters for other programs:
    /// `kubeconfig`, `git-credential`, `setup-git`, `docker-credential`, `setup-docker`, `setup-aws`,
    /// `setup-google`; and `agent`, which serves the sign-ins to other processes and machines.
    public static var standardCommands: [any ParsableCommand.Type] {
        [
            LoginCommand<Self>.self, StatusCommand<Self>.self, TokenCommand<Self>.self, APICommand<Self>.self,
            UserInfoCommand<Self>.self, RefreshCommand<Self>.self, LogoutCommand<Self>.self, SwitchCommand<Self>.self,
            ProfileCommand<Self>.self, KubeconfigCommand<Self>.self, GitCredentialCommand<Self>.self,
            SetupGitCommand<Self>.self, DockerCredentialCommand<Self>.self, SetupDockerCommand<Self>.self,
            SetupAWSCommand<Self>.self, SetupGoogleCommand<Self>.self, AgentCommand<Self>.self,
        ]
    }
}

extension NativeAuthTool {
    /// The hint of `error` in this tool's words: the settings it names (`` `client_auth` ``) as the
    /// tool's options, and for a server asking for a stronger sign-in, the commands that do it.
    static func hint(for error: AuthError) -> String? {
        if error.code == .stepUpRequired {
            return "sign in again as it asks: `\(toolName) api --step-up URL`, or `\(toolName) login --acr-values"
                + " VALUES --max-age SECONDS`"
        }
        return error.hint(naming: optionWords(forKey:))
    }

    /// How this tool's command line gives the setting `key`: its option; a secret from a file or
    /// the environment; `nil` for a key it does not know.
    static func optionWords(forKey key: String) -> String? {
        switch key {
        case Setting.clientSecret.key: return "--client-secret-file FILE or NATIVEAUTH_CLIENT_SECRET"
        case "port": return "--port PORT"
        default:
            guard let setting = allSettings.first(where: { $0.key == key }) else { return nil }
            return setting.group == .endpoints ? "\"\(key)\" in --config FILE" : setting.flag
        }
    }

    /// The hint for an error about the configuration key `field`: where it is set.
    static func hint(forField field: String) -> String? {
        if field == "device_authorization_endpoint" {
            return "set it with --device-endpoint URL (login --device), or \"device_authorization_endpoint\""
                + " in --config FILE"
        }
        // The command line's own settings (the account, the storage, the transport's files) have
        // errors whose own hints say more than where they are set.
        guard let setting = allSettings.first(where: { $0.key == field }), !CommandSettings.own.contains(setting)
        else { return nil }
        guard setting.group != .endpoints else {
            return "set \"\(setting.key)\" in --config FILE or a profile, or \(setting.environmentVariable)"
        }
        return "set it with \(setting.flag), \(setting.environmentVariable) or \"\(setting.key)\" in --config FILE"
    }
}

extension NativeAuthTool where Self: AsyncParsableCommand {
    /// Runs the tool (`@main` calls this): parses the command line, runs the command, and exits
    /// with its status. A command line refused while it names a provider this build left out
    /// (`--provider github --host …` in a build without GitHub, whose options it then lacks) says
    /// which provider that is and how to build with it (``omittedProviders``), instead of the
    /// unknown option alone.
    public static func main() async {
        do {
            var command = try await asyncParseAsRoot(nil)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure,
                let (id, hint) = omittedProvider(
                    arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
            {
                CommandSupport.report(
                    AuthError(
                        .providerNotRegistered,
                        "the \(id) provider is not in this \(toolName), so its options are not either"
                            + " (\(message(for: error)))", hint: hint),
                    tool: Self.self)
                exit(withError: ExitCode(1))
            }
            exit(withError: error)
        }
    }

    /// The provider a command line names (`--provider ID`, `--provider=ID`, else
    /// `NATIVEAUTH_PROVIDER`) when this build left it out, with the hint of ``omittedProviders``.
    static func omittedProvider(arguments: [String], environment: [String: String]) -> (String, String)? {
        var named = environment["NATIVEAUTH_PROVIDER"]
        for (index, argument) in arguments.enumerated() {
            if argument == "--provider", index + 1 < arguments.count {
                named = arguments[index + 1]
            } else if argument.hasPrefix("--provider=") {
                named = String(argument.dropFirst("--provider=".count))
            }
        }
        guard let id = named, let hint = omittedProviders[id] else { return nil }
        return (id, hint)
    }
}
