import Foundation
import LenientJSON

// Redaction checks: a sample CLI's every command at trace level, and where a token or a secret
// shows up in what it printed.

/// One command of a sample CLI and what it printed.
public struct CommandOutput: Sendable {
    /// The command's arguments before the connection options (`["status", "--json"]`).
    public var command: [String]
    public var result: CommandResult

    public init(command: [String], result: CommandResult) {
        self.command = command
        self.result = result
    }
}

/// Every command of a sample CLI (`CLI.md`), run in order against one store.
public struct EveryCommandRun: Sendable {
    /// What each command printed, in order.
    public var outputs: [CommandOutput]
    /// Every access, refresh and ID token the store held after any of the commands.
    public var tokens: Set<String>

    /// The exit statuses in order: all 0 but the last `token`, which finds the store empty
    /// after `logout` and exits 1.
    public static let expectedStatuses: [Int32] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]

    public init(outputs: [CommandOutput], tokens: Set<String>) {
        self.outputs = outputs
        self.tokens = tokens
    }

    /// The exit statuses, in the order of ``outputs``.
    public var statuses: [Int32] { outputs.map(\.result.status) }

    /// Each place where a token the store held, or one of `secrets`, appears in what the commands
    /// printed: stdout and stderr alike. The one exception is the purpose of `token`: its stdout
    /// holds the access token once, in the place its `--format` gives it (the whole line, after
    /// `Bearer `, or as a JSON string), and no other secret.
    public func leaks(besides secrets: [String] = []) -> [String] {
        let values = tokens.union(secrets.filter { !$0.isEmpty })
        var found: [String] = []
        for output in outputs {
            let name = output.command.joined(separator: " ")
            let stdout = output.result.stdout
            let shown = values.filter { stdout.contains($0) }
            var credential: String?
            if output.command.first == "token", output.result.status == 0, shown.count == 1, let token = shown.first,
                stdout.components(separatedBy: token).count == 2,
                [token + "\n", "Bearer \(token)\n"].contains(stdout) || stdout.contains("\"\(token)\"")
            {
                credential = token
            }
            for value in values {
                if output.result.stderr.contains(value) { found.append("\(name): stderr shows \(describe(value))") }
                if value != credential, stdout.contains(value) {
                    found.append("\(name): stdout shows \(describe(value))")
                }
            }
        }
        return found
    }

    /// What went wrong, one sentence each; empty when every command exited as
    /// ``expectedStatuses`` says, at least `minimumTokens` tokens passed through the store (so the
    /// search had something to find), `login` logged at debug level or finer, and ``leaks(besides:)``
    /// found nothing.
    public func problems(minimumTokens: Int, besides secrets: [String]) -> [String] {
        var problems: [String] = []
        if statuses != Self.expectedStatuses {
            // Only what the unexpected commands said, without their trace and debug lines: the
            // message has to fit in a CI log's excerpt.
            let unexpected = zip(outputs, Self.expectedStatuses).filter { $0.result.status != $1 }.map { output, _ in
                let said = output.result.stderr.split(separator: "\n").filter { line in
                    !line.contains(" trace ") && !line.contains(" debug ")
                }
                let name = output.command.joined(separator: " ")
                return "\(name) exited \(output.result.status): \(said.joined(separator: " | "))"
            }
            problems.append(
                "exit statuses \(statuses), expected \(Self.expectedStatuses); \(unexpected.joined(separator: "; "))")
        }
        if tokens.count < minimumTokens {
            problems.append("only \(tokens.count) tokens passed through the store, expected \(minimumTokens) or more")
        }
        if outputs.first?.result.stderr.contains(" debug ") != true {
            problems.append("login logged nothing at debug level: was NATIVEAUTH_LOG_LEVEL set?")
        }
        return problems + leaks(besides: secrets)
    }

    /// Names a leaked value without repeating it whole in the test's own output.
    private func describe(_ value: String) -> String {
        "a secret beginning \(value.prefix(4))… (\(value.count) characters)"
    }
}

/// Runs every command of the sample CLI `cli` (`CLI.md`) in order, each with `connection` (the
/// options that name the server, the client and `--store`) and `environment`:
/// `login`, `status`, `status --json`, `status --all`, `status --all --json`, `token` (raw, then
/// `--format` json, header and exec-credential), `userinfo`,
/// `userinfo --json`, `api apiPath`, `refresh`, `token`, `logout`, `status`, `token`. After each, it reads every token file in
/// `store`, so that ``EveryCommandRun/tokens`` holds the tokens before and after the refresh.
public func runEveryCommand(
    _ cli: String,
    connection: [String],
    store: String,
    apiPath: String,
    environment: [String: String]
) async throws -> EveryCommandRun {
    let commands = [
        ["login", "--timeout", "60"], ["status"], ["status", "--json"], ["status", "--all"],
        ["status", "--all", "--json"], ["token"], ["token", "--format", "json"], ["token", "--format", "header"],
        ["token", "--format", "exec-credential"], ["userinfo"],
        ["userinfo", "--json"], ["api", apiPath], ["refresh"], ["token"], ["logout"], ["status"], ["token"],
    ]
    var run = EveryCommandRun(outputs: [], tokens: [])
    for command in commands {
        let result = try await TestSupport.run(cli, command + connection, environment: environment)
        run.outputs.append(CommandOutput(command: command, result: result))
        run.tokens.formUnion(try storedTokens(in: store))
    }
    return run
}

/// The access, refresh and ID tokens of every token file in the store directory `store`.
public func storedTokens(in store: String) throws -> Set<String> {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: store) else { return [] }
    var tokens: Set<String> = []
    for name in names where name.hasPrefix("tokens-") && name.hasSuffix(".json") {
        let data = try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
        guard let object = try JSONValue.parse(data).objectValue else { continue }
        for key in ["access_token", "refresh_token", "id_token"] {
            if case .string(let token)? = object[key] { tokens.insert(token) }
        }
    }
    return tokens
}
