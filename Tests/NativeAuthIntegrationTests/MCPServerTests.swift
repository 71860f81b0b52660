import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

/// An MCP server built from the official MCP Python SDK (scripts/mcp-server: the SDK's own server,
/// authorization server routes and protected resource metadata; only its in-memory glue is ours),
/// and the CLI given nothing but the server's URL: the 401, the metadata, the SDK's authorization
/// server (which matches redirect URIs exactly and registers only the scopes it lists), a
/// registration, one sign-in, the JSON-RPC calls.
@Suite(.testLogging, .enabled(if: MCPSDK.available, "needs the MCP Python SDK (mcp) in .venv"))
struct MCPServerTests {
    let cli = cliPath("oidc-login")
    let accept = ["-H", "Accept: application/json, text/event-stream"]

    /// The SDK's server, and its MCP endpoint.
    func start() async throws -> (RunningCommand, String) {
        let server = try RunningCommand(CloudTools.python, [repositoryRoot.path + "/scripts/mcp-server/server.py"])
        let line = try await server.line { $0.hasPrefix("port: ") }
        let port = try #require(Int(line.dropFirst("port: ".count)))
        return (server, "http://127.0.0.1:\(port)/mcp")
    }

    static func call(_ id: Int, _ method: String, _ params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    }

    @Test func fromTheServersURLAloneToAuthorizedCallsWithOneSignInAndOneRefresh() async throws {
        let (server, url) = try await start()
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let initialize = Self.call(
            1, "initialize",
            #"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oidc-login","version":"1"}}"#)
        let first = try await run(
            cli, ["api", "--discover", url, "-X", "POST"] + accept + ["-d", initialize] + store,
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""serverInfo""#) && first.stdout.contains("nativeauth-test"), "\(first.stdout)")

        // Another process, the URL alone: the stored registration and sign-in, no browser.
        let echo = Self.call(2, "tools/call", #"{"name":"echo","arguments":{"text":"hello from oidc-login"}}"#)
        let second = try await run(cli, ["api", "--discover", url, "-X", "POST"] + accept + ["-d", echo] + store)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("hello from oidc-login"), "\(second.stdout)")

        // The access token expired: 8 processes at once, one refresh.
        let tokens = FileTokenStore(directory: directory.path + "/store")
        let key = try #require(try tokens.keys().first { $0.clientID != ClientRegistration.storeClientID })
        var held = try #require(try tokens.load(key))
        held.expiresAt = Date(timeIntervalSinceNow: -30)
        try tokens.save(held, for: key)
        let list = Self.call(3, "tools/list", "{}")
        let cli = cli
        let arguments = ["api", "--discover", url, "-X", "POST"] + accept + ["-d", list] + store
        let parallel = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<8 { group.addTask { try await run(cli, arguments) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(parallel.allSatisfy { $0.status == 0 && $0.stdout.contains(#""echo""#) }, "\(parallel.map(\.stderr))")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        let registrations = log.filter { $0.hasPrefix("register ") }
        #expect(registrations.count == 1, "\(log)")
        #expect(registrations.first?.contains("redirect_uris=http://127.0.0.1:") == true, "an exact port: \(log)")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "one sign-in: \(log)")
        #expect(log.first { $0.hasPrefix("authorize ") }?.contains("scope=mcp:tools resource=\(url)") == true, "\(log)")
        #expect(log.filter { $0.hasPrefix("token refresh_token ") }.count == 1, "one refresh for 8 processes: \(log)")
        #expect(log.filter { $0 == "tool echo" }.count == 1, "\(log)")
    }
}

/// Whether the MCP Python SDK is in the project's virtualenv (scripts/test-server installs it).
enum MCPSDK {
    static var available: Bool {
        let lib = repositoryRoot.path + "/.venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        let installed = versions.contains {
            FileManager.default.fileExists(atPath: "\(lib)/\($0)/site-packages/mcp/server/mcpserver")
        }
        return installed || CloudTools.isRequired
    }
}
