import Foundation
import Testing

/// The official MCP Python SDK in the project's virtualenv (scripts/test-server installs it), and
/// the MCP server scripts/mcp-server/server.py builds from it.
public enum MCPSDK {
    /// Whether the SDK is installed; `true` also when the test server is required (a missing SDK
    /// fails then, instead of skipping).
    public static var available: Bool {
        let lib = repositoryRoot.path + "/.venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        let installed = versions.contains {
            FileManager.default.fileExists(atPath: "\(lib)/\($0)/site-packages/mcp/server/mcpserver")
        }
        return installed || ProcessInfo.processInfo.environment["NATIVEAUTH_REQUIRE_TEST_SERVER"] == "1"
    }

    /// Starts scripts/mcp-server/server.py with `arguments`; returns it and its MCP endpoint.
    public static func start(_ arguments: [String] = []) async throws -> (RunningCommand, String) {
        let server = try RunningCommand(
            repositoryRoot.path + "/.venv/bin/python",
            [repositoryRoot.path + "/scripts/mcp-server/server.py"] + arguments)
        let line = try await server.line { $0.hasPrefix("port: ") }
        let port = try #require(Int(line.dropFirst("port: ".count)))
        return (server, "http://127.0.0.1:\(port)/mcp")
    }

    /// A JSON-RPC request.
    public static func call(_ id: Int, _ method: String, _ params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    }
}
