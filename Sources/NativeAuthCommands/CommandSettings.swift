public import NativeAuth
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthKeyring

// The settings of the command line itself, declared as the core declares its own: each is an
// option of the commands that take its group, an environment variable and a key of a
// configuration file or profile, from this one declaration.

extension Setting where Value == String {
    /// `config`: a JSON configuration file (read before the environment and the flags).
    static let config = Setting(
        "config", help: "A JSON configuration file (snake_case keys).", valueName: "file", group: .server,
        isPath: true, parse: .text)
    /// `profile`: a named profile of settings.
    static let profile = Setting(
        "profile",
        help: "A named profile of settings (see `profile`); also NATIVEAUTH_PROFILE or a .nativeauth.json here.",
        valueName: "name", group: .server, parse: .text)
    /// `store`: the token file directory.
    static let store = Setting(
        "store",
        help: "The token file directory (default: $XDG_STATE_HOME/nativeauth); given, tokens are kept in files there.",
        valueName: "dir", group: .storage, isPath: true, parse: .text)
    /// `client_secret_file`: a file holding the client secret, or `-` for standard input.
    static let clientSecretFile = Setting(
        "client_secret_file", help: "A file holding the client secret (only you may read it), or - for standard input.",
        valueName: "file", group: .clientAuthentication, isPath: true, parse: .text)
}

extension Setting where Value == String {
    /// `git_host`: the host git pushes to, for the git credential helper (what its errors name).
    static let gitHost = Setting(
        "git_host", help: "The host git sends the token to.", valueName: "host", group: .storage, parse: .text)
    /// `git_username`: the user name git sends with the token.
    static let gitUsername = Setting(
        "git_username", help: "The user name git sends with the token.", valueName: "name", group: .storage,
        parse: .text)
    /// `aws_profile`: the AWS CLI profile the credential process is written for.
    static let awsProfile = Setting(
        "aws_profile", help: "The AWS CLI profile to write.", valueName: "name", group: .storage, parse: .text)
}

extension Setting where Value == Bool {
    /// `ignore_directory_file`: no `.nativeauth.json` chooses the account or the profile.
    static let ignoreDirectoryFile = Setting(
        "ignore_directory_file",
        help: "Ignore any .nativeauth.json here or above: the helpers setup-git, setup-docker and kubeconfig write"
            + " carry it, so that a cloned repository does not choose which account they use.",
        group: .storage, parse: .flag)
}

extension Setting where Value == TokenStorage.Choice {
    /// `token_storage`: where tokens are kept.
    static let tokenStorage = Setting(
        "token_storage",
        help: "Where tokens are kept: auto (the OS keyring when one answers, else files), keyring, file or none"
            + " (memory only).",
        valueName: "auto|keyring|file|none", group: .storage, parse: .named("token storage"))
}

/// The settings a command line knows besides each provider's own.
enum CommandSettings {
    /// The command line's own, in the order of their sections.
    static let own: [ProviderSetting] = [
        Setting.config.declaration, Setting.profile.declaration, Setting.clientSecretFile.declaration,
        Setting.account.declaration, Setting.ignoreDirectoryFile.declaration, Setting.store.declaration,
        Setting.tokenStorage.declaration,
        Setting.caFile.declaration, Setting.clientCertificate.declaration, Setting.clientKey.declaration,
        Setting.httpTransport.declaration,
    ]

    /// The standard settings and the command line's own.
    static let all: [ProviderSetting] = ProviderSetting.standard + own

    /// Their keys.
    static let keys: Set<String> = Set(all.map(\.key))

    /// Those of `group`, in order.
    static func declared(in group: SettingGroup) -> [ProviderSetting] { all.filter { $0.group == group } }
}

/// Which groups of settings a command takes as options (a command shows only what it uses).
public protocol SettingUse: SendableMetatype {
    /// The groups, in the order the command's help lists them; the providers' own settings come
    /// after them when ``providerSettings`` is `true`.
    static var groups: [SettingGroup] { get }
    /// Whether the command takes the providers' own settings (everything that builds the provider
    /// does).
    static var providerSettings: Bool { get }
}

extension SettingUse {
    public static var providerSettings: Bool { true }
}

/// Every group: commands that sign in, send, or write what another program runs.
public enum EverySetting: SettingUse {
    public static let groups: [SettingGroup] = [
        .server, .clientAuthentication, .request, .workload, .storage, .transport,
    ]
}

/// Which server, client and account, without anything a request needs: `status`, `switch`.
public enum AccountSettings: SettingUse {
    public static let groups: [SettingGroup] = [.server, .storage]
}

/// What a sign-out sends with: the server, the client's authentication, the account, HTTP.
public enum SignOutSettings: SettingUse {
    public static let groups: [SettingGroup] = [.server, .clientAuthentication, .storage, .transport]
}
