import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Protected resource metadata (RFC 9728): from an API's bare 401 to its authorization server and
/// a retried call, against the in-process sandbox, whose protected resources point to their metadata.
@Suite(.testLogging) struct ProtectedResourceDiscoveryTests {
    func sandbox(bodies: [String: String] = [:]) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        configuration.protectedResourceMetadataBodies = bodies
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func signedIn(_ sandbox: SandboxAuthorizationServer, follows: Bool, store: MemoryTokenStore = MemoryTokenStore())
        async throws -> Authenticator
    {
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: ["openid", "api"])
        configuration.followsResourceMetadata = follows
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        return auth
    }

    @Test func aBare401LeadsToTheResourcesTokenAndARetriedCall() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let auth = try await signedIn(sandbox, follows: true, store: store)
        let tool = sandbox.resourceURL("mcp")
        let (response, body) = try await auth.send(HTTPRequest(method: .get, url: tool))
        #expect(response.status.code == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(sandbox.requestCount(.protectedResourceMetadata) == 1)
        #expect(sandbox.issuedAudiences.last == [sandbox.resourceURL("mcp").absoluteString])
        #expect(await store.load(auth.key)?.resourceTokens.count == 1)
        // Known now: the next call goes with the resource's token at once.
        let again = try await auth.send(HTTPRequest(method: .get, url: tool))
        #expect(again.0.status.code == 200)
        #expect(sandbox.requestCount(.protectedResourceMetadata) == 1)
        #expect(sandbox.requestCount(.protectedResource) == 3, "one refused, two answered")
        await sandbox.stop()
    }

    @Test func withoutConsentInTheConfigurationTheMetadataIsNeverRead() async throws {
        let sandbox = try await sandbox()
        let auth = try await signedIn(sandbox, follows: false)
        let error = try await #require(throws: AuthError.self) {
            try await auth.send(HTTPRequest(method: .get, url: sandbox.resourceURL("mcp")))
        }
        #expect(error.code == .invalidToken)
        #expect(sandbox.requestCount(.protectedResourceMetadata) == 0)
        await sandbox.stop()
    }

    @Test func metadataNamingAnotherIssuerSaysSoAndSendsNothingThere() async throws {
        let real = try await self.sandbox(bodies: [
            "mcp": #"{"resource": "$RESOURCE", "authorization_servers": ["https://other-issuer.example"]}"#
        ])
        let auth = try await signedIn(real, follows: true)
        let error = try await #require(throws: AuthError.self) {
            try await auth.send(HTTPRequest(method: .get, url: real.resourceURL("mcp")))
        }
        #expect(error.message.contains("https://other-issuer.example"), "\(error)")
        #expect(error.hint?.contains("RFC 9728") == true)
        #expect(real.grantCount(.refreshToken) == 0)
        await real.stop()
    }

    @Test func malformedOrMisleadingMetadataIsRefusedAndNothingIsStored() async throws {
        let cases: [(String, AuthError.Code, String)] = [
            ("<html>Gateway</html>", .responseMalformed, "not valid JSON"),
            (#"{"authorization_servers": []}"#, .responseMalformed, "has no resource"),
            (
                #"{"resource": "https://evil.example/resources/mcp", "authorization_servers": ["$ISSUER"]}"#,
                .configurationInvalid, "not for the URL requested"
            ),
            (
                #"{"resource": "$RESOURCE", "authorization_servers": ["http://plain.example"]}"#, .configurationInvalid,
                "plain HTTP"
            ),
            // Review L7: a parent path, the bare origin, another spelling of the URL (RFC 9728 §3.3).
            (
                #"{"resource": "$HOST/resources", "authorization_servers": ["$ISSUER"]}"#, .configurationInvalid,
                "not for the URL requested"
            ),
            (
                #"{"resource": "$HOST", "authorization_servers": ["$ISSUER"]}"#, .configurationInvalid,
                "not for the URL requested"
            ),
            (
                #"{"resource": "$RESOURCE/", "authorization_servers": ["$ISSUER"]}"#, .configurationInvalid,
                "not for the URL requested"
            ),
        ]
        for (body, code, words) in cases {
            let sandbox = try await sandbox(bodies: ["mcp": body])
            let store = MemoryTokenStore()
            let auth = try await signedIn(sandbox, follows: true, store: store)
            let before = await store.load(auth.key)
            let error = try await #require(throws: AuthError.self) {
                try await auth.send(HTTPRequest(method: .get, url: sandbox.resourceURL("mcp")))
            }
            #expect(error.code == code, "\(body): \(error)")
            #expect(error.message.contains(words), "\(body): \(error)")
            #expect(await store.load(auth.key) == before)
            #expect(sandbox.grantCount(.refreshToken) == 0)
            await sandbox.stop()
        }
    }

    /// RFC 9728 §3.3 and MCP's discovery: a document at the origin's well-known URL (no path after
    /// it) is about the origin, so its `resource` is the origin (with or without a slash), which
    /// covers the URL below. The same `resource` in a document at the path's well-known URL, or
    /// at the URL a 401 names, is about another resource than the one asked, and refused.
    @Test func aDocumentAtTheOriginsWellKnownURLIsTheOrigins() async throws {
        struct Documents: HTTPTransport {
            let bodies: [String: String]
            func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
                guard let found = request.url.flatMap({ bodies[$0.absoluteString] }) else {
                    return (HTTPResponse(status: .notFound), Data())
                }
                return (HTTPResponse(status: .ok), Data(found.utf8))
            }
        }
        let origin = "http://127.0.0.1:9"
        let url = try #require(URL(string: origin + "/mcp"))
        let unauthorized = HTTPResponse(status: .unauthorized)
        for resource in [origin, origin + "/"] {
            let document = #"{"resource": "\#(resource)", "authorization_servers": ["\#(origin)"]}"#
            let atOrigin = Documents(bodies: [origin + "/.well-known/oauth-protected-resource": document])
            let metadata = try await ProtectedResourceMetadata.discover(
                for: url, response: unauthorized, transport: atOrigin)
            #expect(metadata.resource.absoluteString == resource)
            #expect(ProtectedResourceMetadata.covers(metadata.resource, url))

            let atPath = Documents(bodies: [origin + "/.well-known/oauth-protected-resource/mcp": document])
            let refused = await #expect(throws: AuthError.self) {
                try await ProtectedResourceMetadata.discover(for: url, response: unauthorized, transport: atPath)
            }
            #expect(refused?.message.contains("not for the URL requested") == true, "\(String(describing: refused))")

            var pointing = HTTPResponse(status: .unauthorized)
            pointing.headerFields[.wwwAuthenticate] =
                #"Bearer resource_metadata="\#(origin)/.well-known/oauth-protected-resource""#
            let named = await #expect(throws: AuthError.self) {
                try await ProtectedResourceMetadata.discover(for: url, response: pointing, transport: atOrigin)
            }
            #expect(named?.message.contains("not for the URL requested") == true, "\(String(describing: named))")
        }
    }

    @Test func theWellKnownURLsAndWhatAResourceCovers() throws {
        let api = try #require(URL(string: "https://api.example.com/v1/mcp?x=1"))
        #expect(
            ProtectedResourceMetadata.wellKnownURL(for: api)?.absoluteString
                == "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp")
        #expect(
            ProtectedResourceMetadata.candidateURLs(for: api, challenge: nil).map(\.absoluteString) == [
                "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://api.example.com/.well-known/oauth-protected-resource",
            ])
        let pointed = BearerChallenge(headerValue: #"Bearer resource_metadata="http://evil.example/m""#)
        #expect(
            ProtectedResourceMetadata.candidateURLs(for: api, challenge: pointed).count == 2,
            "a plain-HTTP pointer is not followed")
        // On loopback, a pointer to another port is a request to another local service (review I7).
        let local = try #require(URL(string: "http://127.0.0.1:8080/mcp"))
        let elsewhere = BearerChallenge(headerValue: #"Bearer resource_metadata="http://127.0.0.1:6379/x""#)
        #expect(
            ProtectedResourceMetadata.candidateURLs(for: local, challenge: elsewhere).map(\.absoluteString) == [
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource",
            ])
        let own = BearerChallenge(headerValue: #"Bearer resource_metadata="http://127.0.0.1:8080/meta""#)
        #expect(
            ProtectedResourceMetadata.candidateURLs(for: local, challenge: own).map(\.absoluteString) == [
                "http://127.0.0.1:8080/meta"
            ])
        let secure = BearerChallenge(headerValue: #"Bearer resource_metadata="https://meta.example.com/m""#)
        #expect(ProtectedResourceMetadata.candidateURLs(for: api, challenge: secure).count == 1)
        // A metadata document's resource is the URL asked, query left out (RFC 9728 §3.3; review L7).
        let mcp = try #require(URL(string: "https://api.example.com/v1/mcp"))
        #expect(ProtectedResourceMetadata.identifies(mcp, api))
        for other in [
            "https://api.example.com/v1", "https://api.example.com", "https://api.example.com/v1/mcp/",
            "https://user@api.example.com/v1/mcp", "https://api.example.com:443/v1/mcp",
            "http://api.example.com/v1/mcp",
        ] {
            #expect(!ProtectedResourceMetadata.identifies(try #require(URL(string: other)), api), "\(other)")
        }
        let base = try #require(URL(string: "https://api.example.com/v1"))
        #expect(ProtectedResourceMetadata.covers(base, api))
        #expect(!ProtectedResourceMetadata.covers(base, try #require(URL(string: "https://api.example.com/v10"))))
        #expect(!ProtectedResourceMetadata.covers(base, try #require(URL(string: "https://api.example.com:8443/v1"))))
        #expect(!ProtectedResourceMetadata.covers(base, try #require(URL(string: "http://api.example.com/v1"))))
    }
}
