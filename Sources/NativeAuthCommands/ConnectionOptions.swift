public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// The options every command shares: where to sign in, as whom, and where tokens are kept.
///
/// Each can also come from the environment (`NATIVEAUTH_ISSUER`, `NATIVEAUTH_CLIENT_ID`,
/// `NATIVEAUTH_CLIENT_SECRET`, `NATIVEAUTH_SCOPE`, `NATIVEAUTH_STORE`) or from a JSON file given
/// with `--config` (snake_case keys). Flags win over the environment, the environment over the file.
public struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: "The issuer URL of the authorization server.")
    var issuer: String?

    @Option(name: .customLong("client-id"), help: "The OAuth client id.")
    var clientID: String?

    @Option(name: .customLong("client-secret"), help: "The client secret, for confidential clients.")
    var clientSecret: String?

    @Option(name: .long, help: "The scopes to ask for, space-separated.")
    var scope: String?

    @Option(name: .customLong("client-auth"), help: "Client authentication: basic, post or none.")
    var clientAuth: String?

    @Option(name: .long, help: "The provider id (as registered by the tool).")
    var provider: String?

    @Option(name: .long, help: "A JSON configuration file (snake_case keys).")
    var config: String?

    @Option(name: .long, help: "The token store directory (default: $XDG_STATE_HOME/nativeauth).")
    var store: String?

    /// Creates empty options (argument-parser fills them in).
    public init() {}

    /// The environment variables read, by configuration key.
    static let environmentKeys: [(variable: String, key: String)] = [
        ("NATIVEAUTH_ISSUER", "issuer"),
        ("NATIVEAUTH_CLIENT_ID", "client_id"),
        ("NATIVEAUTH_CLIENT_SECRET", "client_secret"),
        ("NATIVEAUTH_SCOPE", "scope"),
        ("NATIVEAUTH_STORE", "store"),
    ]

    /// The settings from the file, then the environment, then the flags.
    func merged(environment: [String: String]) throws(AuthError) -> JSONObject {
        var object =
            try config.map { path throws(AuthError) in try ProviderConfiguration.load(contentsOf: path) }
            ?? JSONObject()
        for (variable, key) in Self.environmentKeys {
            if let value = environment[variable], !value.isEmpty { object[key] = .string(value) }
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
    /// - Parameter settings: Settings of the command itself (such as `login --device-endpoint`),
    ///   which win over everything else.
    func resolve<Tool: NativeAuthTool>(
        for tool: Tool.Type,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        settings: [String: String] = [:]
    ) throws(AuthError) -> (ProviderConfiguration, storeDirectory: String?) {
        var object = try merged(environment: environment)
        for (key, value) in settings { object[key] = .string(value) }
        let store = try? object.string("store")
        object["store"] = nil
        if object["provider"] == nil { object["provider"] = .string(Tool.defaultProvider) }
        do {
            return (try ProviderConfiguration(json: object), store ?? nil)
        } catch {
            var error = error
            if error.hint == nil, let flag = Self.flagHint(for: error.message) { error.hint = flag }
            throw error
        }
    }

    /// Where a field can be set, for errors that name it.
    static func flagHint(for message: String) -> String? {
        let places: [(key: String, hint: String)] = [
            ("\"client_id\"", "set it with --client-id, NATIVEAUTH_CLIENT_ID or \"client_id\" in --config FILE"),
            ("\"issuer\"", "set it with --issuer, NATIVEAUTH_ISSUER or \"issuer\" in --config FILE"),
            ("\"scope\"", "set it with --scope, NATIVEAUTH_SCOPE or \"scope\" in --config FILE"),
            ("\"client_auth\"", "use --client-auth basic, post or none"),
        ]
        return places.first { message.contains($0.key) }?.hint
    }
}

/// What every command of a tool parses: the shared connection options and the tool's own
/// provider options, and the authenticator they describe.
struct ToolOptions<Tool: NativeAuthTool>: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var provider: Tool.ProviderOptions

    /// The authenticator for these options; `settings` (the command's own, such as
    /// `login --device-endpoint`) win over everything else.
    func makeAuthenticator(settings: [String: String] = [:]) throws -> Authenticator {
        let merged = provider.settings.merging(settings) { $1 }
        let (configuration, storeDirectory) = try connection.resolve(for: Tool.self, settings: merged)
        let registry = try Tool.makeRegistry()
        let provider: any AuthProvider
        do {
            provider = try registry.makeProvider(configuration)
        } catch let error as AuthError where error.code == .providerNotRegistered {
            var error = error
            if let hint = Tool.omittedProviders[configuration.provider] { error.hint = hint }
            throw error
        }
        let logger = CommandSupport.makeLogger(label: Tool.toolName)
        return Authenticator(
            provider: provider,
            store: FileTokenStore(directory: storeDirectory),
            transport: URLSessionTransport(logger: logger),
            logger: logger
        )
    }
}
