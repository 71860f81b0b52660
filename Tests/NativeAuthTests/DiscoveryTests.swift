import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct DiscoveryTests {
    /// The transport `load` sends through: the in-memory server's, within `withServer`.
    @TaskLocal static var transport: any HTTPTransport = URLSessionTransport()

    /// Serves `respond` for every request, in memory, and records the paths asked for.
    private func withServer(
        respond: @escaping @Sendable (String, String) -> TestResponse,
        test body: (TestHTTPServer, RequestLog, URL) async throws -> Void
    ) async throws {
        let log = RequestLog()
        let box = IssuerBox()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            log.record(request.uri)
            return respond(request.uri, box.value)
        }
        box.value = server.url("/o").absoluteString
        do {
            try await Self.$transport.withValue(server.transport) { try await body(server, log, server.url("/o")) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func load(
        _ issuer: URL, overrides: EndpointOverrides = EndpointOverrides(), order: MetadataOrder = .openID
    ) async throws -> ProviderMetadata {
        var configuration = ProviderConfiguration(issuer: issuer, clientID: "test-client")
        configuration.metadataOrder = order
        let provider = try GenericOIDCProvider(configuration: configuration)
        let client = ExchangeClient.forTests(provider, transport: Self.transport)
        return try await Discovery.load(issuer: issuer, overrides: overrides, client: client)
    }

    @Test func readsAnOIDCDocument() async throws {
        try await withServer(
            respond: { _, issuer in
                .json(
                    discoveryDocument(
                        issuer: issuer, extra: #""authorization_response_iss_parameter_supported": "true""#))
            },
            test: { _, log, issuer in
                let metadata = try await load(issuer)
                #expect(metadata.issuer == issuer.absoluteString)
                #expect(metadata.tokenEndpoint.absoluteString == issuer.absoluteString + "/token/")
                #expect(metadata.authorizationResponseIssParameterSupported)
                #expect(log.paths == ["/o/.well-known/openid-configuration"])
            })
    }

    @Test func fallsBackToRFC8414() async throws {
        try await withServer(
            respond: { path, issuer in
                path == "/.well-known/oauth-authorization-server/o"
                    ? .json(discoveryDocument(issuer: issuer, omitting: ["userinfo_endpoint"]))
                    : .text("not here", status: 404)
            },
            test: { _, log, issuer in
                let metadata = try await load(issuer)
                #expect(metadata.userInfoEndpoint == nil)
                #expect(
                    log.paths == ["/o/.well-known/openid-configuration", "/.well-known/oauth-authorization-server/o"])
            })
    }

    /// MCP's order (authorization spec 2025-11-25, "Authorization Server Metadata Discovery"):
    /// RFC 8414 with the path inserted, OpenID with the path inserted, OpenID with it appended; for
    /// an issuer without a path, RFC 8414 then OpenID. The OpenID-first order is the default.
    @Test func theMCPOrderAsksForRFC8414FirstAndInsertsThePathIntoOpenIDsToo() throws {
        let withPath = try #require(URL(string: "https://auth.example.com/tenant1"))
        let root = try #require(URL(string: "https://auth.example.com"))
        #expect(
            Discovery.documentURLs(for: withPath, order: .oauth).map(\.absoluteString) == [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ])
        #expect(
            Discovery.documentURLs(for: root, order: .oauth).map(\.absoluteString) == [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ])
        #expect(
            Discovery.documentURLs(for: withPath).map(\.absoluteString) == [
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/tenant1/.well-known/oauth-authorization-server",
            ])
    }

    /// A server that publishes both documents: MCP's order takes RFC 8414's, and falls through to
    /// OpenID's with the path inserted when there is none.
    @Test func theMCPOrderTakesTheRFC8414DocumentWhenBothArePublished() async throws {
        try await withServer(
            respond: { path, issuer in
                switch path {
                case "/.well-known/oauth-authorization-server/o":
                    .json(discoveryDocument(issuer: issuer, omitting: ["userinfo_endpoint"]))
                case "/o/.well-known/openid-configuration": .json(discoveryDocument(issuer: issuer))
                default: .text("not here", status: 404)
                }
            },
            test: { _, log, issuer in
                let mcp = try await load(issuer, order: .oauth)
                #expect(mcp.userInfoEndpoint == nil)
                #expect(log.paths == ["/.well-known/oauth-authorization-server/o"])
                let openID = try await load(issuer)
                #expect(openID.userInfoEndpoint != nil)
            })
        try await withServer(
            respond: { path, issuer in
                path == "/.well-known/openid-configuration/o"
                    ? .json(discoveryDocument(issuer: issuer)) : .text("not here", status: 404)
            },
            test: { _, log, issuer in
                let metadata = try await load(issuer, order: .oauth)
                #expect(metadata.userInfoEndpoint != nil)
                #expect(
                    log.paths == ["/.well-known/oauth-authorization-server/o", "/.well-known/openid-configuration/o"])
            })
    }

    @Test func anHTMLPageIsNamed() async throws {
        try await withServer(
            respond: { _, _ in .text("<html>proxy</html>", contentType: "text/html") },
            test: { _, log, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.code == .metadataUnavailable)
                #expect(error?.message.contains("text/html, not JSON") == true)
                #expect(error?.message.contains("/o/.well-known/openid-configuration") == true)
                #expect(log.paths.count == 3, "every document location is tried")
            })
    }

    @Test func a404IsNamed() async throws {
        try await withServer(
            respond: { _, _ in .text("nope", status: 404) },
            test: { _, _, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.code == .metadataUnavailable)
                #expect(error?.message.contains("HTTP 404") == true)
                #expect(error?.isRetryable == false)
            })
    }

    @Test func invalidJSONIsNamedWithItsPosition() async throws {
        try await withServer(
            respond: { _, _ in .json(#"{"issuer": "x",,}"#) },
            test: { _, _, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.code == .metadataUnavailable)
                #expect(error?.message.contains("invalid JSON") == true)
                #expect(error?.message.contains("line 1") == true)
            })
    }

    @Test(arguments: ["authorization_endpoint", "token_endpoint"])
    func aMissingEndpointIsNamed(field: String) async throws {
        try await withServer(
            respond: { _, issuer in .json(discoveryDocument(issuer: issuer, omitting: [field])) },
            test: { _, _, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.code == .metadataUnavailable)
                #expect(error?.message.contains("\"\(field)\" is missing") == true)
            })
    }

    @Test func anOverrideFillsInAMissingEndpoint() async throws {
        try await withServer(
            respond: { _, issuer in .json(discoveryDocument(issuer: issuer, omitting: ["token_endpoint"])) },
            test: { server, _, issuer in
                let token = server.url("/elsewhere/token")
                let device = server.url("/device")
                let metadata = try await load(
                    issuer, overrides: EndpointOverrides(token: token, deviceAuthorization: device))
                #expect(metadata.tokenEndpoint == token)
                #expect(metadata.deviceAuthorizationEndpoint == device)
            })
    }

    @Test func anIssuerMismatchIsRefusedWithoutFallback() async throws {
        try await withServer(
            respond: { _, issuer in .json(discoveryDocument(issuer: issuer + "/other")) },
            test: { _, log, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.code == .configurationInvalid)
                #expect(error?.message.contains("must be equal exactly") == true)
                #expect(log.paths.count == 1)
            })
    }

    @Test func aTrailingSlashIsAMismatch() async throws {
        try await withServer(
            respond: { _, issuer in .json(discoveryDocument(issuer: issuer)) },
            test: { _, log, issuer in
                let slashed = try #require(URL(string: issuer.absoluteString + "/"))
                let error = await #expect(throws: AuthError.self) { try await load(slashed) }
                #expect(error?.code == .configurationInvalid)
                #expect(log.paths == ["/o/.well-known/openid-configuration"])
            })
    }

    @Test func plainHTTPEndpointsElsewhereAreRefused() async throws {
        try await withServer(
            respond: { _, issuer in
                .json(
                    #"{"issuer": "\#(issuer)", "authorization_endpoint": "\#(issuer)/a", "token_endpoint": "http://idp.example.com/token"}"#
                )
            },
            test: { _, _, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.message.contains("\"token_endpoint\" must be an https URL") == true)
            })
    }

    @Test func aProviderWithoutS256IsRefused() async throws {
        try await withServer(
            respond: { _, issuer in
                .json(discoveryDocument(issuer: issuer, extra: #""code_challenge_methods_supported": ["plain"]"#))
            },
            test: { _, _, issuer in
                let error = await #expect(throws: AuthError.self) { try await load(issuer) }
                #expect(error?.message.contains("S256") == true)
            })
    }

    @Test func aClosedServerIsANetworkErrorAtOnce() async throws {
        let server = try await TestHTTPServer.start { _ in .json("{}") }
        let issuer = server.url("/o")
        await server.stop()
        let error = await #expect(throws: AuthError.self) { try await load(issuer) }
        #expect(error?.code == .network)
        #expect(error?.operation == .discovery)
    }

    @Test func concurrentCallersShareOneRequestAndTheResultIsKept() async throws {
        let log = RequestLog()
        let box = IssuerBox()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            log.record(request.uri)
            var response = TestResponse.json(discoveryDocument(issuer: box.value))
            response.delay = .milliseconds(300)
            return response
        }
        box.value = server.url("/o").absoluteString
        let provider = try GenericOIDCProvider(configuration: testConfiguration(issuer: server.url("/o")))
        let authenticator = Authenticator(provider: provider, store: MemoryTokenStore(), transport: server.transport)
        let results = try await withThrowingTaskGroup(of: URL.self) { group in
            for _ in 0..<20 { group.addTask { try await authenticator.metadata().tokenEndpoint } }
            return try await group.reduce(into: [URL]()) { $0.append($1) }
        }
        _ = try await authenticator.metadata()
        await server.stop()
        #expect(results.count == 20)
        #expect(Set(results).count == 1)
        #expect(log.paths.count == 1)
    }

    @Test func aFailureIsNotKept() async throws {
        let log = RequestLog()
        let box = IssuerBox()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            log.record(request.uri)
            return log.paths.count <= 3 ? .text("busy", status: 503) : .json(discoveryDocument(issuer: box.value))
        }
        box.value = server.url("/o").absoluteString
        let provider = try GenericOIDCProvider(configuration: testConfiguration(issuer: server.url("/o")))
        let authenticator = Authenticator(provider: provider, store: MemoryTokenStore(), transport: server.transport)
        let error = await #expect(throws: AuthError.self) { try await authenticator.metadata() }
        #expect(error?.isRetryable == true)
        let metadata = try await authenticator.metadata()
        await server.stop()
        #expect(metadata.issuer == box.value)
    }
}

/// The issuer URL, known only once the server has its port.
final class IssuerBox: Sendable {
    private let storage = NIOLockedValueBox("")
    var value: String {
        get { storage.withLockedValue { $0 } }
        set { storage.withLockedValue { $0 = newValue } }
    }
}
