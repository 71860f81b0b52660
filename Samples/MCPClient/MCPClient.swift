// An MCP client built on the official MCP Swift SDK, authorized by NativeAuthMCP: give it an MCP
// server's URL, and it signs in where the server says (once; later runs reuse the sign-in), lists
// the server's tools, and calls one.
//
//     mcp-client-sample URL [--store DIR] [--call TOOL --text TEXT]
//
// Tokens, the client's registration and what was learned about the server are kept in DIR
// (default: the file token store's directory).

import Foundation
import MCP
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthMCP

@main
struct MCPClientSample {
    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        guard let first = arguments.first, let endpoint = URL(string: first) else {
            throw AuthError(
                .configurationInvalid, "usage: mcp-client-sample URL [--store DIR] [--call TOOL --text TEXT]")
        }
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        let http = AsyncHTTPClientTransport()
        let authorizer = NativeAuthAuthorizer(
            options: .init(clientName: "mcp-client-sample", transport: http, directory: value("--store")))
        // Not streaming: each request's answer is read whole (Linux's URLSession has no byte stream).
        let transport = HTTPClientTransport(endpoint: endpoint, streaming: false, authorizer: authorizer)
        let client = Client(name: "mcp-client-sample", version: NativeAuthVersion.current)
        let server = try await client.connect(transport: transport)
        print("server: \(server.serverInfo.name)")
        let (tools, _) = try await client.listTools()
        for tool in tools { print("tool: \(tool.name)") }
        if let name = value("--call") {
            let (content, isError) = try await client.callTool(
                name: name, arguments: ["text": .string(value("--text") ?? "")])
            for case .text(let text, _, _) in content { print("result: \(text)") }
            if isError == true { throw AuthError(.requestFailed, "the tool \(name) answered with an error") }
        }
        await client.disconnect()
    }
}
