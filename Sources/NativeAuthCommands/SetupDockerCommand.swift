public import ArgumentParser
internal import Foundation
internal import LenientJSON
@_spi(Provider) internal import NativeAuth

/// `setup-docker --registry HOST`: names this tool as Docker's credential helper for one registry.
///
/// Writes an executable `docker-credential-<tool>-<host>` into `--bin-dir` (default
/// `~/.local/bin`) that runs `<tool> docker-credential --registry HOST` with the options of this
/// command line, and sets `credHelpers[HOST]` in Docker's `config.json` (`$DOCKER_CONFIG`, else
/// `~/.docker`), keeping everything else in it. Running it again changes nothing and says so.
public struct SetupDockerCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "setup-docker", abstract: "Configure Docker to use this tool's tokens for a registry.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>
    @OptionGroup var docker: DockerOptions

    @Option(
        name: .customLong("bin-dir"),
        help: ArgumentHelp("Where to write the helper (a directory on PATH; default ~/.local/bin).", valueName: "dir"))
    var binDirectory: String?

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let environment = ProcessInfo.processInfo.environment
            let registry = try DockerCredentialProtocol.registry(docker.registry)
            // A configuration that works, before anything is written.
            var arguments = try options.carriedArguments(options.configure(environment: environment))
            arguments += ["--registry", registry]
            if let username = docker.dockerUsername { arguments += ["--docker-username", username] }
            let home = environment["HOME"] ?? NSHomeDirectory()
            let name = "\(Tool.toolName)-\(registry.replacingOccurrences(of: ":", with: "-"))"
            let binDirectory = binDirectory.map { ToolInvocation.absolute($0) } ?? home + "/.local/bin"
            let helperPath = "\(binDirectory)/docker-credential-\(name)"
            let script =
                "#!/bin/sh\n# Written by `\(Tool.toolName) setup-docker`: Docker's credential helper for \(registry).\n"
                + "exec "
                + ToolInvocation.shellCommand(["docker-credential"] + arguments) + " \"$@\"\n"
            let configDirectory = environment["DOCKER_CONFIG"].map { ToolInvocation.absolute($0) } ?? home + "/.docker"
            let configPath = configDirectory + "/config.json"
            var changed: [String] = []
            if (try? String(contentsOfFile: helperPath, encoding: .utf8)) != script {
                try FileManager.default.createDirectory(atPath: binDirectory, withIntermediateDirectories: true)
                try Data(script.utf8).write(to: URL(fileURLWithPath: helperPath), options: .atomic)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: helperPath)
                changed.append("wrote \(helperPath)")
            }
            var config = JSONObject()
            if let data = FileManager.default.contents(atPath: configPath) {
                guard let object = try? JSONValue.parse(data).objectValue else {
                    throw AuthError(
                        .configurationInvalid, "\(configPath) is not a JSON object; it was left as it is",
                        hint: "fix or move it, then run this again")
                }
                config = object
            }
            var helpers = config["credHelpers"]?.objectValue ?? JSONObject()
            if helpers[registry]?.stringValue != name {
                helpers[registry] = .string(name)
                config["credHelpers"] = .object(helpers)
                try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
                // Docker keeps passwords in it (`auths`): written readable by its owner only.
                try SecretFile.writePrivately(
                    Array((try JSONValue.object(config).encodedString() + "\n").utf8), to: configPath,
                    what: "Docker's configuration")
                changed.append("set credHelpers[\"\(registry)\"] = \"\(name)\" in \(configPath)")
            }
            if changed.isEmpty {
                CommandSupport.printLine("Docker already asks \(Tool.toolName) for \(registry); nothing changed")
            } else {
                for line in changed { CommandSupport.printLine(line.prefix(1).uppercased() + line.dropFirst()) }
            }
            let path = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
            if !path.contains(binDirectory) {
                CommandSupport.notice("\(binDirectory) is not on PATH; Docker finds the helper only there")
            }
            options.noteUncarriedVariables(environment: environment, what: "the helper script")
        }
    }
}
