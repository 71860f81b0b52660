internal import ArgumentParser
internal import Foundation
internal import NativeAuth

// Options made from setting declarations, any number of them: argument-parser finds a type's
// options by reflecting it (`Mirror(reflecting:)`), and a type that is `CustomReflectable` says
// itself what its children are. So a section's options are whatever its declarations are, each a
// real `Option` or `Flag` with the declaration's help, and a tool with more providers has more
// sections: no fixed number of slots.

/// A titled section of options, one per declaration in ``settings``.
protocol OptionSection {
    /// The section's title in help (argument-parser prints it in capitals).
    static var title: String { get }
    /// The settings it offers, in order.
    static var settings: [ProviderSetting] { get }
}

extension OptionSection {
    /// The section as an option group, for a parent's mirror; a hidden one is left out of help
    /// (`--help-hidden` shows it) and still parsed.
    static func optionGroup(hidden: Bool) -> Any {
        OptionGroup<SettingOptions<Self>>(title: title, visibility: hidden ? .hidden : .default)
    }

    /// The values the command line gave the section's settings, by key.
    static func decode(
        _ container: KeyedDecodingContainer<SettingCodingKey>, key: SettingCodingKey
    ) throws -> [String: [String]] {
        try container.decode(OptionGroup<SettingOptions<Self>>.self, forKey: key).wrappedValue.given
    }
}

/// A coding key made at run time: a setting's key, or a section's.
struct SettingCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The options of one section: `--user-pool-id VALUE` for `user_pool_id`, `--resource URL` repeated
/// for a list, `--register-client` for a flag.
struct SettingOptions<Section: OptionSection>: ParsableArguments, CustomReflectable {
    /// The values given, by key: one for a value, each for a list, `"true"` for a flag that is set.
    var given: [String: [String]] = [:]

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SettingCodingKey.self)
        for setting in Section.settings {
            let key = SettingCodingKey(setting.key)
            switch setting.form {
            case .value:
                if let value = try container.decode(Option<String?>.self, forKey: key).wrappedValue {
                    given[setting.key] = [value]
                }
            case .list:
                let values = try container.decode(Option<[String]>.self, forKey: key).wrappedValue
                if !values.isEmpty { given[setting.key] = values }
            case .flag:
                if try container.decode(Flag<Bool>.self, forKey: key).wrappedValue { given[setting.key] = ["true"] }
            }
        }
    }

    var customMirror: Mirror {
        Mirror(self, children: Section.settings.map { ("_" + $0.key, Self.option(for: $0)) })
    }

    /// The option of `setting`, named and helped after its declaration.
    private static func option(for setting: ProviderSetting) -> Any {
        let name = NameSpecification.customLong(setting.optionName)
        let valueName = setting.valueName ?? setting.optionName
        switch setting.form {
        case .value:
            return Option<String?>(name: name, help: ArgumentHelp(setting.help, valueName: valueName))
        case .list:
            return Option<[String]>(
                wrappedValue: [], name: name, help: ArgumentHelp(setting.help, valueName: valueName))
        case .flag:
            return Flag<Bool>(wrappedValue: false, name: name, help: ArgumentHelp(setting.help))
        }
    }
}

extension ProviderSetting {
    /// The command-line option, without its dashes: the key with `-` for `_` (`user-pool-id`).
    var optionName: String {
        String(decoding: key.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
    }

    /// The command-line option: `--user-pool-id`.
    var flag: String { "--" + optionName }
}

/// The sections of the standard groups of settings.
enum ServerSection: OptionSection {
    static let title = "Provider and client"
    static let settings = CommandSettings.declared(in: .server)
}

enum ClientAuthenticationSection: OptionSection {
    static let title = "Client authentication"
    static let settings = CommandSettings.declared(in: .clientAuthentication)
}

enum RequestSection: OptionSection {
    static let title = "What the tokens are for"
    static let settings = CommandSettings.declared(in: .request)
}

enum WorkloadSection: OptionSection {
    static let title = "A workload's own token"
    static let settings = CommandSettings.declared(in: .workload)
}

enum StorageSection: OptionSection {
    static let title = "Accounts and token storage"
    static let settings = CommandSettings.declared(in: .storage)
}

enum TransportSection: OptionSection {
    static let title = "HTTP"
    static let settings = CommandSettings.declared(in: .transport)
}

/// The section of one provider's own settings in `Tool`: those no provider before it in the
/// registry declared already (a key several declare is one option, in the first one's section,
/// its help saying whose it is).
enum ProviderSection<Tool: NativeAuthTool, Provider: AuthProvider>: OptionSection {
    static var title: String { "\(Provider.id) provider" }

    static var settings: [ProviderSetting] {
        let providers = Tool.providers
        guard let index = providers.firstIndex(where: { ObjectIdentifier($0) == ObjectIdentifier(Provider.self) })
        else { return [] }
        let before = providers[..<index].flatMap { $0.settings.map(\.key) }
        let after = providers[(index + 1)...]
        return Provider.settings.compactMap { setting in
            guard !CommandSettings.keys.contains(setting.key), !before.contains(setting.key) else { return nil }
            let others = after.compactMap { type in
                type.settings.first { $0.key == setting.key }.map { "\(type.id): \($0.help)" }
            }
            guard !others.isEmpty else { return setting }
            return setting.withHelp((["\(Provider.id): \(setting.help)"] + others).joined(separator: " / "))
        }
    }
}

extension NativeAuthTool {
    /// The settings the providers declare, each key once, in the order of ``providers``, the
    /// standard keys and the command line's own left out (they have sections of their own); a key
    /// several providers declare has help naming each.
    static var providerSettings: [ProviderSetting] { providerSections.flatMap { $0.settings } }

    /// Every setting this tool knows: the standard ones, the command line's own, its providers'.
    static var allSettings: [ProviderSetting] { CommandSettings.all + providerSettings }

    /// The option sections of the providers, in the registry's order; a provider whose settings
    /// all have options already has none.
    static var providerSections: [any OptionSection.Type] {
        func section<Provider: AuthProvider>(_ type: Provider.Type) -> any OptionSection.Type {
            ProviderSection<Self, Provider>.self
        }
        return providers.map { section($0) }.filter { !$0.settings.isEmpty }
    }
}
