import ArgumentParser
import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@testable import NativeAuthCommands

/// A provider that declares twenty settings of its own: more than the sixteen option slots the
/// command line once had.
private struct ManySettingsProvider: AuthProvider {
    static let id = "many"
    static let settings: [ProviderSetting] = (1...20).map {
        ProviderSetting("setting_\($0)", help: "Setting number \($0) of the many provider.")
    }
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
}

/// A second provider sharing one key with the first, and adding one of its own.
private struct OtherProvider: AuthProvider {
    static let id = "other"
    static let settings: [ProviderSetting] = [
        ProviderSetting("setting_1", help: "The other provider's first setting."),
        ProviderSetting("other_only", help: "Only the other provider has this."),
    ]
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
}

private struct ManyTool: NativeAuthTool, ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "many-login", subcommands: standardCommands)
    static let toolName = "many-login"
    static let defaultProvider = ManySettingsProvider.id
    static let providers: [any AuthProvider.Type] = [ManySettingsProvider.self, OtherProvider.self]
}

@Suite(.testLogging) struct CommandOptionsTests {
    @Test func aProviderDeclaringTwentySettingsGetsTwentyOptionsWithTheirHelp() throws {
        let help = LoginCommand<ManyTool>.helpMessage(columns: 200)
        for number in [1, 16, 17, 20] {
            #expect(help.contains("--setting-\(number) <setting-\(number)>"), "\(help)")
            #expect(help.contains("Setting number \(number) of the many provider."))
        }
        #expect(help.contains("MANY PROVIDER:") && help.contains("OTHER PROVIDER:"))
        // The shared key is one option, in the first provider's section, with both helps.
        #expect(help.components(separatedBy: "--setting-1 <").count == 2)
        #expect(help.contains("many: Setting number 1 of the many provider. / other: The other provider's first"))

        let login = try LoginCommand<ManyTool>.parse([
            "--setting-17", "seventeen", "--setting-20", "twenty", "--other-only", "mine", "--client-id", "c",
        ])
        #expect(login.options.given["setting_17"] == ["seventeen"])
        #expect(login.options.given["setting_20"] == ["twenty"])
        #expect(login.options.given["other_only"] == ["mine"])
        let configured = try login.options.configure(environment: [:])
        #expect(try configured.provider.configuration.value(of: ManySettingsProvider.settings[16]) == "seventeen")
        #expect(try configured.provider.configuration.value(of: ManySettingsProvider.settings[19]) == "twenty")
    }

    @Test func eachCommandShowsTheGroupsItUsesAndStillTakesTheOthers() throws {
        let switchHelp = SwitchCommand<ManyTool>.helpMessage(columns: 200)
        #expect(switchHelp.contains("--issuer") && switchHelp.contains("--account") && switchHelp.contains("--store"))
        for other in ["--dpop", "--subject-token-type", "--scope", "--client-secret", "--ca-file"] {
            #expect(!switchHelp.contains(other), "switch --help lists \(other)")
        }
        #expect(LoginCommand<ManyTool>.helpMessage(columns: 200).contains("--subject-token-type"))
        // One set of options for every command of a tool: switch takes --scope and ignores it.
        let parsed = try SwitchCommand<ManyTool>.parse(["alice", "--scope", "openid", "--issuer", "https://id.test"])
        #expect(parsed.options.given["scope"] == ["openid"])
    }

    @Test func settingsAreLayeredFlagsOverEnvironmentOverConfigFileOverProfile() throws {
        let home = try TemporaryDirectory()
        let profiles = home.path + "/nativeauth/config.json"
        try FileManager.default.createDirectory(
            atPath: home.path + "/nativeauth", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try Data(
            #"{"profiles": {"p": {"issuer": "https://profile.test", "client_id": "from-profile", "scope": "a b", "setting_2": "profile"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: profiles))
        let config = home.path + "/config.json"
        try Data(#"{"client_id": "from-file", "scope": ["c", "d"], "setting_3": "file"}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let login = try LoginCommand<ManyTool>.parse(["--config", config, "--profile", "p", "--setting-1", "flag"])
        let environment = [
            "XDG_CONFIG_HOME": home.path, "NATIVEAUTH_CLIENT_ID": "from-environment", "NATIVEAUTH_SETTING_2": "env",
            "NATIVEAUTH_SETTING_3": "",
        ]
        let configuration = try login.options.configure(environment: environment).provider.configuration
        #expect(configuration.issuer?.absoluteString == "https://profile.test")
        #expect(configuration.clientID == "from-environment")
        #expect(configuration.scopes == ["c", "d"])
        #expect(try configuration.value(of: ManySettingsProvider.settings[0]) == "flag")
        #expect(try configuration.value(of: ManySettingsProvider.settings[1]) == "env")
        // An empty variable counts as unset: the file's value stands.
        #expect(try configuration.value(of: ManySettingsProvider.settings[2]) == "file")
    }

    @Test func aValueOfTheWrongKindInAFileNamesTheField() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path + "/config.json"
        try Data(#"{"client_id": "c", "register_client": "maybe"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let login = try LoginCommand<ManyTool>.parse(["--config", config])
        let error = #expect(throws: AuthError.self) { try login.options.configure(environment: [:]) }
        #expect(error?.field == "register_client")
        #expect(error?.message.contains("should be true or false") == true, "\(String(describing: error))")
    }

    @Test func everyFlagOfACommandLineIsCarriedIntoAnotherProgramsCommandLine() throws {
        let kubeconfig = try KubeconfigCommand<ManyTool>.parse([
            "--issuer", "https://id.test", "--client-id", "c", "--resource", "https://api.test/a",
            "--resource", "https://api.test/b", "--register-client", "--setting-20", "x", "--ca-file", "ca.pem",
        ])
        let arguments = try kubeconfig.options.carriedArguments(kubeconfig.options.configure(environment: [:]))
        #expect(arguments.contains("--setting-20"))
        #expect(arguments.filter { $0 == "--resource" }.count == 2)
        #expect(arguments.contains("--register-client"))
        #expect(arguments.contains("--ignore-directory-file"), "a cloned repository's .nativeauth.json chooses nothing")
        let caFile = try #require(arguments.firstIndex(of: "--ca-file")).advanced(by: 1)
        #expect(arguments[caFile].hasPrefix("/") && arguments[caFile].hasSuffix("/ca.pem"))
    }

    @Test func aCommandLineNamingAProviderThisBuildLeftOutSaysWhich() {
        struct Trimmed: NativeAuthTool, AsyncParsableCommand {
            static let toolName = "trimmed"
            static let defaultProvider = GenericOIDCProvider.id
            static let providers: [any AuthProvider.Type] = [GenericOIDCProvider.self]
            static var omittedProviders: [String: String] { ["github": "built without the GitHub trait"] }
        }
        let named = Trimmed.omittedProvider(arguments: ["trimmed", "login", "--provider", "github"], environment: [:])
        #expect(named?.0 == "github" && named?.1 == "built without the GitHub trait")
        #expect(
            Trimmed.omittedProvider(arguments: ["trimmed", "--provider=github"], environment: [:])?.0 == "github")
        #expect(Trimmed.omittedProvider(arguments: ["trimmed"], environment: ["NATIVEAUTH_PROVIDER": "github"]) != nil)
        #expect(Trimmed.omittedProvider(arguments: ["trimmed", "--provider", "oidc"], environment: [:]) == nil)
    }

    @Test func aHintNamesSettingsByKeyAndTheToolRendersThemAsItsOptions() {
        let error = AuthError(
            .configurationInvalid, "refused",
            hint: "check the `client_auth` and the `setting_20`; on that `port`, with `client_secret` (`not a key`)")
        #expect(error.hint(naming: { _ in nil }) == error.hint, "a name without words stays as it is")
        let rendered = ManyTool.hint(for: error)
        #expect(
            rendered
                == "check the --client-auth and the --setting-20; on that --port PORT, with --client-secret-file FILE or"
                + " NATIVEAUTH_CLIENT_SECRET (`not a key`)", "\(rendered ?? "")")
        let stepUp = AuthError(.stepUpRequired, "stronger", hint: "sign in again as it asks")
        #expect(ManyTool.hint(for: stepUp)?.contains("many-login api --step-up") == true)
    }
}
