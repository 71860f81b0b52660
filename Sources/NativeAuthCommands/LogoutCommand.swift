public import ArgumentParser
internal import Foundation
internal import NativeAuth
internal import NativeAuthKeyring

/// `logout`: revokes where possible, removes the tokens, and opens (or prints) the end-session URL,
/// for the selected account (`--account`, else the active one), or `--all` of them.
public struct LogoutCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "logout", abstract: "Revoke and remove the tokens, and end the session.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser; print the end-session URL instead.")
    var noBrowser = false

    @Option(name: .long, help: "The loopback port for the post-logout redirect (default: a free one).")
    var port: Int = 0

    @Option(name: .long, help: "Seconds to wait for the end-session round trip.")
    var timeout: Int = 120

    @Flag(name: .long, help: "Sign every account out (revoking and removing; no end-session page is opened).")
    var all = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            try AccessTokenOverride.refuse("logout")
            if all {
                try await logoutAll()
                return
            }
            let prepared = try await options.prepare()
            let (accounts, account, storage) = (prepared.accounts, prepared.account, prepared.storage)
            let presenter: LoopbackPresenter? =
                noBrowser
                ? nil
                : LoopbackPresenter(
                    configuration: .init(port: port, callbackPath: "/logged-out", timeout: .seconds(max(1, timeout)))
                )
            // prepare() checked a named account; the active one may be a sign-in from before
            // accounts were listed, or kept in another backend.
            let result = try await CommandSupport.cancellingOnSignals {
                try await accounts.signOut(account, presenter: presenter)
            }
            if let error = result.revocationError {
                CommandSupport.report(error, tool: Tool.self)
            }
            // The same sign-in kept by another backend (files from before the keyring; a keyring
            // item from an earlier --token-storage keyring) goes too.
            for problem in await storage.removeElsewhere(prepared.authenticator.key) {
                CommandSupport.warn("could not remove the tokens from every storage: \(problem.message)")
            }
            // The printed URL leaves out id_token_hint (ConsoleOutput.writeURL): no token is ever
            // printed. Providers then ask the person to confirm the logout.
            func show(_ url: URL) {
                ConsoleOutput.standardError.write("Open this URL to end the session at the provider:")
                ConsoleOutput.standardError.writeURL(url)
            }
            if !noBrowser, let url = result.endSessionURL, !result.endSessionCompleted {
                // The provider's logout page does not come back to us (Cognito): just open it.
                do {
                    try await SystemBrowserOpener().open(url)
                } catch {
                    show(url)
                }
            }
            if noBrowser, let url = result.endSessionURL { show(url) }
            CommandSupport.printLine("Signed out")
            if result.revocationError != nil { throw ExitCode(1) }
        }
    }

    /// `logout --all`: every account revoked and removed, one line each.
    private func logoutAll() async throws {
        let prepared = try await options.prepare(use: .none)
        let names = try await prepared.accounts.names()
        guard !names.isEmpty else {
            CommandSupport.printLine("Not signed in.")
            return
        }
        var failed = false
        for name in names {
            let result = try await prepared.accounts.logout(name)
            if let error = result.revocationError {
                CommandSupport.report(error, tool: Tool.self)
                failed = true
            }
            for problem in await prepared.storage.removeElsewhere(prepared.accounts.authenticator(for: name).key) {
                CommandSupport.warn("could not remove the tokens from every storage: \(problem.message)")
            }
            CommandSupport.printLine("Signed out \(name)")
        }
        if failed { throw ExitCode(1) }
    }
}
