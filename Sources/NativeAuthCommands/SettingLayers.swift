internal import Configuration
internal import LenientJSON
internal import NativeAuth

/// The layers a command's settings are read from, the first that has a key winning: swift-configuration's
/// `ConfigReader` over one provider per layer. Every value is text, as the declarations parse it
/// (``ProviderSetting/text(of:)`` turns a file's JSON into it).
struct SettingLayers {
    /// The settings the tool knows: what a file's values are checked against.
    let declared: [ProviderSetting]
    private var providers: [any ConfigProvider] = []
    /// The name of each of ``providers``, in the same order: what an error says gave a value.
    private var names: [String] = []
    private let defaults: InMemoryProvider

    /// Layers with nothing in them yet but `defaults`, which every other layer wins over.
    init(declared: [ProviderSetting], defaults: [String: String]) {
        self.declared = declared
        self.defaults = Self.provider("the defaults", values: defaults, declared: declared)
    }

    /// Adds the layer of a command's own settings, below those added before: a cleared key is an
    /// empty text there, which every reader takes for no value (``read(_:)``,
    /// `ProviderConfiguration(reading:settings:)`), so that no layer below gives it one.
    mutating func add(_ name: String, overrides: SettingOverrides) {
        add(
            name,
            values: overrides.changes.mapValues { change in
                switch change {
                case .set(let text): return text
                case .clear: return ""
                }
            })
    }

    /// Adds a layer of values by key, below those added before.
    mutating func add(_ name: String, values: [String: String]) {
        guard !values.isEmpty else { return }
        providers.append(Self.provider(name, values: values, declared: declared))
        names.append(name)
    }

    /// Adds a layer of a JSON object's members (a `--config` file, a profile): a declared key's
    /// value must be of the kind its declaration reads; other keys are kept when they are text.
    ///
    /// - Throws: `AuthError` naming a declared key whose value is of another kind.
    mutating func add(_ name: String, object: JSONObject) throws(AuthError) {
        var values: [String: String] = [:]
        for member in object {
            let (key, value) = (member.key, member.value)
            if let setting = declared.first(where: { $0.key == key }) {
                values[key] = try setting.text(of: value)
            } else if case .string(let text) = value {
                values[key] = text
            }
        }
        add(name, values: values)
    }

    /// Adds the layer of the environment: `NATIVEAUTH_` and a key in capitals
    /// (``ProviderSetting/environmentVariable``); empty variables count as unset.
    mutating func addEnvironment(_ environment: [String: String]) {
        let variables = environment.filter { $0.key.hasPrefix("NATIVEAUTH_") && !$0.value.isEmpty }
        guard !variables.isEmpty else { return }
        let secrets = Set(declared.filter(\.isSecret).map(\.environmentVariable))
        providers.append(
            EnvironmentVariablesProvider(environmentVariables: variables, secretsSpecifier: .specific(secrets))
                .prefixKeys(with: ConfigKey(["nativeauth"])))
        names.append("the environment")
    }

    /// The layer that gives `key` its value (`the command line`, `the environment
    /// (NATIVEAUTH_ISSUER)`, a configuration file's path, `the profile work`); `nil` when none does.
    func source(of key: String) -> String? {
        for (name, provider) in zip(names, providers) {
            guard let value = try? provider.value(forKey: AbsoluteConfigKey([key]), type: .string).value,
                case .string(let text) = value.content, !text.isEmpty
            else { continue }
            return name == "the environment" ? "NATIVEAUTH_\(key.uppercased()) in the environment" : name
        }
        return nil
    }

    /// `error` naming the layer that gave the value of the setting it names (its `field`).
    func naming(_ error: AuthError) -> AuthError {
        guard let key = error.field, let source = source(of: key) else { return error }
        var named = error
        named.message += " (given by \(source))"
        return named
    }

    /// A reader of every layer, in order.
    var reader: ConfigReader { ConfigReader(providers: providers + [defaults]) }

    /// The typed value of `setting`; `nil` when no layer has it or it is empty.
    ///
    /// - Throws: `AuthError` for a value its declaration refuses.
    func read<Value>(_ setting: Setting<Value>) throws(AuthError) -> Value? {
        guard let text = reader.string(forKey: ConfigKey([setting.key]), isSecret: setting.declaration.isSecret),
            !text.isEmpty
        else { return nil }
        return try setting.parse(text)
    }

    private static func provider(_ name: String, values: [String: String], declared: [ProviderSetting])
        -> InMemoryProvider
    {
        let secrets = Set(declared.filter(\.isSecret).map(\.key))
        var entries: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in values {
            entries[AbsoluteConfigKey([key])] = ConfigValue(.string(value), isSecret: secrets.contains(key))
        }
        return InMemoryProvider(name: name, values: entries)
    }
}
