public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// `kubeconfig`: prints the `users:` entry that makes kubectl get its tokens from this tool.
///
/// The entry is an exec credential plugin (client-go's `client.authentication.k8s.io/v1`): kubectl
/// runs `<tool> token --format exec-credential` with this command line's options (the connection,
/// `--store`, `--token-storage`, and the profile and account, also when they were chosen by the
/// environment or a `.nativeauth.json`), caches the token until its `expirationTimestamp`, and
/// runs the plugin again after it, or when the API server answers 401. Paste it into the
/// kubeconfig and name it in a context:
///
/// ```yaml
/// contexts:
/// - name: work
///   context: {cluster: my-cluster, user: oidc-login}
/// ```
///
/// kubectl gets the ID token of an OpenID sign-in, which is what the API server's OIDC
/// authenticator validates (`--token-kind access` writes the access token's entry instead); the
/// flags the API server needs for it are printed on standard error, with the user name claim the
/// provider suggests (`ProviderService.kubernetesUsernameClaim`).
///
/// A client secret given with `--client-secret` is refused: it would be written into the
/// kubeconfig. Give `--client-secret-file FILE`, or a profile that holds it.
public struct KubeconfigCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "kubeconfig", abstract: "Print the kubeconfig user entry that runs this tool for kubectl.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Option(name: .long, help: "The user's name in the kubeconfig (default: the tool's name, and the account's).")
    var name: String?

    @Option(
        name: .customLong("interactive-mode"),
        help: ArgumentHelp(
            "When kubectl lets the plugin sign in with the browser: IfAvailable (a terminal), Always or Never.",
            valueName: "IfAvailable|Always|Never"))
    var interactiveMode: String = "IfAvailable"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The token kubectl gets: id (the default for an OpenID sign-in: what an API server's OIDC authenticator"
                + " validates) or access (for clusters that validate access tokens).",
            valueName: "id|access"))
    var tokenKind: String?

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        guard ["IfAvailable", "Always", "Never"].contains(interactiveMode) else {
            throw ValidationError("--interactive-mode is one of IfAvailable, Always and Never")
        }
        guard tokenKind.map({ TokenKind(rawValue: $0) != nil }) ?? true else {
            throw ValidationError("--token-kind is id or access")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let environment = ProcessInfo.processInfo.environment
            // The configuration must make sense now, rather than when kubectl first runs it.
            let configured = try options.configure(environment: environment)
            let carried = try options.carriedArguments(configured)
            let user = name ?? (configured.selection.account.map { "\(Tool.toolName)-\($0.name)" } ?? Tool.toolName)
            let kind = tokenKind.map { ["--token-kind", $0] } ?? []
            let entry = Self.entry(
                name: user, command: ToolInvocation.executablePath(),
                arguments: ["token", "--format", "exec-credential"] + kind + carried, interactiveMode: interactiveMode)
            for line in entry { CommandSupport.printLine(line) }
            if tokenKind != TokenKind.access.rawValue, configured.provider.configuration.scopes.contains("openid"),
                let issuer = configured.provider.configuration.issuer
            {
                // What the cluster's side needs, on stderr: stdout is the YAML to paste.
                let claim = (configured.provider as? any ProviderService)?.kubernetesUsernameClaim ?? "sub"
                CommandSupport.notice(
                    "kubectl sends the ID token; the API server takes it with --oidc-issuer-url=\(issuer.absoluteString)"
                        + " --oidc-client-id=\(configured.provider.configuration.clientID) --oidc-username-claim=\(claim)"
                        + " (or the same in its AuthenticationConfiguration's jwt issuer and claimMappings)")
            }
            options.noteUncarriedVariables(environment: environment, what: "the entry")
        }
    }

    /// The lines of the `users:` entry. Every string is a double-quoted scalar (JSON's string
    /// syntax, which YAML reads the same), so no path or value can change the YAML's shape.
    static func entry(name: String, command: String, arguments: [String], interactiveMode: String) -> [String] {
        func quoted(_ text: String) -> String {
            (try? JSONValue.string(text).encodedString()) ?? "\"\""
        }
        return [
            "users:",
            "- name: \(quoted(name))",
            "  user:",
            "    exec:",
            "      apiVersion: \(quoted(KubernetesExecInfo.versions[0]))",
            "      command: \(quoted(command))",
            "      args:",
        ] + arguments.map { "      - \(quoted($0))" } + [
            "      interactiveMode: \(quoted(interactiveMode))",
            "      provideClusterInfo: false",
        ]
    }
}
