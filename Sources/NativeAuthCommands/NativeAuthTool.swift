public import ArgumentParser
public import Foundation
internal import NIOConcurrencyHelpers
public import NativeAuth

/// What a command-line tool tells the ready-made commands about itself.
///
/// A sample CLI conforms its root command to this protocol and lists the commands it wants:
///
/// ```swift
/// @main struct OIDCLogin: AsyncParsableCommand, NativeAuthTool {
///     static let configuration = CommandConfiguration(
///         commandName: "oidc-login",
///         subcommands: [LoginCommand<OIDCLogin>.self, StatusCommand<OIDCLogin>.self]
///     )
///     static let toolName = "oidc-login"
///     static let defaultProvider = GenericOIDCProvider.id
///     static func makeRegistry() throws -> ProviderRegistry {
///         var registry = ProviderRegistry()
///         try registry.register(GenericOIDCProvider.self)
///         return registry
///     }
/// }
/// ```
///
/// Every command takes the standard options (`--issuer`, `--client-id`, …) and one option per
/// setting the registered providers declare (`AuthProvider.settings`: Cognito's
/// `--region`, GitHub's `--host`), with its environment variable (`NATIVEAUTH_REGION`), its key in
/// a `--config` file, and the hint of an error about it, all derived from the declaration.
public protocol NativeAuthTool {
    /// The tool's command name, used in hints ("run `oidc-login login`").
    static var toolName: String { get }
    /// The provider id used when neither `--provider` nor the configuration names one.
    static var defaultProvider: String { get }
    /// The providers this tool linked, registered.
    static func makeRegistry() throws -> ProviderRegistry
    /// Hints for provider ids this build left out, by id ("rebuild with the GitHub trait"); shown
    /// when a configuration asks for one. Default: none.
    static var omittedProviders: [String: String] { get }
    /// The directory name of the tool's profiles under `$XDG_CONFIG_HOME` (`~/.config`).
    /// Default: `nativeauth`, shared by every tool built on NativeAuth.
    static var configurationName: String { get }
    /// Where `api PATH` resolves a relative path for `provider`. Default: the provider's issuer.
    /// A tool whose provider's API lives elsewhere says so here (GitHub's `https://api.github.com`).
    static func apiBaseURL(for provider: any AuthProvider) -> URL?
    /// The git host and user name of `provider`, for `git-credential` and `setup-git`. Default:
    /// no host (`--git-host` names it) and the user name `oauth2`. GitHub's tools answer with its
    /// web host and `x-access-token`.
    static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults
}

extension NativeAuthTool {
    public static var omittedProviders: [String: String] { [:] }

    public static var configurationName: String { "nativeauth" }

    public static func apiBaseURL(for provider: any AuthProvider) -> URL? { provider.configuration.issuer }

    public static func gitCredentialDefaults(for provider: any AuthProvider) -> GitCredentialDefaults {
        GitCredentialDefaults()
    }

    /// Every ready-made command, in the order `--help` lists them: `login`, `status`, `token`, `api`,
    /// `userinfo`, `refresh`, `logout`, `switch`, `profile`, and the adapters for other programs:
    /// `kubeconfig`, `git-credential`, `setup-git`, `docker-credential`, `setup-docker`.
    public static var standardCommands: [any ParsableCommand.Type] {
        [
            LoginCommand<Self>.self, StatusCommand<Self>.self, TokenCommand<Self>.self, APICommand<Self>.self,
            UserInfoCommand<Self>.self, RefreshCommand<Self>.self, LogoutCommand<Self>.self, SwitchCommand<Self>.self,
            ProfileCommand<Self>.self, KubeconfigCommand<Self>.self, GitCredentialCommand<Self>.self,
            SetupGitCommand<Self>.self, DockerCredentialCommand<Self>.self, SetupDockerCommand<Self>.self,
        ]
    }
}

extension NativeAuthTool {
    /// The settings of the registered providers, each key once, in the order of the registry's
    /// ids; the standard ones (which have options of their own) left out. Worked out once per tool:
    /// argument-parser asks for each option's name and help every time it builds the options.
    static var providerSettings: [DeclaredSetting] {
        let tool = ObjectIdentifier(Self.self)
        if let known = declaredSettings.withLockedValue({ $0[tool] }) { return known }
        let declared = declareSettings()
        declaredSettings.withLockedValue { $0[tool] = declared }
        return declared
    }

    private static func declareSettings() -> [DeclaredSetting] {
        guard let registry = try? makeRegistry() else { return [] }
        let types = registry.providerTypes
        let standard = Set(ProviderSetting.standard.map(\.key) + ToolOptions<Self>.ownKeys)
        var declared: [DeclaredSetting] = []
        for type in types {
            for setting in type.settings where !standard.contains(setting.key) {
                // A tool with several providers says whose setting each is.
                let help = types.count > 1 ? "\(type.id): \(setting.help)" : setting.help
                if let index = declared.firstIndex(where: { $0.setting.key == setting.key }) {
                    declared[index].help += " / " + help
                } else {
                    declared.append(DeclaredSetting(setting: setting, help: help))
                }
            }
        }
        return declared
    }

    /// The hint for an error about the configuration key `field`: where it is set.
    static func hint(forField field: String) -> String? {
        if field == "device_authorization_endpoint" {
            return "set it with --device-endpoint URL (login --device), or \"device_authorization_endpoint\""
                + " in --config FILE"
        }
        let settings = ProviderSetting.standard + providerSettings.map(\.setting)
        guard let setting = settings.first(where: { $0.key == field }) else { return nil }
        return "set it with \(setting.flag), \(setting.environmentVariable) or \"\(setting.key)\" in --config FILE"
    }
}

/// The declared settings of each tool type, once worked out (``NativeAuthTool/providerSettings``).
private let declaredSettings = NIOLockedValueBox<[ObjectIdentifier: [DeclaredSetting]]>([:])

/// A provider setting as a tool offers it.
struct DeclaredSetting: Sendable {
    /// The declaration (of the first provider that declared the key).
    var setting: ProviderSetting
    /// The option's help: the declaration's, or each provider's, named, when several declared the key.
    var help: String

    /// The option's name: the flag without its dashes (`user-pool-id`).
    var optionName: String { String(setting.flag.dropFirst(2)) }
}
