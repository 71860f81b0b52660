public import ArgumentParser
internal import Foundation
internal import Logging
internal import NativeAuth
internal import NativeAuthAgent
internal import NativeAuthKeyring
internal import NativeAuthPresenters

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `agent`: holds the sign-ins of the token store and hands out access tokens and DPoP proofs on a
/// Unix socket, like ssh-agent, to this machine's processes and, through `ssh -R`, to other
/// machines'. The refresh token and the DPoP key never leave it.
///
/// It prints `NATIVEAUTH_AGENT_SOCK=…; export NATIVEAUTH_AGENT_SOCK;` on standard output (as
/// `ssh-agent -s` does), then serves until SIGINT or SIGTERM, writing an audit line per request on
/// standard error. With `NATIVEAUTH_AGENT_SOCK` set, the tool's `token`, `api`, `userinfo`,
/// `exec-credential`, `git-credential`, `docker-credential` and cloud formats ask the agent
/// instead of a store, and fail closed when it is gone.
public struct AgentCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "agent",
            abstract: "Serve the sign-ins on a socket, like ssh-agent (forward it with ssh -R).",
            discussion: """
                Prints NATIVEAUTH_AGENT_SOCK=…; export NATIVEAUTH_AGENT_SOCK; and serves until \
                interrupted. Every account of the configured issuer and client in the token storage is \
                served, or the one --account names. Only processes of this uid are served (a socket \
                forwarded with ssh -R is reached through sshd, running as you on the other side), \
                unless --allow-uid names others. Refresh tokens and DPoP keys are never handed out.
                """ + "\n\n" + CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Option(
        name: .customLong("socket"), help: "Listen here (default: a new 0700 directory under $XDG_RUNTIME_DIR or /tmp)."
    )
    var socketPath: String?

    @Option(name: .customLong("allow-uid"), help: "Also serve this uid's processes (repeatable).")
    var allowedUIDs: [UInt32] = []

    @Option(
        name: .customLong("allow-resource"),
        help: "Hand out tokens only for this resource and the URLs under it (repeatable).")
    var allowedResources: [String] = []

    @Flag(name: .customLong("resources-only"), help: "Never hand out the sign-in's own token, only resources' tokens.")
    var resourcesOnly = false

    @Option(
        name: .customLong("max-lifetime"),
        help: "Say every token handed out expires within this many seconds, so that callers ask again.")
    var maximumLifetime: Int?

    @Option(
        name: .customLong("policy"),
        help: "Read the policy from this JSON file (uids, accounts, resources, sign_in_tokens, max_lifetime, confirm).")
    var policyFile: String?

    @Flag(name: .customLong("confirm"), help: "Ask on this terminal before each token is handed out (like ssh-add -c).")
    var confirm = false

    @Option(
        name: .customLong("confirm-command"),
        help: "Ask through this program instead (the question is its argument; exit 0 allows): a desktop prompt.")
    var confirmCommand: String?

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        if let maximumLifetime, maximumLifetime < 60 {
            throw ValidationError("--max-lifetime must be at least 60 seconds")
        }
        for resource in allowedResources where (try? ProviderConfiguration.resourceIndicator(resource)) == nil {
            throw ValidationError("--allow-resource \(resource) is not an absolute http(s) URL")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            // The agent keeps the store's tokens: it never borrows from another agent.
            var environment = ProcessInfo.processInfo.environment
            environment[AgentSocket.environmentVariable] = nil
            let prepared = try await options.open(
                options.configure(environment: environment), environment: environment, use: .none, registers: false)
            let served = try await servedAccounts(prepared)
            guard !served.isEmpty else {
                throw AuthError(
                    .loginRequired, "no account of \(prepared.authenticator.key.issuer) is signed in here",
                    hint: "run `\(Tool.toolName) login` first")
            }
            let socket =
                try socketPath.map { try Self.chosenSocket(ToolInvocation.absolute($0)) } ?? AgentSocket.create()
            let policy = try policy()
            let server = try await AgentServer.start(
                accounts: served.filter { policy.accounts?.contains($0.key) ?? true }, socket: socket,
                policy: policy, logger: auditLogger(), confirm: policy.requiresConfirmation ? confirmation() : nil)
            CommandSupport.printLine(socket.shellExport)
            CommandSupport.notice(
                "serving \(served.keys.sorted().joined(separator: ", ")) on \(socket.path); Ctrl-C stops")
            do {
                try await CommandSupport.cancellingOnSignals { try await server.run() }
            } catch is CancellationError {
                // Ctrl-C or SIGTERM: the socket is removed, and that is the end.
            } catch let error as AuthError where error.code == .loginCancelled {
            }
            socket.remove()
        }
    }

    /// The socket at `path`, in a directory that only this user can write (else another user could
    /// replace the socket between its creation and its chmod, or remove it for one of theirs).
    static func chosenSocket(_ path: String) throws -> AgentSocket {
        let directory = (path as NSString).deletingLastPathComponent
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory)
        let owner = (attributes?[.ownerAccountID] as? NSNumber)?.uint32Value
        let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        guard owner == UInt32(getuid()), mode & 0o022 == 0 else {
            throw AuthError(
                .configurationInvalid,
                "the agent's socket must be in a directory only you can write, and \(directory) is not",
                hint: "leave out --socket (a new 0700 directory is made), or make the directory 0700",
                field: Setting.agentSocket.key)
        }
        return AgentSocket(path: path)
    }

    /// The accounts served: the one named, else every signed-in account of the configuration.
    private func servedAccounts(_ prepared: PreparedAccount) async throws -> [String: Authenticator] {
        if let named = prepared.named {
            let auth = prepared.accounts.authenticator(for: named.name)
            guard try await auth.currentTokens() != nil else {
                throw AuthError(
                    .loginRequired, "the account \(named.name) is not signed in here",
                    hint: "run `\(Tool.toolName) login --account \(named.name)` first")
            }
            return [named.name: auth]
        }
        var served: [String: Authenticator] = [:]
        var names = try await prepared.accounts.names()
        if names.isEmpty { names = [TokenKey.defaultAccount] }
        for name in names {
            let auth = prepared.accounts.authenticator(for: name)
            if try await auth.currentTokens() != nil { served[name] = auth }
        }
        return served
    }

    /// The policy file's, narrowed by the flags: each flag given adds a uid, or limits further.
    private func policy() throws -> AgentPolicy {
        var policy = try policyFile.map { try AgentPolicy(contentsOf: ToolInvocation.absolute($0)) } ?? AgentPolicy()
        policy.uids.formUnion(allowedUIDs)
        if !allowedResources.isEmpty {
            policy.resources = try allowedResources.map { try ProviderConfiguration.resourceIndicator($0) }
        }
        if resourcesOnly { policy.admitsSignInTokens = false }
        if let maximumLifetime {
            policy.maximumLifetime = min(policy.maximumLifetime ?? .infinity, TimeInterval(maximumLifetime))
        }
        if confirm || confirmCommand != nil { policy.requiresConfirmation = true }
        return policy
    }

    /// The audit log: standard error, at info level whatever `NATIVEAUTH_LOG_LEVEL` says (an audit
    /// line is never dropped).
    private func auditLogger() -> Logger {
        var logger = CommandSupport.makeLogger(label: "\(Tool.toolName).agent")
        if logger.logLevel > .info { logger.logLevel = .info }
        return logger
    }

    /// How the owner is asked: the program given, else this terminal.
    private func confirmation() -> AgentServer.Confirmation {
        if let confirmCommand {
            let words = ChildProcess.split(confirmCommand)
            return { request in await AgentConfirmation.shared.ask(command: words, request) }
        }
        return { request in await AgentConfirmation.shared.askTerminal(request) }
    }
}

/// The agent owner's answers, one question at a time.
actor AgentConfirmation {
    static let shared = AgentConfirmation()

    /// Asks on the controlling terminal (`/dev/tty`) within two minutes; no terminal, no answer in
    /// time, or anything but `y`/`yes`, refuses.
    func askTerminal(_ request: AgentServer.Request) async -> Bool {
        await TerminalQuestion("Allow? \(request)", timeout: .seconds(120)).isYesOnControllingTerminal()
    }

    /// Asks through `command` with the question as its last argument, within two minutes: exit 0
    /// allows; anything else (or no answer) refuses.
    func ask(command: [String], _ request: AgentServer.Request) async -> Bool {
        guard let name = command.first, let executable = ChildProcess.executable(name) else { return false }
        let process = Process()
        process.executableURL = executable
        process.arguments = Array(command.dropFirst()) + ["Allow? \(request)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.environment = ChildProcess.childEnvironment(ProcessInfo.processInfo.environment)
        let result = try? await ChildProcess.runToEnd(process, timeout: .seconds(120)) { () }
        return result?.status == 0 && result?.timedOut == false
    }
}

extension CommandOptions {
    /// The authenticator of an agent's account (with `NATIVEAUTH_AGENT_SOCK` set): it borrows the
    /// agent's tokens and proofs and keeps none; nothing is read from a store.
    ///
    /// The account is the one named, else the agent's only account of the configured issuer, else
    /// its `default`. An account of another issuer is never used: its tokens were not issued for
    /// what this configuration names.
    func borrowing(
        _ configured: Configured, from agent: AgentClient, environment: [String: String], use: AccountUse
    ) async throws -> Prepared {
        let issuer = configured.provider.tokenIssuer
        let named = configured.selection.account
        var account = named?.name ?? TokenKey.defaultAccount
        if use != .none {
            let served = try await agent.accounts()
            let matching = served.filter { IssuerIdentifier($0.issuer) == IssuerIdentifier(issuer) }
            if let named {
                guard matching.contains(where: { $0.name == named.name }) else {
                    let other = served.first { $0.name == named.name }
                    throw AuthError(
                        .loginRequired,
                        other.map {
                            "the agent's account \(named.name) signs in at \($0.issuer), not at \(issuer); no token was asked for"
                        } ?? "the agent serves no account \(named.name) (chosen by \(named.source))",
                        hint: "sign in to it where the agent runs, or choose another with --account",
                        field: Setting.account.key)
                }
            } else if matching.count == 1, let only = matching.first {
                account = only.name
            } else if !matching.contains(where: { $0.name == TokenKey.defaultAccount }) {
                throw AuthError(
                    .loginRequired,
                    matching.isEmpty
                        ? "the agent serves no account signed in at \(issuer)"
                        : "the agent serves several accounts of \(issuer) (\(matching.map(\.name).joined(separator: ", ")))",
                    hint: matching.isEmpty
                        ? "sign in where the agent runs, or check --issuer" : "choose one with --account NAME",
                    field: matching.isEmpty ? "issuer" : "account")
            }
        }
        let logger = CommandSupport.makeLogger(label: Tool.toolName)
        let authenticator = Authenticator(
            provider: configured.provider, borrowingFrom: agent,
            transport: configured.resolved.transport.makeTransport(logger: logger), account: account, logger: logger)
        let storage = try await TokenStorage.open(.none, options: TokenStorage.Options(), environment: environment)
        return Prepared(
            authenticator: authenticator, storage: storage,
            accounts: Accounts(authenticator, active: storage.activeAccounts), account: account, named: named,
            profile: configured.selection.profile)
    }
}
