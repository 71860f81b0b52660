/// Maps provider ids to provider types: an application registers the provider modules it linked,
/// then builds providers from configurations by their `"provider"` id.
///
/// ```swift
/// var registry = ProviderRegistry()
/// try registry.register(GenericOIDCProvider.self)
/// try registry.register(GitHubProvider.self)
/// let provider = try registry.makeProvider(configuration)   // configuration.provider == "github"
/// ```
///
/// A registry is a value: tests and programs that need different sets make their own.
public struct ProviderRegistry: Sendable {
    private var types: [String: any AuthProvider.Type] = [:]

    /// Creates an empty registry.
    public init() {}

    /// The registered ids, sorted.
    public var ids: [String] { types.keys.sorted() }

    /// The registered provider types, sorted by id.
    public var providerTypes: [any AuthProvider.Type] { ids.compactMap { types[$0] } }

    /// Registers a provider type under its ``AuthProvider/id``.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when the id is taken.
    public mutating func register(_ type: any AuthProvider.Type) throws(AuthError) {
        let id = type.id
        if let existing = types[id] {
            throw AuthError(
                .configurationInvalid,
                "the provider id \"\(id)\" is already registered (by \(existing)); each id can be registered once"
            )
        }
        types[id] = type
    }

    /// The provider type registered under `id`.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/providerNotRegistered``) listing the registered ids.
    public func type(for id: String) throws(AuthError) -> any AuthProvider.Type {
        guard let type = types[id] else {
            let known = ids.isEmpty ? "none" : ids.joined(separator: ", ")
            throw AuthError(
                .providerNotRegistered,
                "no provider \"\(id)\" is registered; registered: \(known)",
                hint: "use one of the registered ids, or link and register the provider's module"
            )
        }
        return type
    }

    /// Builds the provider named by `configuration.provider`.
    public func makeProvider(_ configuration: ProviderConfiguration) throws -> any AuthProvider {
        try type(for: configuration.provider).init(configuration: configuration)
    }
}
