public import ArgumentParser
internal import Foundation
internal import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `setup-git`: makes git ask this tool for the credentials of one host.
///
/// Sets, in the user's git configuration (`git config --global`), `credential.<URL>.helper` to
/// an empty value (so that helpers configured for every host are not asked first for this one),
/// then to `!'/path/to/tool' git-credential` with the options of this command line. Running it
/// again changes nothing and says so; what it replaced is printed.
public struct SetupGitCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "setup-git", abstract: "Configure git to use this tool's tokens for a host.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>
    @OptionGroup var git: GitOptions

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let environment = ProcessInfo.processInfo.environment
            let configured = try options.configure(environment: environment)
            let (target, _) = try git.resolve(Tool.self, provider: configured.provider)
            var arguments = try options.carriedArguments(configured)
            if let host = git.gitHost { arguments += ["--git-host", host] }
            if let username = git.gitUsername { arguments += ["--git-username", username] }
            let helper = "!" + ToolInvocation.shellCommand(["git-credential"] + arguments)
            let key = "credential.\(target.url).helper"
            let existing = try await GitConfig.values(of: key, environment: environment)
            if existing == ["", helper] {
                CommandSupport.printLine("git already asks \(Tool.toolName) for \(target.url); nothing changed")
                return
            }
            try await GitConfig.replace(key, with: ["", helper], environment: environment)
            CommandSupport.printLine(
                "Set \(key) in your git configuration: git asks \(Tool.toolName) for \(target.url)")
            let replaced = existing.filter { !$0.isEmpty }
            if !replaced.isEmpty {
                CommandSupport.printLine("It replaced: \(replaced.joined(separator: "; "))")
            }
            options.noteUncarriedVariables(environment: environment, what: "git's helper line")
        }
    }
}
