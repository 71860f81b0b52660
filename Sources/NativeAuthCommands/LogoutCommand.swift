public import ArgumentParser
internal import Foundation
@_spi(Provider) internal import NativeAuth
internal import NativeAuthKeyring
internal import NativeAuthPresenters

/// `logout`: revokes where possible, removes the tokens, and opens (or prints) the end-session URL,
/// for the selected account (`--account`, else the active one), or `--all` of them.
///
/// It exits 0 once the tokens are removed here: a revocation the server refused is a warning, and
/// one the server's metadata says it would refuse (a public client where it revokes only for
/// confidential ones) is skipped with a notice. With nothing stored it says so at once, and opens
/// no page unless `--end-session`. With `--resource URL`, an API found by its metadata is
/// forgotten instead (see `KnownResource`).
public struct LogoutCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "logout", abstract: "Revoke and remove the tokens, and end the session.",
            discussion: """
                Exit status 0 once the tokens are removed here, even when revoking them at the provider \
                failed (a warning on stderr says so) or its logout page did not send the browser back in \
                time (a notice says so); with nothing stored, 0 at once (`Not signed in`).

                `logout --resource URL` forgets an API that `api URL` found by its metadata, with its \
                tokens; the sign-in made for it alone is signed out too.

                """ + CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: CommandOptions<Tool, SignOutSettings>

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser; print the end-session URL instead.")
    var noBrowser = false

    @Option(name: .long, help: "The loopback port for the post-logout redirect (default: a free one).")
    var port: Int = 0

    @Option(
        name: .long,
        help:
            "Seconds to wait for the provider's logout page to send the browser back; the tokens are removed either way."
    )
    var timeout: Int = 15

    @Flag(name: .long, help: "Sign every account out (revoking and removing; no end-session page is opened).")
    var all = false

    @Flag(
        name: .customLong("end-session"),
        help: "End the provider's session in the browser even when no tokens are stored here.")
    var endSession = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            try AccessTokenOverride.refuse("logout")
            if let resource = try options.singleResource() {
                try await forget(resource)
                return
            }
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
                    configuration: .init(
                        port: port, callbackPath: "/logged-out", timeout: .seconds(max(1, timeout)),
                        postsEndSessionForm: prepared.authenticator.provider.configuration.endSessionMethod == .post,
                        purpose: .signOut)
                )
            // prepare() checked a named account; the active one may be a sign-in from before
            // accounts were listed, or kept in another backend.
            let endSession = endSession
            let result = try await CommandSupport.cancellingOnSignals {
                try await accounts.signOut(account, presenter: presenter, endingSessionWhenSignedOut: endSession)
            }
            // The same sign-in kept by another backend (files from before the keyring; a keyring
            // item from an earlier --token-storage keyring) goes too.
            for problem in await storage.removeElsewhere(prepared.authenticator.key) {
                CommandSupport.warn("could not remove the tokens from every storage: \(problem.message)")
            }
            Self.explainRevocation(result)
            if !result.removedTokens, !endSession {
                CommandSupport.printLine("Not signed in; nothing to sign out.")
                return
            }
            // The printed URL leaves out id_token_hint (ConsoleOutput.writeURL): no token is ever
            // printed. Providers then ask the person to confirm the logout.
            func show(_ url: URL) {
                ConsoleOutput.standardError.write("Open this URL to end the session at the provider:")
                ConsoleOutput.standardError.writeURL(url)
            }
            // A round trip that timed out was opened already, through a one-time start address: the
            // URL itself (with the ID token in it) is never handed to a browser's command line.
            if !noBrowser, let url = result.endSessionURL, !result.endSessionCompleted, !result.endSessionTimedOut {
                // The provider's logout page does not come back to us (Cognito): just open it.
                do {
                    try await SystemBrowserOpener().open(url)
                } catch {
                    show(url)
                }
            }
            if noBrowser, let url = result.endSessionURL { show(url) }
            if result.endSessionTimedOut {
                CommandSupport.notice(
                    "the provider's logout page did not send the browser back within \(max(1, timeout)) s"
                        + (result.removedTokens ? "; the tokens are removed here" : "")
                        + "; if its website still shows you signed in, sign out there"
                        + (prepared.authenticator.provider.configuration.endSessionMethod == .post
                            ? " (a server that takes the end-session request only by GET needs"
                                + " \(Setting.endSessionMethod.declaration.flag) get)" : ""))
            }
            if result.removedTokens {
                CommandSupport.printLine("Signed out")
            } else if result.endSessionURL == nil {
                CommandSupport.printLine("Not signed in; the provider has no page that ends its session")
            } else {
                CommandSupport.printLine(
                    "Not signed in here; "
                        + (result.endSessionCompleted ? "the session ended" : "the provider's logout page is open"))
            }
        }
    }

    /// A revocation that failed is a warning, one that was skipped a notice: the tokens are
    /// removed here either way, which is what a sign-out promises (the exit status stays 0).
    private static func explainRevocation(_ result: LogoutResult) {
        if let error = result.revocationError {
            CommandSupport.warn(
                "the tokens are removed here, but revoking them at the provider failed: \(error.description)")
        }
        if let reason = result.revocationSkipped {
            CommandSupport.notice("not revoked at the provider (\(reason)); the tokens are removed here")
        }
    }

    /// `logout --resource URL`: an API found by its metadata is forgotten, with its tokens. The
    /// sign-in that held them is signed out too when it was made for it alone: no other known
    /// resource uses it, and it is not at the configured server (where it is the person's own).
    private func forget(_ resource: URL) async throws {
        let records = try options.knownResourceStore()
        let shown = Redaction.scrubURL(resource.absoluteString)
        let all = try await records.knownResources()
        guard let known = all.first(where: { $0.resource == resource }) else {
            CommandSupport.printLine(
                "\(shown) is not an API found by its metadata here; nothing to forget"
                    + (all.isEmpty
                        ? ""
                        : " (known: \(all.map { Redaction.scrubURL($0.resource.absoluteString) }.joined(separator: ", ")))")
            )
            return
        }
        let prepared = try await options.prepare(for: ResourceTarget(known))
        let shared = all.contains {
            $0.resource != known.resource && $0.account == known.account
                && IssuerIdentifier.same($0.issuer, known.issuer)
        }
        let own = options.configuredIssuer().map { !IssuerIdentifier.same($0, known.issuer) } ?? true
        var signedOut = false
        if !shared, own, try await prepared.accounts.names().contains(known.account) {
            let result = try await prepared.accounts.logout(known.account)
            Self.explainRevocation(result)
            signedOut = result.removedTokens
        } else {
            try await prepared.accounts.authenticator(for: known.account).discardResourceTokens(for: known.resource)
        }
        _ = try await records.forget(known.resource)
        CommandSupport.printLine(
            "Forgot \(shown)" + (signedOut ? "; signed out \(known.account)" : "; its tokens are removed"))
    }

    /// `logout --all`: every account revoked and removed, one line each.
    private func logoutAll() async throws {
        let prepared = try await options.prepare(use: .none)
        let names = try await prepared.accounts.names()
        guard !names.isEmpty else {
            CommandSupport.printLine("Not signed in.")
            return
        }
        for name in names {
            let result = try await prepared.accounts.logout(name)
            Self.explainRevocation(result)
            for problem in await prepared.storage.removeElsewhere(prepared.accounts.authenticator(for: name).key) {
                CommandSupport.warn("could not remove the tokens from every storage: \(problem.message)")
            }
            CommandSupport.printLine("Signed out \(name)")
        }
    }
}
