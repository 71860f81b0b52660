public import ArgumentParser
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
///     static let defaultProvider = GenericOIDCProvider.id
///     static func makeRegistry() throws -> ProviderRegistry {
///         var registry = ProviderRegistry()
///         try registry.register(GenericOIDCProvider.self)
///         return registry
///     }
/// }
/// ```
public protocol NativeAuthTool {
    /// The tool's own options for its provider (`github-login --host`), shared by every command.
    associatedtype ProviderOptions: ProviderOptionSet = NoProviderOptions

    /// The tool's command name, used in hints ("run `oidc-login login`").
    static var toolName: String { get }
    /// The provider id used when neither `--provider` nor the configuration names one.
    static var defaultProvider: String { get }
    /// The providers this tool linked, registered.
    static func makeRegistry() throws -> ProviderRegistry
    /// Hints for provider ids this build left out, by id ("rebuild with the GitHub trait"); shown
    /// when a configuration asks for one. Default: none.
    static var omittedProviders: [String: String] { get }
}

extension NativeAuthTool {
    public static var omittedProviders: [String: String] { [:] }
}

/// A tool's provider-specific options, parsed with every command and turned into configuration
/// settings (snake_case keys, as in the `--config` file), which win over the file and environment.
///
/// ```swift
/// struct GitHubOptions: ProviderOptionSet {
///     @Option(help: "A GitHub Enterprise Server URL.") var host: String?
///     var settings: [String: String] { host.map { ["host": $0] } ?? [:] }
///     init() {}
/// }
/// ```
public protocol ProviderOptionSet: ParsableArguments {
    /// The settings given on the command line.
    var settings: [String: String] { get }
}

/// No provider-specific options.
public struct NoProviderOptions: ProviderOptionSet {
    public var settings: [String: String] { [:] }
    /// Creates the empty set.
    public init() {}
}
