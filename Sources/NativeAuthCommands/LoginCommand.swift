public import ArgumentParser
internal import Foundation
internal import NativeAuth
internal import NativeAuthPresenters

/// `login`: signs in and stores the tokens.
///
/// Four ways in:
/// - by default, the system browser and a loopback redirect;
/// - `--no-browser`: prints the URL, then takes the browser's redirect on loopback (when the port
///   is forwarded) or the address the browser ends on, pasted on stdin, whichever comes first;
/// - `--paste`: prints the URL and reads the pasted address (or code) from stdin;
/// - `--device`: the device authorization grant; the prompt's lines start with `Code: ` and `Open: `;
/// - `--client-credentials`: no person: the client signs in as itself (RFC 6749 §4.4), with its
///   secret, its key (`--client-assertion-key`) or its TLS certificate; the tokens are asked for
///   again when they expire;
/// - a workload's own token (`--subject-token-file`, `--subject-token-command`,
///   `--subject-token-github-actions`): traded for tokens (RFC 8693, or `--workload-grant
///   jwt_bearer`), read again at every renewal. No person either.
///
/// The sign-in is kept as an account named after who signed in, or `--account NAME`; signing in as
/// a stored account replaces its tokens, and the first account becomes the active one.
///
/// Prints `Signed in as …` on stdout; URLs, hints and prompts go to stderr.
public struct LoginCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "login", abstract: "Sign in and store the tokens.", discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Option(
        name: .long,
        help: """
            The loopback port of the redirect URI (default: a free one, which servers that follow \
            RFC 8252 §7.3 accept; a server that matches redirect URIs exactly needs the port it has \
            registered, as in http://127.0.0.1:PORT/callback).
            """)
    var port: Int = 0

    @Flag(
        name: .customLong("no-browser"),
        help: "Do not open a browser: print the URL, then take the redirect on loopback or a pasted address."
    )
    var noBrowser = false

    @Flag(name: .long, help: "Print the URL and read the address the browser ends on (or the code) from stdin.")
    var paste = false

    @Flag(name: .long, help: "Sign in by entering a code on another device (OAuth device authorization grant).")
    var device = false

    @Flag(
        name: .customLong("client-credentials"),
        help: "Sign in as the client itself, with no person (client credentials grant): for CI, services and agents.")
    var clientCredentials = false

    @Option(
        name: .customLong("device-endpoint"),
        help: "The device authorization endpoint, for providers whose metadata names none."
    )
    var deviceEndpoint: String?

    @Option(
        name: .customLong("add-scope"),
        help: ArgumentHelp(
            "Sign in again with this scope added to those the account holds (incremental consent); repeatable.",
            valueName: "scope"))
    var addScope: [String] = []

    @Option(name: .long, help: "Seconds to wait for a browser sign-in to finish.")
    var timeout: Int = 300

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the server to prompt: login (sign in again), consent, select_account or none.", valueName: "prompt"))
    var prompt: String?

    @Option(name: .customLong("login-hint"), help: ArgumentHelp("The account to sign in.", valueName: "account"))
    var loginHint: String?

    @Option(
        name: .customLong("max-age"),
        help: ArgumentHelp(
            "Sign in again unless the person authenticated within this many seconds; the ID token must show it.",
            valueName: "seconds"))
    var maxAge: Int?

    @Option(
        name: .customLong("acr-values"),
        help: ArgumentHelp(
            "The authentication context classes to ask for (a stronger sign-in: MFA), space-separated, most"
                + " preferred first; the ID token's acr must be one of them.", valueName: "values"))
    var acrValues: String?

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        guard [noBrowser, paste, device, clientCredentials].filter({ $0 }).count <= 1 else {
            throw ValidationError("choose one of --no-browser, --paste, --device and --client-credentials")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        if deviceEndpoint != nil, !device {
            throw ValidationError("--device-endpoint goes with --device")
        }
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age is a number of seconds, 0 or more") }
        if let prompt, !["login", "consent", "select_account", "none"].contains(prompt) {
            throw ValidationError("--prompt is one of login, consent, select_account and none")
        }
        if prompt != nil || loginHint != nil || maxAge != nil || acrValues != nil,
            device || clientCredentials
        {
            throw ValidationError("--prompt, --login-hint, --max-age and --acr-values go with a browser sign-in")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            try AccessTokenOverride.refuse("login")
            var settings = SettingOverrides()
            if let deviceEndpoint { try settings.set(.deviceAuthorizationEndpoint, text: deviceEndpoint) }
            let prepared = try await options.prepare(settings: settings, use: .none)
            let accounts = prepared.accounts
            let name = prepared.named?.name
            let workload = clientCredentials || accounts.authenticator.provider.configuration.workload != nil
            if workload, device || paste || noBrowser {
                throw AuthError(
                    .configurationInvalid, "a subject token signs a workload in: it goes with no other way in",
                    hint: "leave out --device, --paste and --no-browser")
            }
            let scopes = try await scopes(prepared, workload: workload)
            let registeredPort = prepared.authenticator.provider.configuration.loopbackRedirectPort
            let presenter = device || workload ? nil : try presenter(port: port != 0 ? port : registeredPort ?? 0)
            let loginOptions = loginOptions
            // A progress line on a terminal, except while the person may be typing a paste.
            let progress = device ? "Waiting for approval…" : "Waiting for the browser…"
            let showsProgress = !paste && !noBrowser && !workload
            let signIn = try await CommandSupport.cancellingOnSignals {
                let signIn: @Sendable () async throws -> Accounts.SignIn = {
                    if workload {
                        try await accounts.login(.workload, scopes: scopes, name: name)
                    } else if let presenter {
                        try await accounts.login(.browser(presenter, options: loginOptions), scopes: scopes, name: name)
                    } else {
                        try await accounts.login(.device(), scopes: scopes, name: name)
                    }
                }
                return showsProgress ? try await CommandSupport.withProgress(progress, signIn) : try await signIn()
            }
            let who = signIn.tokens.displayName ?? signIn.tokens.subject ?? "an unnamed account"
            CommandSupport.printLine(
                "Signed in as \(who)" + (who == signIn.account ? "" : " (account \(signIn.account))"))
            if let issuer = accounts.authenticator.provider.configuration.issuer, issuer.scheme?.lowercased() == "http"
            {
                // Once per sign-in, not on every command: only loopback is reached over plain HTTP.
                CommandSupport.notice(
                    "the provider is reached over plain HTTP on the loopback interface; on a machine shared with"
                        + " others, another user could take its port first")
            }
            if !signIn.isActive, let active = try? await accounts.active() {
                CommandSupport.notice(
                    "\(signIn.account) is signed in; the active account is still \(active)."
                        + " `\(Tool.toolName) switch \(signIn.account)` makes it the active one;"
                        + " --account \(signIn.account) acts on it without switching")
            }
            if let notice = CommandStorage.notice(for: prepared.storage) { CommandSupport.notice(notice) }
        }
    }

    /// `--prompt`, `--login-hint`, `--max-age` and `--acr-values`.
    private var loginOptions: LoginOptions {
        LoginOptions(
            prompt: prompt, loginHint: loginHint, maxAge: maxAge,
            acrValues: (acrValues ?? "").split(whereSeparator: \.isWhitespace).map(String.init))
    }

    /// With `--add-scope`: the configured scopes, those the account holds, and the added ones, in
    /// that order; else `nil` (the configuration's).
    private func scopes(_ prepared: PreparedAccount, workload: Bool) async throws -> [String]? {
        guard !addScope.isEmpty else { return nil }
        if let bad = addScope.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw AuthError(.configurationInvalid, "--add-scope takes one scope at a time, not '\(bad)'")
        }
        let held = try await prepared.authenticator.currentTokens()?.scopes ?? []
        var scopes: [String] = []
        let configured = prepared.authenticator.provider.configuration.scopes.filter { !workload || $0 != "openid" }
        for scope in configured + held + addScope where !scopes.contains(scope) {
            scopes.append(scope)
        }
        return scopes
    }

    /// The presenter for a redirect to `port` (0: any free one).
    private func presenter(port: Int) throws -> any UserAgentPresenter {
        let timeout = Duration.seconds(max(1, timeout))
        if noBrowser {
            return LoopbackAndPastePresenter(configuration: .init(port: port, timeout: timeout))
        }
        if paste {
            let redirect = port == 0 ? nil : URL(string: "http://127.0.0.1:\(port)/callback")
            return ManualPastePresenter(configuration: .init(redirectURI: redirect, timeout: timeout))
        }
        return LoopbackPresenter(
            configuration: LoopbackPresenter.Configuration(port: port, timeout: timeout, opener: SystemBrowserOpener())
        )
    }
}
