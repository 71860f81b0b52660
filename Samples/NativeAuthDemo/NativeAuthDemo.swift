// nativeauth-demo: the whole life of a sign-in against NativeAuth's sandbox authorization server
// (`nativeauth-demo`, the default `demo` command), and the sandbox on its own
// (`nativeauth-demo sandbox`). An executable of its own, so that the `nativeauth` CLI people ship
// does not link the sandbox server (NativeAuthTesting).
import ArgumentParser
import NativeAuth
import NativeAuthCommands

@main
struct NativeAuthDemo: AsyncParsableCommand, NativeAuthTool {
    static let configuration = CommandConfiguration(
        commandName: "nativeauth-demo",
        abstract: "Try NativeAuth against its sandbox authorization server: no account, no network.",
        subcommands: [DemoCommand.self, SandboxCommand.self],
        defaultSubcommand: DemoCommand.self
    )

    static let toolName = "nativeauth-demo"
    static let defaultProvider = GenericOIDCProvider.id

    static let providers: [any AuthProvider.Type] = [GenericOIDCProvider.self]
}
