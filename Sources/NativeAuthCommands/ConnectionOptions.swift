public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// The options every command shares: where to sign in, as whom, and where tokens are kept.
///
/// Each can also come from the environment (`NATIVEAUTH_ISSUER`, `NATIVEAUTH_CLIENT_ID`,
/// `NATIVEAUTH_CLIENT_SECRET`, `NATIVEAUTH_SCOPE`, `NATIVEAUTH_CLIENT_AUTH`, `NATIVEAUTH_STORE`,
/// and one per provider setting) or from a JSON file given with `--config` (snake_case keys). Flags
/// win over the environment, the environment over the file.
public struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(ProviderSetting.issuer.help))
    var issuer: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp(ProviderSetting.clientID.help))
    var clientID: String?

    @Option(name: .customLong("client-secret"), help: ArgumentHelp(ProviderSetting.clientSecret.help))
    var clientSecret: String?

    @Option(name: .long, help: ArgumentHelp(ProviderSetting.scope.help))
    var scope: String?

    @Option(name: .customLong("client-auth"), help: ArgumentHelp(ProviderSetting.clientAuthentication.help))
    var clientAuth: String?

    @Option(name: .long, help: "The provider id (as registered by the tool).")
    var provider: String?

    @Option(name: .long, help: "A JSON configuration file (snake_case keys).")
    var config: String?

    @Option(name: .long, help: "The token store directory (default: $XDG_STATE_HOME/nativeauth).")
    var store: String?

    /// Creates empty options (argument-parser fills them in).
    public init() {}

    /// The keys of the options that are the command line's own, not a provider's setting.
    static let ownKeys = ["provider", "config", "store"]

    /// The settings from the file, then the environment, then the flags.
    ///
    /// - Parameter declared: The settings the tool's providers declare, read from the environment too.
    func merged(environment: [String: String], declared: [ProviderSetting] = []) throws(AuthError) -> JSONObject {
        var object =
            try config.map { path throws(AuthError) in try ProviderConfiguration.load(contentsOf: path) }
            ?? JSONObject()
        for setting in ProviderSetting.standard + declared + [ProviderSetting("store", help: "")] {
            if let value = environment[setting.environmentVariable], !value.isEmpty {
                object[setting.key] = .string(value)
            }
        }
        let flags: [(String, String?)] = [
            ("issuer", issuer), ("client_id", clientID), ("client_secret", clientSecret), ("scope", scope),
            ("client_auth", clientAuth), ("provider", provider), ("store", store),
        ]
        for (key, value) in flags {
            if let value { object[key] = .string(value) }
        }
        return object
    }

    /// The provider configuration and the store directory.
    ///
    /// - Parameter settings: Settings of the command itself (such as `login --device-endpoint`) and
    ///   the provider options, which win over everything else.
    func resolve<Tool: NativeAuthTool>(
        for tool: Tool.Type,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        settings: [String: String] = [:]
    ) throws(AuthError) -> (ProviderConfiguration, storeDirectory: String?) {
        var object = try merged(environment: environment, declared: Tool.providerSettings.map(\.setting))
        for (key, value) in settings { object[key] = .string(value) }
        let store = try? object.string("store")
        object["store"] = nil
        if object["provider"] == nil { object["provider"] = .string(Tool.defaultProvider) }
        return (try ProviderConfiguration(json: object), store ?? nil)
    }
}
