import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// Which transport a test runs against: every guarantee holds for both.
enum TransportUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case asyncHTTPClient

    var testDescription: String { rawValue }

    func make(timeout: Duration = .seconds(30), maxResponseBytes: Int = 4 << 20) -> any HTTPTransport {
        switch self {
        case .urlSession:
            URLSessionTransport(configuration: .init(timeout: timeout, maxResponseBytes: maxResponseBytes))
        case .asyncHTTPClient:
            AsyncHTTPClientTransport(
                configuration: .init(timeout: timeout, maxResponseBytes: maxResponseBytes, proxy: .none))
        }
    }
}

/// The transports' guarantees, each run against both (``TransportUnderTest``).
@Suite(.testLogging) struct HTTPTransportTests {
    private func get(_ url: URL) -> HTTPRequest {
        HTTPRequest(method: .get, url: url)
    }

    /// A server that answers after two minutes, calling `arrived` when a request comes in.
    private func slowServer(_ arrived: @escaping @Sendable () -> Void = {}) async throws -> TestHTTPServer {
        try await TestHTTPServer.start { _ in
            arrived()
            var response = TestResponse.json("{}")
            response.delay = .seconds(120)
            return response
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func returnsStatusHeadersAndBodyAndSendsUserAgentAndBody(kind: TransportUnderTest) async throws {
        let seen = NIOLockedValueBox<TestRequest?>(nil)
        let server = try await TestHTTPServer.start { request in
            seen.withLockedValue { $0 = request }
            return .json(#"{"ok":true}"#, status: 201, headers: [("X-Test", "1")])
        }
        let transport = kind.make()
        var request = HTTPRequest(method: .post, url: server.url("/token"))
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        let (response, body) = try await transport.send(
            request,
            body: Data(FormURLEncoding.encode([FormField("grant_type", "refresh_token")]).utf8)
        )
        await server.stop()

        #expect(response.status.code == 201)
        #expect(response.headerFields[HTTPField.Name("X-Test")!] == "1")
        #expect(response.isJSON)
        #expect(String(decoding: body, as: UTF8.self) == #"{"ok":true}"#)
        let received = try #require(seen.withLockedValue { $0 })
        #expect(received.method == "POST")
        #expect(received.uri == "/token")
        #expect(received.header("User-Agent") == "NativeAuth/\(NativeAuthVersion.current)")
        #expect(String(decoding: received.body, as: UTF8.self) == "grant_type=refresh_token")
    }

    /// A 401 with an HTTP authentication challenge (`Basic`, `Digest`, `Bearer`) is an answer to
    /// hand back at once: FoundationNetworking waited for the whole timeout on `Basic` before, and
    /// then failed with a timeout. Not timed: the deadline is a minute, so a load that stalls the
    /// machine (ThreadSanitizer in CI) passes, and that old wait still fails it.
    @Test(
        arguments: TransportUnderTest.allCases,
        [#"Basic realm="id""#, #"Digest realm="id", nonce="n""#, #"Bearer error="invalid_token""#])
    func aChallengeIsReturnedAtOnce(kind: TransportUnderTest, challenge: String) async throws {
        let calls = NIOLockedValueBox(0)
        let server = try await TestHTTPServer.start { _ in
            calls.withLockedValue { $0 += 1 }
            return .json(#"{"error": "invalid_client"}"#, status: 401, headers: [("WWW-Authenticate", challenge)])
        }
        let transport = kind.make(timeout: .seconds(60))
        var request = HTTPRequest(method: .post, url: server.url("/token"))
        request.headerFields[.authorization] = "Basic Y2xpZW50Ondyb25n"
        let (response, body) = try await transport.send(request, body: Data("grant_type=x".utf8))
        await server.stop()
        #expect(response.status.code == 401)
        #expect(response.headerFields[.wwwAuthenticate] == challenge)
        #expect(String(decoding: body, as: UTF8.self).contains("invalid_client"))
        #expect(calls.withLockedValue { $0 } == 1, "no retry with other credentials")
    }

    /// Not a timing test: the server would answer after two minutes, so an end well before that
    /// (with `timeout`) is the deadline's doing, however loaded the machine is.
    @Test(arguments: TransportUnderTest.allCases)
    func aSlowServerEndsInTimeout(kind: TransportUnderTest) async throws {
        let server = try await slowServer()
        let transport = kind.make(timeout: .milliseconds(400))
        let started = ContinuousClock.now
        let error = await #expect(throws: AuthError.self) {
            _ = try await transport.send(get(server.url("/slow")), body: nil)
        }
        let elapsed = ContinuousClock.now - started
        await server.stop()
        #expect(error?.code == .timeout)
        #expect(error?.isRetryable == true)
        #expect(elapsed >= .milliseconds(350), "the configured deadline, not an earlier one")
        #expect(elapsed < .seconds(60), "the deadline must end the wait, not the server")
    }

    @Test(arguments: TransportUnderTest.allCases, [false, true])
    func aBodyOverTheLimitIsRefused(kind: TransportUnderTest, chunked: Bool) async throws {
        let server = try await TestHTTPServer.start { _ in
            TestResponse(
                status: 200,
                headers: [("Content-Type", "application/json")],
                body: Data(repeating: UInt8(ascii: "a"), count: 300_000),
                chunked: chunked
            )
        }
        let transport = kind.make(maxResponseBytes: 100_000)
        let error = await #expect(throws: AuthError.self) {
            _ = try await transport.send(get(server.url("/big")), body: nil)
        }
        await server.stop()
        #expect(error?.code == .responseTooLarge)
        #expect(error?.message.contains("100000") == true)
    }

    /// The default limit (4 MiB) refuses a 5 MiB answer, stated or streamed.
    @Test(arguments: TransportUnderTest.allCases, [false, true])
    func aFiveMebibyteBodyIsRefusedByDefault(kind: TransportUnderTest, chunked: Bool) async throws {
        let server = try await TestHTTPServer.start { _ in
            TestResponse(status: 200, body: Data(repeating: UInt8(ascii: "a"), count: 5 << 20), chunked: chunked)
        }
        let error = await #expect(throws: AuthError.self) {
            // A deadline far off: the limit must end it, however slow the machine (ThreadSanitizer).
            _ = try await kind.make(timeout: .seconds(300)).send(get(server.url("/big")), body: nil)
        }
        await server.stop()
        #expect(error?.code == .responseTooLarge)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aBodyAtTheLimitIsRead(kind: TransportUnderTest) async throws {
        let server = try await TestHTTPServer.start { _ in
            TestResponse(status: 200, body: Data(repeating: 1, count: 100_000), chunked: true)
        }
        let transport = kind.make(maxResponseBytes: 100_000)
        let (_, body) = try await transport.send(get(server.url("/exact")), body: nil)
        await server.stop()
        #expect(body.count == 100_000)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aRedirectIsReturnedNotFollowed(kind: TransportUnderTest) async throws {
        let paths = NIOLockedValueBox<[String]>([])
        let server = try await TestHTTPServer.start { request in
            paths.withLockedValue { $0.append(request.uri) }
            if request.uri == "/start" {
                return TestResponse(status: 302, headers: [("Location", "/elsewhere")])
            }
            return .json(#"{"followed":true}"#)
        }
        let (response, _) = try await kind.make().send(get(server.url("/start")), body: nil)
        await server.stop()
        #expect(response.status.code == 302)
        #expect(response.headerFields[.location] == "/elsewhere")
        #expect(paths.withLockedValue { $0 } == ["/start"])
    }

    @Test(arguments: TransportUnderTest.allCases)
    func a503IsReturnedAndMapsToARetryableServerError(kind: TransportUnderTest) async throws {
        let server = try await TestHTTPServer.start { _ in
            .text("<html><body>Service Unavailable</body></html>", status: 503, contentType: "text/html")
        }
        let (response, body) = try await kind.make().send(get(server.url("/token")), body: nil)
        await server.stop()
        #expect(response.status.code == 503)
        let error = StandardErrorMapper().mapFailure(AuthFailure(operation: .refresh, response: response, body: body))
        #expect(error.code == .serverError)
        #expect(error.isRetryable)
        #expect(error.status == 503)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aProxyHTMLPageMapsToResponseMalformed(kind: TransportUnderTest) async throws {
        let server = try await TestHTTPServer.start { _ in
            .text(
                "<!doctype html><title>Proxy login</title><form>…</form>", status: 200,
                contentType: "text/html; charset=utf-8")
        }
        let (response, body) = try await kind.make().send(
            get(server.url("/.well-known/openid-configuration")), body: nil)
        await server.stop()
        let error = try #require(
            StandardErrorMapper().map(AuthFailure(operation: .discovery, response: response, body: body))
        )
        #expect(error.code == .responseMalformed)
        #expect(error.message.contains("text/html"))
        #expect(error.description.contains("(HTTP 200)"))
        #expect(error.description.components(separatedBy: "HTTP 200").count == 2, "said once")
        #expect(error.isRetryable)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func aClosedPortIsANetworkError(kind: TransportUnderTest) async throws {
        let server = try await TestHTTPServer.start { _ in .json("{}") }
        let url = server.url("/gone")
        await server.stop()
        let error = await #expect(throws: AuthError.self) {
            _ = try await kind.make().send(get(url), body: nil)
        }
        #expect(error?.code == .network)
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("127.0.0.1") == true)
    }

    @Test(
        arguments: TransportUnderTest.allCases,
        ["http://example.com/token", "ftp://example.com/token", "http://10.0.0.1/token"])
    func plainHTTPToARemoteHostIsRefusedBeforeSending(kind: TransportUnderTest, address: String) async throws {
        let url = try #require(URL(string: address))
        let error = await #expect(throws: AuthError.self) {
            _ = try await kind.make().send(get(url), body: nil)
        }
        #expect(error?.code == .configurationInvalid)
    }

    /// Not a timing test: the server would answer after two minutes and the transport's deadline
    /// is a minute, so a `CancellationError` well before either is the cancellation's doing.
    @Test(arguments: TransportUnderTest.allCases)
    func cancellingTheTaskCancelsTheRequest(kind: TransportUnderTest) async throws {
        let arrived = Shared(false)
        let server = try await slowServer { arrived.update { $0 = true } }
        let transport = kind.make(timeout: .seconds(60))
        let request = get(server.url("/slow"))
        let task = Task { try await transport.send(request, body: nil) }
        // Mid-request: cancelled once the server has the request (polled, for at most 30 s).
        for _ in 0..<3_000 where !arrived.value { try await Task.sleep(for: .milliseconds(10)) }
        #expect(arrived.value)
        let started = ContinuousClock.now
        task.cancel()
        let result = await task.result
        let elapsed = ContinuousClock.now - started
        await server.stop()
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(elapsed < .seconds(45))
    }

    /// A task cancelled before its request started: cancelled at once, not at the deadline
    /// (URLSession's cancellation once ran before the exchange was registered, and was lost).
    @Test(arguments: TransportUnderTest.allCases)
    func aTaskCancelledBeforeItsRequestStartsIsCancelled(kind: TransportUnderTest) async throws {
        let server = try await slowServer()
        let transport = kind.make(timeout: .seconds(60))
        let request = get(server.url("/slow"))
        let started = ContinuousClock.now
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request, body: nil)
        }
        let result = await task.result
        let elapsed = ContinuousClock.now - started
        await server.stop()
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(elapsed < .seconds(45))
    }

    /// Plain HTTP to `localhost` goes where this machine resolves it to loopback addresses alone
    /// (here its hosts file: FACTS.md), as MCP's own test servers need; a name or address
    /// elsewhere is refused before anything is sent, and plain HTTP to 127.0.0.1 keeps working.
    @Test(arguments: TransportUnderTest.allCases)
    func plainHTTPToLocalhostGoesOnlyWhereItResolvesToLoopback(kind: TransportUnderTest) async throws {
        let received = Shared(0)
        let server = try await TestHTTPServer.start { _ in
            received.update { $0 += 1 }
            return .json("{}")
        }
        let port = try #require(server.url("/").port)
        #expect(EndpointPolicy.resolvesToLoopbackOnly("localhost"), "this machine's hosts file names 127.0.0.1")
        let named = try #require(URL(string: "http://localhost:\(port)/"))
        let (local, _) = try await kind.make().send(get(named), body: nil)
        #expect(local.status.code == 200)
        #expect(received.value == 1)
        for address in ["10.1.2.3", "::ffff:10.1.2.3", "fe80::1"] {
            #expect(!EndpointPolicy.resolvesToLoopbackOnly(address), "\(address)")
        }
        #expect(EndpointPolicy.resolvesToLoopbackOnly("127.0.0.2") && EndpointPolicy.resolvesToLoopbackOnly("::1"))
        let elsewhere = try #require(URL(string: "http://10.1.2.3:\(port)/"))
        let error = await #expect(throws: AuthError.self) {
            _ = try await kind.make().send(get(elsewhere), body: nil)
        }
        #expect(error?.code == .configurationInvalid)
        #expect(received.value == 1, "nothing more was sent")
        let (response, _) = try await kind.make().send(get(server.url("/")), body: nil)
        #expect(response.status.code == 200)
        await server.stop()
    }

    /// A provider on plain HTTP at 127.0.0.1 works, with one warning per authenticator that a
    /// loopback port is not an authenticated channel on a shared machine.
    /// Transports with the same settings share the process's client: one kept-alive connection
    /// serves requests from several of them, one after another.
    @Test func asyncHTTPClientTransportsShareKeptAliveConnections() async throws {
        let ports = NIOLockedValueBox<[Int?]>([])
        let server = try await TestHTTPServer.start { request in
            ports.withLockedValue { $0.append(request.remotePort) }
            return .json("{}")
        }
        for _ in 0..<3 {
            let transport = AsyncHTTPClientTransport(configuration: .init(proxy: .none))
            _ = try await transport.send(get(server.url("/keep-alive")), body: nil)
        }
        await server.stop()
        let seen = ports.withLockedValue { $0 }
        #expect(seen.count == 3)
        #expect(Set(seen.compactMap { $0 }).count == 1, "one connection: \(seen)")
    }

    @Test func aProviderOnPlainLoopbackHTTPIsNotedOnceAtDebugLevel() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let handler = RecordingLogHandler()
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: ["openid"]))
        let auth = Authenticator(
            provider: provider, store: MemoryTokenStore(), transport: sandbox.transport,
            logger: Logger(label: "test") { _ in handler })
        _ = try await auth.metadata()
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        // Said at debug level, once per authenticator (the metadata is loaded once); a command-line
        // tool says it once per sign-in, not on every command.
        let notes = handler.messages.value.filter { $0.1.contains("plain HTTP") }
        #expect(notes.count == 1)
        #expect(notes.allSatisfy { $0.0 == .debug })
        await sandbox.stop()
    }

    @Test func loopbackHostsAreRecognised() {
        #expect(EndpointPolicy.isLoopback(host: "127.0.0.1"))
        #expect(EndpointPolicy.isLoopback(host: "127.8.9.10"))
        #expect(EndpointPolicy.isLoopback(host: "[::1]"))
        #expect(EndpointPolicy.isLoopback(host: "::1"))
        // A name is not the loopback interface: whatever resolves it decides (RFC 8252 §8.3).
        #expect(!EndpointPolicy.isLoopback(host: "localhost"))
        #expect(!EndpointPolicy.isLoopback(host: "LOCALHOST"))
        #expect(!EndpointPolicy.isLoopback(host: "127.0.0.1.example.com"))
        #expect(!EndpointPolicy.isLoopback(host: "128.0.0.1"))
        #expect(!EndpointPolicy.isLoopback(host: "localhost.evil"))
    }
}
