public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// `profile add|list|show|remove`: named sets of settings, so that `--profile NAME` replaces the
/// long flags. Kept in `$XDG_CONFIG_HOME/nativeauth/config.json`, 0600; secrets are never printed.
public struct ProfileCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "profile", abstract: "Add, list, show and remove named profiles of settings.",
            subcommands: [Add.self, List.self, Show.self, Remove.self])
    }

    /// Creates the command.
    public init() {}

    static var path: String {
        Profiles.path(configurationName: Tool.configurationName, environment: ProcessInfo.processInfo.environment)
    }

    /// `profile add NAME --issuer … --client-id …`: the settings given as flags, under `NAME`.
    public struct Add: AsyncParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "add", abstract: "Keep the settings given as flags under a name.",
                discussion: CommandSupport.exitStatusHelp)
        }

        @OptionGroup var options: ToolOptions<Tool>

        @Argument(help: "The profile's name.")
        var name: String

        @Flag(name: .long, help: "Replace a profile of that name.")
        var replace = false

        /// Creates the command (argument-parser fills in the options).
        public init() {}

        public func run() async throws {
            try await CommandSupport.run(Tool.self) {
                try Accounts.validate(name: name)
                let settings = try options.givenSettings()
                guard !settings.isEmpty else {
                    throw AuthError(
                        .configurationInvalid, "a profile needs settings",
                        hint: "give them as flags: `\(Tool.toolName) profile add \(name) --issuer URL --client-id ID`")
                }
                var profiles = try Profiles.load(path: ProfileCommand.path)
                if profiles.names.contains(name), !replace {
                    throw AuthError(
                        .configurationInvalid, "a profile named \"\(name)\" exists", hint: "add --replace to replace it"
                    )
                }
                profiles.set(name, to: settings)
                try profiles.save()
                CommandSupport.printLine("Profile \(name) saved in \(profiles.path)")
            }
        }
    }

    /// `profile list`: one line per profile.
    public struct List: AsyncParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "list", abstract: "List the profiles.")
        }

        /// Creates the command.
        public init() {}

        public func run() async throws {
            try await CommandSupport.run(Tool.self) {
                let profiles = try Profiles.load(path: ProfileCommand.path)
                if profiles.names.isEmpty { CommandSupport.printLine("No profiles in \(profiles.path).") }
                for name in profiles.names {
                    let profile = try profiles.profile(name)
                    let summary = ["provider", "issuer", "client_id"].compactMap { key in
                        (try? profile.string(key)).flatMap { $0 }.map { "\(key)=\($0)" }
                    }
                    CommandSupport.printLine(([name] + summary).joined(separator: "  "))
                }
            }
        }
    }

    /// `profile show NAME`: its settings, a client secret as `(set)`.
    public struct Show: AsyncParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "show", abstract: "Show a profile's settings (never a secret).")
        }

        @Argument(help: "The profile's name.")
        var name: String

        /// Creates the command.
        public init() {}

        public func run() async throws {
            try await CommandSupport.run(Tool.self) {
                let profile = try Profiles.load(path: ProfileCommand.path).profile(name)
                for member in profile {
                    let value =
                        member.key.contains("secret")
                        ? "(set, not shown)"
                        : member.value.lenientString ?? (try? member.value.encodedString()) ?? ""
                    CommandSupport.printLine("\(member.key): \(value)")
                }
            }
        }
    }

    /// `profile remove NAME`.
    public struct Remove: AsyncParsableCommand {
        public static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "remove", abstract: "Remove a profile (its sign-ins stay).")
        }

        @Argument(help: "The profile's name.")
        var name: String

        /// Creates the command.
        public init() {}

        public func run() async throws {
            try await CommandSupport.run(Tool.self) {
                var profiles = try Profiles.load(path: ProfileCommand.path)
                _ = try profiles.profile(name)
                profiles.set(name, to: nil)
                try profiles.save()
                CommandSupport.printLine("Profile \(name) removed")
            }
        }
    }
}
