// With the MCP trait off (the sanitizer builds), this module is empty.
#if MCP
    import Foundation
    import HTTPTypes
    import NativeAuth
    import NativeAuthAsyncHTTPClient
    import NativeAuthPresenters
    import NativeAuthTesting
    import TestSupport
    import Testing

    /// NativeAuth's resource-first entry (`ResourceClient`), with nothing but an MCP server's URL,
    /// against the server the official MCP Python SDK builds (scripts/mcp-server/server.py): its 401,
    /// its metadata, its authorization server (exact redirect URIs, only registered scopes).
    @Suite(.testLogging, .enabled(if: MCPSDK.available, "needs the MCP Python SDK (mcp) in .venv"))
    struct ResourceClientTests {
        let transport = AsyncHTTPClientTransport(configuration: .init(proxy: .none))

        /// A client keeping its tokens and records under `directory`, as each process of an app would.
        func client(_ directory: TemporaryDirectory, stepsUp: Bool = true) -> ResourceClient {
            var options = ResourceClient.Options(
                clientName: "resource-client-tests", transport: transport,
                store: FileTokenStore(directory: directory.path + "/store"),
                knownResources: FileKnownResourceStore(directory: directory.path + "/store"))
            options.stepsUp = { _ in stepsUp }
            let opener = RedirectFollowingBrowser(transport: transport)
            return ResourceClient(options: options) { signIn in
                LoopbackPresenter(
                    configuration: .init(port: signIn.redirectPort ?? 0, timeout: .seconds(60), opener: opener))
            }
        }

        func post(_ url: URL, _ body: String) -> (HTTPRequest, Data) {
            var request = HTTPRequest(method: .post, url: url)
            request.headerFields[.accept] = "application/json, text/event-stream"
            request.headerFields[.contentType] = "application/json"
            return (request, Data(body.utf8))
        }

        @Test func fromTheURLAloneToAToolThatNeedsAScopeTheRegistrationLacks() async throws {
            let (server, endpoint) = try await MCPSDK.start(["--tool-scope", "admin_echo=mcp:admin"])
            let url = try #require(URL(string: endpoint))
            let directory = try TemporaryDirectory()

            let initialize = MCPSDK.call(
                1, "initialize",
                #"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tests","version":"1"}}"#)
            let (request, body) = post(url, initialize)
            let (first, firstBody) = try await client(directory).send(request, body: body)
            #expect(first.status.code == 200, "\(String(decoding: firstBody, as: UTF8.self))")
            #expect(String(decoding: firstBody, as: UTF8.self).contains("nativeauth-test"))

            // Another client on the same store (another process): the URL alone, no 401 to follow.
            let later = client(directory)
            let (echo, echoBody) = post(
                url, MCPSDK.call(2, "tools/call", #"{"name":"echo","arguments":{"text":"hi"}}"#))
            let (second, secondBody) = try await later.send(echo, body: echoBody)
            #expect(second.status.code == 200 && String(decoding: secondBody, as: UTF8.self).contains("hi"))

            // A client that may not step up: the refusal stands, nothing more is asked.
            let (admin, adminBody) = post(
                url, MCPSDK.call(3, "tools/call", #"{"name":"admin_echo","arguments":{"text":"wider"}}"#))
            let refused = await #expect(throws: AuthError.self) {
                try await client(directory, stepsUp: false).send(admin, body: adminBody)
            }
            #expect(refused?.code == .insufficientScope && refused?.missingScopes == ["mcp:tools", "mcp:admin"])

            // One that may: the client registers again for the union, signs in once more, and the
            // call goes through; the records now name both scopes.
            let (third, thirdBody) = try await later.send(admin, body: adminBody)
            #expect(third.status.code == 200 && String(decoding: thirdBody, as: UTF8.self).contains("wider"))
            let records = try FileKnownResourceStore(directory: directory.path + "/store").knownResources()
            #expect(records.map(\.scopes) == [["mcp:tools", "mcp:admin"]], "\(records)")

            // A third process: the wider registration and sign-in as they are.
            let (fourth, _) = try await client(directory).send(admin, body: adminBody)
            #expect(fourth.status.code == 200)

            server.stop()
            let log = await server.finish().stderr.split(separator: "\n")
            let registrations = log.filter { $0.hasPrefix("register ") }
            #expect(registrations.count == 2, "\(log)")
            #expect(registrations.first?.hasSuffix("scope=mcp:tools") == true, "\(log)")
            #expect(registrations.last?.hasSuffix("scope=mcp:tools mcp:admin") == true, "\(log)")
            let authorizations = log.filter { $0.hasPrefix("authorize ") }
            #expect(authorizations.count == 2, "the first sign-in and one step-up: \(log)")
            #expect(authorizations.first?.contains("scope=mcp:tools resource=\(endpoint)") == true, "\(log)")
            #expect(authorizations.last?.contains("scope=mcp:tools mcp:admin resource=\(endpoint)") == true, "\(log)")
            #expect(log.filter { $0 == "refuse admin_echo" }.count == 2, "\(log)")
            #expect(log.filter { $0 == "tool admin_echo" }.count == 2, "\(log)")
        }
    }
#endif
