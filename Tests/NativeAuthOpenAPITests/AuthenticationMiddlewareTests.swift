import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthOpenAPI
import NativeAuthTesting
import NotesAPIFixture
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import TestSupport
import Testing

/// `AuthenticationMiddleware` in the client swift-openapi-generator made of
/// Samples/NotesClient/openapi.yaml, over swift-openapi-async-http-client's transport, against the
/// sandbox on 127.0.0.1, whose protected resource checks each DPoP proof as RFC 9449 §4.3 says
/// (OpenAPIClientTests runs it against django-oauth-toolkit and a resource server of its own).
@Suite(.testLogging) struct AuthenticationMiddlewareTests {
    /// What an operation's request carried, seen after the middleware (the next one in the stack).
    struct Sent: Sendable {
        var method: String
        var url: URL
        var authorization: String?
        var proof: String?
        var body: Data?
    }

    /// A middleware after NativeAuth's that records each attempt.
    struct Recorder: ClientMiddleware {
        let sent = Shared<[Sent]>([])

        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            let url = try #require(URL(string: baseURL.absoluteString + (request.path ?? "")))
            var bytes: Data?
            if let body, body.iterationBehavior == .multiple { bytes = try await Data(collecting: body, upTo: 1 << 20) }
            let entry = Sent(
                method: request.method.rawValue, url: url, authorization: request.headerFields[.authorization],
                proof: request.headerFields[.dpop], body: bytes)
            sent.update { $0.append(entry) }
            return try await next(request, body, baseURL)
        }
    }

    /// The sandbox with DPoP and a protected resource `notes`, and an authenticator signed in for it.
    func signedIn(dpop: Bool = true) async throws -> (SandboxAuthorizationServer, Authenticator, URL) {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        if dpop { configuration.dpopSigningAlgorithms = ["ES256"] }
        configuration.protectedResources = ["notes"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let api = sandbox.resourceURL("notes")
        var provider = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile", "offline_access"])
        provider.resources = [api]
        let authenticator = Authenticator(
            provider: try GenericOIDCProvider(configuration: provider), store: MemoryTokenStore(),
            transport: sandbox.transport)
        _ = try await authenticator.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        return (sandbox, authenticator, api)
    }

    /// The claims of a compact JWS.
    func claims(_ jws: String) throws -> JSONObject {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let bytes = try #require(Base64URL.decode(parts[1]))
        return try #require(try JSONValue.parse(bytes).objectValue)
    }

    /// 100 operations at once, GETs and POSTs, after the access token expired: one refresh, and
    /// each request's DPoP proof names its own method and URL (the sandbox refuses any other).
    @Test func aHundredOperationsAfterExpiryShareOneRefreshAndEachProofIsItsOwn() async throws {
        let (sandbox, authenticator, api) = try await signedIn()
        defer { Task { await sandbox.stop() } }
        let recorder = Recorder()
        let client = Client(
            serverURL: api, transport: AsyncHTTPClientTransport(),
            middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api), recorder])
        try await authenticator.expireAccessToken()
        sandbox.resetCounts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        _ = try await client.getProfile().ok.body.json
                    } else {
                        // The sandbox's resource answers 200 to any method: undocumented here, and a success.
                        guard
                            case .undocumented(200, _) = try await client.createNote(
                                body: .json(.init(text: "n\(index)")))
                        else { throw AuthError(.requestFailed, "the note was refused") }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(sandbox.requestCount(.token) == 1)
        let sent = recorder.sent.value
        #expect(sent.count == 100, "no operation was sent twice")
        for request in sent {
            #expect(request.authorization?.hasPrefix("DPoP ") == true)
            let proof = try claims(try #require(request.proof))
            #expect(try proof.string("htm") == request.method)
            #expect(try proof.string("htu") == request.url.absoluteString)
        }
        #expect(Set(sent.compactMap(\.proof)).count == 100, "a proof of its own for each")
        #expect(Set(sent.map(\.url.path)) == [api.path + "/profile", api.path + "/notes"])
    }

    /// A POST whose token the server revoked: one refresh, and the same body again, whether the
    /// client can iterate the body again or it is a one-pass stream small enough to keep; a larger
    /// one-pass stream is sent once, and the error says it can be sent again.
    @Test func aRefusedPostGoesAgainWithItsBodyOrSaysWhyNot() async throws {
        let (sandbox, authenticator, api) = try await signedIn(dpop: false)
        defer { Task { await sandbox.stop() } }
        let recorder = Recorder()
        let client = Client(
            serverURL: api, transport: AsyncHTTPClientTransport(),
            middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api), recorder])
        sandbox.revokeAccessTokens()
        sandbox.resetCounts()
        guard case .undocumented(200, _) = try await client.createNote(body: .json(.init(text: "twice"))) else {
            Issue.record("the note was refused")
            return
        }
        #expect(sandbox.requestCount(.token) == 1)
        let sent = recorder.sent.value
        #expect(sent.count == 2)
        #expect(sent.count == 2 && sent[0].body == sent[1].body && sent[0].body?.isEmpty == false)

        // One-pass streams, through the middleware alone.
        let transport = AsyncHTTPClientTransport()
        func post(_ text: String, limit: Int) async throws -> HTTPResponse {
            let (stream, continuation) = AsyncStream.makeStream(of: HTTPBody.ByteChunk.self)
            continuation.yield(ArraySlice(text.utf8))
            continuation.finish()
            var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/notes")
            request.headerFields[.contentType] = "application/json"
            let middleware = AuthenticationMiddleware(
                authenticator: authenticator, api: api, replayableBodyLimit: limit)
            let (response, _) = try await middleware.intercept(
                request, body: HTTPBody(stream, length: .known(Int64(text.utf8.count)), iterationBehavior: .single),
                baseURL: api, operationID: "createNote"
            ) { request, body, baseURL in
                try await transport.send(request, body: body, baseURL: baseURL, operationID: "createNote")
            }
            return response
        }
        sandbox.revokeAccessTokens()
        #expect(try await post(#"{"text":"kept"}"#, limit: 1024).status == .ok)
        sandbox.revokeAccessTokens()
        let error = await #expect(throws: AuthError.self) { _ = try await post(#"{"text":"streamed"}"#, limit: 4) }
        #expect(error?.code == .invalidToken)
        #expect(error?.message.contains("a stream that can be read once; it was not sent again") == true)
        #expect(error?.isRetryable == true)
        // And so it can: the new token is there.
        #expect(try await post(#"{"text":"again"}"#, limit: 4).status == .ok)
    }

    /// No token goes to a server the middleware's API does not cover: the operation is not sent.
    @Test func aTokenGoesOnlyUnderItsAPI() async throws {
        let (sandbox, authenticator, api) = try await signedIn()
        defer { Task { await sandbox.stop() } }
        let recorder = Recorder()
        let elsewhere = sandbox.resourceURL("other")
        let client = Client(
            serverURL: elsewhere, transport: AsyncHTTPClientTransport(),
            middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api), recorder])
        let error = await #expect(throws: ClientError.self) { _ = try await client.getProfile() }
        let refusal = try #require(error?.underlyingError as? AuthError)
        #expect(refusal.code == .configurationInvalid)
        #expect(refusal.message.contains("which is not under \(api.absoluteString)"), "\(refusal.message)")
        #expect(recorder.sent.value.isEmpty)

        // An operation of its own resource goes under that one only.
        let mapped = Client(
            serverURL: api, transport: AsyncHTTPClientTransport(),
            middlewares: [
                AuthenticationMiddleware(
                    authenticator: authenticator, api: api, operations: ["getProfile": .init(resource: elsewhere)]),
                recorder,
            ])
        await #expect(throws: ClientError.self) { _ = try await mapped.getProfile() }
        #expect(recorder.sent.value.isEmpty)
    }

    /// A 403 that is not a scope challenge, and a 401 that a new token does not mend, are the
    /// operation's and the authenticator's to say: the 403 comes back as it is, sent once; the 401
    /// ends in `invalid_token` after one retry.
    @Test func a403ThatIsNoScopeChallengeComesBackAsItIs() async throws {
        let (sandbox, authenticator, _) = try await signedIn(dpop: false)
        defer { Task { await sandbox.stop() } }
        let forbidden = Shared(0)
        let server = try await TestHTTPServer.start { request in
            forbidden.update { $0 += 1 }
            return TestResponse(status: request.path == "/notes" ? 403 : 401, body: Data("no".utf8))
        }
        defer { Task { await server.stop() } }
        let api = server.url("")
        let client = Client(
            serverURL: api, transport: AsyncHTTPClientTransport(),
            middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api)])
        guard case .forbidden = try await client.createNote(body: .json(.init(text: "no"))) else {
            Issue.record("the 403 did not come back")
            return
        }
        #expect(forbidden.value == 1)
        sandbox.resetCounts()
        let error = await #expect(throws: ClientError.self) { _ = try await client.getProfile() }
        #expect((error?.underlyingError as? AuthError)?.code == .invalidToken)
        #expect(forbidden.value == 3, "sent once more, after one refresh")
        #expect(sandbox.requestCount(.token) == 1)
    }
}
