public import ArgumentParser
public import Foundation
internal import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The host and user name a tool's git credential helper answers with, by provider
/// (``NativeAuthTool/gitCredentialDefaults(for:)``).
public struct GitCredentialDefaults: Sendable, Equatable {
    /// The git host of the provider (GitHub's web host); `nil` when it has none, and `--git-host`
    /// must name it.
    public var host: URL?
    /// The user name sent with the access token as password.
    public var username: String

    /// Creates defaults; `oauth2` is the user name GitLab and Bitbucket document for OAuth tokens.
    public init(host: URL? = nil, username: String = "oauth2") {
        self.host = host
        self.username = username
    }
}

/// The options the git commands share: the host and the user name.
struct GitOptions: ParsableArguments {
    @Option(
        name: .customLong("git-host"),
        help: ArgumentHelp(
            "The host git fetches from and pushes to: HOST[:PORT] (HTTPS) or http://127.0.0.1:PORT (default: the"
                + " provider's own, GitHub's web host).", valueName: "host"))
    var gitHost: String?

    @Option(
        name: .customLong("git-username"),
        help: ArgumentHelp(
            "The user name git sends with the token (default: the provider's; x-access-token for GitHub, else"
                + " oauth2).", valueName: "name"))
    var gitUsername: String?

    /// The host and user name for `provider`.
    func resolve<Tool: NativeAuthTool>(_ tool: Tool.Type, provider: any AuthProvider) throws(AuthError) -> (
        target: GitTarget, username: String
    ) {
        let defaults = Tool.gitCredentialDefaults(for: provider)
        guard let host = gitHost ?? defaults.host?.absoluteString else {
            throw AuthError(
                .configurationInvalid, "the provider has no git host of its own",
                hint: "name the host git uses with --git-host HOST", field: Setting.gitHost.key)
        }
        let username = gitUsername ?? defaults.username
        guard !username.isEmpty, !username.contains(where: { $0 == "\n" || $0 == "\0" }) else {
            throw AuthError(
                .configurationInvalid, "--git-username is empty or holds a line break", field: Setting.gitUsername.key)
        }
        return (try GitTarget(host), username)
    }
}

/// `git-credential get|store|erase`: git's credential helper (gitcredentials(7)), answering with
/// an access token as the password for one host.
///
/// - `get`: for a request for the configured host (`--git-host`, else the provider's: GitHub's web
///   host) over HTTPS (or `http://` on loopback), and no other user name than the configured one,
///   prints `username=…` (`x-access-token` for GitHub, `oauth2` by default, `--git-username`) and
///   `password=<access token>` with `password_expiry_utc`, refreshing when needed. A git that asks
///   with `capability[]=authtype` after a Bearer challenge gets `authtype=Bearer` and the token as
///   `credential=` instead. When a sign-in is needed it opens the browser if standard error is a
///   terminal and `GIT_TERMINAL_PROMPT` is not `0`, and otherwise fails with a message (git then
///   goes on to its next helper or its own prompt). A request for another host prints nothing.
/// - `erase`: git says the server refused the credential; when the password is the stored access
///   token it is dropped, so that the next `get` refreshes.
/// - `store`: git reports a credential that worked; the tokens are kept already, so nothing is done.
///
/// Malformed input (no `host`, a line that is not `key=value`, more than 256 KiB) is an error on
/// stderr with nothing on stdout; keys git-credential(1) does not define are named in a notice and
/// ignored. `setup-git` configures git to run it (``SetupGitCommand``).
public struct GitCredentialCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "git-credential", abstract: "git's credential helper (run by git; see setup-git).",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>
    @OptionGroup var git: GitOptions

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "get|store|erase"))
    var action: String

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let input = try CommandSupport.readStandardInput(limit: GitCredentialRequest.inputLimit)
            let request = try GitCredentialRequest.parse(input)
            guard ["get", "store", "erase"].contains(action) else {
                // git may grow actions; an unknown one is ignored, as gitcredentials(7) asks.
                return
            }
            if !request.unknownKeys.isEmpty {
                CommandSupport.notice("ignored what git sent as \(request.unknownKeys.joined(separator: ", "))")
            }
            guard action != "store" else { return }  // the tokens are kept already
            guard request.host?.isEmpty == false, request.protocol?.isEmpty == false else {
                throw AuthError(
                    .configurationInvalid, "the credential request names no protocol and host",
                    hint: "git sends protocol=https and host=HOST; so must a script that calls this")
            }
            let environment = ProcessInfo.processInfo.environment
            let signIn: TokenSupply.SignIn =
                isatty(STDERR_FILENO) == 1 && environment["GIT_TERMINAL_PROMPT"] != "0"
                ? .withBrowser : .never(reason: "git runs this helper without a terminal")
            // Whether the request is this helper's is known from the settings alone: the storage
            // (perhaps a keyring) is opened only for one that is.
            let configured = try options.configure(environment: environment)
            let (target, username) = try git.resolve(Tool.self, provider: configured.provider)
            guard target.matches(request), request.username.map({ $0 == username }) ?? true else {
                return  // another host, scheme or user: another helper's
            }
            if let token = try AccessTokenOverride.token(in: environment) {
                // GH_TOKEN's behaviour: the given token is the answer, no store is read, and a
                // refusal (erase) has nothing to drop.
                guard action == "get" else { return }
                let lines = GitCredentialAnswer.lines(
                    for: target, username: username, tokens: AccessTokenOverride.tokens(token), request: request)
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                return
            }
            let prepared = try await options.open(
                configured, environment: environment, use: action == "get" ? .describe : .act, registers: false)
            if action == "erase" {
                let secret = request.attributes["credential"] ?? request.password
                if let secret, try await prepared.authenticator.discardAccessToken(secret) {
                    CommandSupport.notice("\(target.url) refused the access token; the next request gets a new one")
                }
                return
            }
            let tokens = try await TokenSupply.tokens(prepared, signIn: signIn, tool: Tool.self)
            let lines = GitCredentialAnswer.lines(for: target, username: username, tokens: tokens, request: request)
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }
}

/// `git config --global`, run as a child (without `NATIVEAUTH_` variables).
enum GitConfig {
    /// Every value of `key`; none when it is not set.
    static func values(of key: String, environment: [String: String]) async throws -> [String] {
        let (status, output, error) = try await git(["config", "--global", "--null", "--get-all", key], environment)
        if status == 1 { return [] }  // not set
        guard status == 0 else { throw failure("reading \(key)", status, error) }
        var values = output.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if values.last == "" { values.removeLast() }
        return values
    }

    /// Replaces every value of `key` with `values`, in order.
    static func replace(_ key: String, with values: [String], environment: [String: String]) async throws {
        let (status, _, error) = try await git(["config", "--global", "--unset-all", key], environment)
        guard status == 0 || status == 5 else { throw failure("clearing \(key)", status, error) }  // 5: not set
        for value in values {
            let (status, _, error) = try await git(["config", "--global", "--add", key, value], environment)
            guard status == 0 else { throw failure("setting \(key)", status, error) }
        }
    }

    private static func failure(_ doing: String, _ status: Int32, _ error: Data) -> AuthError {
        let said = String(decoding: error.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return AuthError(
            .configurationInvalid, "git config failed \(doing) (exit \(status)): \(said)",
            hint: "check that git is installed and that ~/.gitconfig can be written")
    }

    private static func git(_ arguments: [String], _ environment: [String: String]) async throws -> (
        Int32, Data, Data
    ) {
        guard let executable = ChildProcess.executable("git", searchPath: environment["PATH"] ?? "/usr/bin:/bin")
        else {
            throw AuthError(.configurationInvalid, "git is not on PATH", hint: "install git first")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // git config reads its own variables (GIT_CONFIG_GLOBAL, …) besides the standard ones.
        process.environment = ChildProcess.childEnvironment(environment, allowing: .standard.adding(["GIT_*"]))
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        // git config answers in a few lines: its pipes are read to their end, then it is waited for.
        let (status, (out, err)) = try await ChildProcess.runToEnd(process) {
            (output.fileHandleForReading.readDataToEndOfFile(), error.fileHandleForReading.readDataToEndOfFile())
        }
        return (status, out, err)
    }
}
