import Foundation
public import NativeAuth

/// What is wrong with how the CLI at `cli` offers `settings`, declared by a provider it registers:
/// each must be an option in the commands' help (they share one set of options; `status` and
/// `login` are asked), with the declaration's help text; its environment variable must set it; and
/// an error about it must say where to set it.
///
/// - Parameters:
///   - cli: The built CLI.
///   - settings: The provider's declared settings.
///   - arguments: What the CLI needs besides the settings to build the provider (`--provider …`).
///   - required: A setting without which the provider refuses to be built, to check the hint of
///     its error.
/// - Returns: One line per problem; empty when everything derives from the declarations.
public func problemsWithDeclaredSettings(
    cli: String,
    settings: [ProviderSetting],
    arguments: [String] = [],
    required: ProviderSetting? = nil
) async throws -> [String] {
    var problems: [String] = []
    let store = try TemporaryDirectory()
    for command in ["login", "status"] {
        let help = try await run(cli, [command, "--help"]).stdout
        let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in settings {
            if !help.contains("\(setting.flag) <") { problems.append("\(command) --help lacks \(setting.flag)") }
            let words = setting.help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !flat.contains(words) { problems.append("\(command) --help lacks the help of \(setting.flag)") }
        }
    }
    // Every setting through its environment variable at once: `status` builds the provider.
    var environment = ["NATIVEAUTH_CLIENT_ID": "settings-test", "NATIVEAUTH_STORE": store.path + "/store"]
    for setting in settings { environment[setting.environmentVariable] = value(for: setting) }
    let status = try await run(cli, ["status"] + arguments, environment: environment)
    if status.status != 0 { problems.append("the environment variables did not build the provider: \(status.stderr)") }
    if let required {
        environment[required.environmentVariable] = nil
        let missing = try await run(cli, ["status"] + arguments, environment: environment)
        let hint =
            "hint: set it with \(required.flag), \(required.environmentVariable) or \"\(required.key)\" in --config FILE"
        if !missing.stderr.contains(hint) {
            problems.append("without \(required.key), no hint naming it: \(missing.stderr)")
        }
    }
    return problems
}

extension ProviderSetting {
    /// The option a command-line tool offers for the setting: `--` and the key with `-` for `_`.
    public var flag: String { "--" + key.replacingOccurrences(of: "_", with: "-") }
}

/// A value the declared setting accepts: a URL for the keys that hold one.
private func value(for setting: ProviderSetting) -> String {
    ["host", "domain", "logout_uri"].contains(setting.key) ? "https://settings-test.example" : "settings-test"
}
