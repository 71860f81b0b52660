import ArgumentParser
import Foundation
import NativeAuth
import NativeAuthCommands
import NativeAuthTesting

/// `nativeauth-demo sandbox`: the sandbox authorization server on its own, until Ctrl-C, for trying a
/// client by hand or testing one written in another language.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Run the sandbox authorization server on 127.0.0.1 until Ctrl-C.",
        discussion: """
            Prints `issuer: URL` and `client_id: sandbox-client` on standard output, then serves \
            discovery at ISSUER/.well-known/openid-configuration until it gets SIGINT or SIGTERM. The \
            client is public (PKCE S256, loopback redirect URIs /callback on any port). Users: alice \
            and bob. Nothing is stored: every token dies with the process.

            \(CommandSupport.exitStatusHelp)
            """
    )

    @Option(name: .long, help: "The port on 127.0.0.1 (default: a free one).")
    var port = 0

    @Flag(name: .customLong("auto-approve"), help: "Approve every request without the approval page.")
    var autoApprove = false

    @Option(name: .customLong("token-lifetime"), help: "The access token's lifetime in seconds.")
    var tokenLifetime = 3600

    @OptionGroup var signing: SigningOption

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard tokenLifetime > 0 else { throw ValidationError("--token-lifetime must be positive") }
    }

    func run() async throws {
        let configuration = SandboxAuthorizationServer.Configuration(
            autoApprove: autoApprove,
            accessTokenLifetime: .seconds(tokenLifetime),
            signingAlgorithm: signing.algorithm,
            port: port
        )
        try await CommandSupport.run(NativeAuthDemo.self) {
            let sandbox: SandboxAuthorizationServer
            do {
                sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
            } catch {
                throw AuthError(
                    .configurationInvalid, "cannot listen on 127.0.0.1:\(port)",
                    hint: "choose another --port, or leave it out for a free one", underlying: error)
            }
            CommandSupport.printLine("issuer: \(sandbox.issuer.absoluteString)")
            CommandSupport.printLine("client_id: \(SandboxAuthorizationServer.Client.defaultID)")
            do {
                // Serve until a signal cancels the wait.
                try await CommandSupport.cancellingOnSignals {
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
            } catch {
                await sandbox.stop()
                if error is CancellationError || (error as? AuthError)?.code == .loginCancelled { return }
                throw error
            }
        }
    }
}

/// `--signing-algorithm es256|rs256`, for the commands that start a sandbox.
struct SigningOption: ParsableArguments {
    @Option(name: .customLong("signing-algorithm"), help: "How ID tokens are signed: es256 or rs256.")
    var name = "es256"

    func validate() throws {
        guard ["es256", "rs256"].contains(name.lowercased()) else {
            throw ValidationError("--signing-algorithm must be es256 or rs256")
        }
    }

    var algorithm: SandboxAuthorizationServer.SigningAlgorithm { name.lowercased() == "rs256" ? .rs256 : .es256 }
}
