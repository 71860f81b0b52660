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
    /// The tool's command name, used in hints ("run `oidc-login login`").
    static var toolName: String { get }
    /// The provider id used when neither `--provider` nor the configuration names one.
    static var defaultProvider: String { get }
    /// The providers this tool linked, registered.
    static func makeRegistry() throws -> ProviderRegistry
}
