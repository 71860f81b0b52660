internal import ArgumentParser
internal import NativeAuth

/// What every command of a tool parses: the shared connection options, one option per setting its
/// providers declare, and the authenticator they describe.
struct ToolOptions<Tool: NativeAuthTool>: ParsableArguments {
    typealias Slots = ProviderSettingSlots<Tool>

    @OptionGroup var connection: ConnectionOptions

    // One option per declared provider setting (see ProviderSettingSlots). They sit here rather than
    // in an option group of their own: argument-parser's debug-build checks go through every option
    // once per level of nesting, and sample CLIs start many times in the tests.
    @Option(name: Slots.name(0), help: Slots.help(0)) var slot0: String?
    @Option(name: Slots.name(1), help: Slots.help(1)) var slot1: String?
    @Option(name: Slots.name(2), help: Slots.help(2)) var slot2: String?
    @Option(name: Slots.name(3), help: Slots.help(3)) var slot3: String?
    @Option(name: Slots.name(4), help: Slots.help(4)) var slot4: String?
    @Option(name: Slots.name(5), help: Slots.help(5)) var slot5: String?
    @Option(name: Slots.name(6), help: Slots.help(6)) var slot6: String?
    @Option(name: Slots.name(7), help: Slots.help(7)) var slot7: String?
    @Option(name: Slots.name(8), help: Slots.help(8)) var slot8: String?
    @Option(name: Slots.name(9), help: Slots.help(9)) var slot9: String?
    @Option(name: Slots.name(10), help: Slots.help(10)) var slot10: String?
    @Option(name: Slots.name(11), help: Slots.help(11)) var slot11: String?
    @Option(name: Slots.name(12), help: Slots.help(12)) var slot12: String?
    @Option(name: Slots.name(13), help: Slots.help(13)) var slot13: String?
    @Option(name: Slots.name(14), help: Slots.help(14)) var slot14: String?
    @Option(name: Slots.name(15), help: Slots.help(15)) var slot15: String?

    init() {}

    private var slots: [String?] {
        [
            slot0, slot1, slot2, slot3, slot4, slot5, slot6, slot7, slot8, slot9, slot10, slot11, slot12, slot13,
            slot14, slot15,
        ]
    }

    func validate() throws {
        try Slots.checkUnused(slots)
    }

    /// The authenticator for these options; `settings` (the command's own, such as
    /// `login --device-endpoint`) win over everything else.
    func makeAuthenticator(settings: [String: String] = [:]) throws -> Authenticator {
        let merged = Slots.settings(slots).merging(settings) { $1 }
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

/// The options of the settings a tool's providers declare (`AuthProvider.settings`):
/// `--user-pool-id VALUE` for `user_pool_id`, with the declaration's help.
///
/// argument-parser finds options by reflecting stored properties, so a type cannot have as many
/// options as a list has entries. ``ToolOptions`` has ``count`` slots instead, each named at run
/// time after the declaration at its index; the slots past the last declaration are hidden from
/// help and completion, and a value given to one is refused.
enum ProviderSettingSlots<Tool: NativeAuthTool> {
    /// How many settings a tool's providers may declare between them.
    static var count: Int { 16 }

    private static var declared: [DeclaredSetting] {
        let declared = Tool.providerSettings
        precondition(
            declared.count <= count,
            "\(Tool.toolName)'s providers declare \(declared.count) settings; NativeAuthCommands offers \(count)"
        )
        return declared
    }

    private static func unusedName(_ slot: Int) -> String { "nativeauth-unused-setting-\(slot)" }

    static func name(_ slot: Int) -> NameSpecification {
        let declared = declared
        guard slot < declared.count else { return .customLong(unusedName(slot)) }
        return .customLong(String(declared[slot].setting.flag.dropFirst(2)))
    }

    static func help(_ slot: Int) -> ArgumentHelp {
        let declared = declared
        guard slot < declared.count else { return .private }
        return ArgumentHelp(declared[slot].help, valueName: String(declared[slot].setting.flag.dropFirst(2)))
    }

    /// The settings given on the command line, by configuration key.
    static func settings(_ slots: [String?]) -> [String: String] {
        var settings: [String: String] = [:]
        for (declared, value) in zip(declared, slots) {
            if let value { settings[declared.setting.key] = value }
        }
        return settings
    }

    /// Refuses a value given to a slot that no declaration names.
    static func checkUnused(_ slots: [String?]) throws {
        for (slot, value) in slots.enumerated() where slot >= declared.count && value != nil {
            throw ValidationError("Unknown option '--\(unusedName(slot))'")
        }
    }
}
