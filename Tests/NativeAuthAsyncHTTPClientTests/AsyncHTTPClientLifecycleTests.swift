import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NativeAuth
import NativeAuthServices
import ServiceLifecycle
import TestSupport
import Testing

@testable import NativeAuthAsyncHTTPClient

/// Whose `HTTPClient` carries the requests, and when the transport's own clients stop.
@Suite(.testLogging) struct AsyncHTTPClientLifecycleTests {
    private func get(_ url: URL) -> HTTPRequest { HTTPRequest(method: .get, url: url) }

    @Test func anAppsOwnClientCarriesTheRequestsAndStaysTheApps() async throws {
        let paths = NIOLockedValueBox<[String]>([])
        let server = try await TestHTTPServer.start { request in
            paths.withLockedValue { $0.append(request.path) }
            return .json(#"{"ok":true}"#)
        }
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: .init(redirectConfiguration: .disallow))
        let transport = AsyncHTTPClientTransport(client: client, configuration: .init(proxy: .none))
        let (response, body) = try await transport.send(get(server.url("/through-the-app")), body: nil)
        #expect(response.status.code == 200 && String(decoding: body, as: UTF8.self) == #"{"ok":true}"#)

        // The transport never shuts the app's client down; once the app has, requests through it
        // fail: they went through that client.
        try await client.shutdown()
        let error = await #expect(throws: AuthError.self) {
            try await transport.send(self.get(server.url("/after-shutdown")), body: nil)
        }
        #expect(error?.code == .network || error?.code == .requestFailed, "\(String(describing: error))")
        await server.stop()
        #expect(paths.withLockedValue { $0 } == ["/through-the-app"])
    }

    @Test func aRedirectTheAppsClientFollowedIsRefused() async throws {
        let server = try await TestHTTPServer.start { request in
            request.path == "/token"
                ? TestResponse(status: 307, headers: [("Location", "/elsewhere")])
                : .json(#"{"access_token":"x"}"#)
        }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)  // follows redirects
        let transport = AsyncHTTPClientTransport(client: client, configuration: .init(proxy: .none))
        let error = await #expect(throws: AuthError.self) {
            try await transport.send(HTTPRequest(method: .post, url: server.url("/token")), body: Data("a=b".utf8))
        }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.hint?.contains(".disallow") == true)
        try await client.shutdown()
        await server.stop()
    }

    @Test func theTransportsOwnClientStopsWhenItsLastTransportIsReleased() async throws {
        let server = try await TestHTTPServer.start { _ in .json("{}") }
        // A trust store of this test's own keeps its client apart from every other test's.
        let directory = try TemporaryDirectory()
        let tls = TLSSettings(trustStore: directory.path)
        let key = SharedHTTPClients.Key(proxy: nil, tls: tls)
        let clients = SharedHTTPClients.process
        var first: AsyncHTTPClientTransport? = AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
        var second: AsyncHTTPClientTransport? = AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
        #expect(clients.state(of: key) == (0, false), "no request yet: no client, no event loop")
        _ = try await #require(first).send(get(server.url("/a")), body: nil)
        _ = try await #require(first).send(get(server.url("/b")), body: nil)
        _ = try await #require(second).send(get(server.url("/c")), body: nil)
        #expect(clients.state(of: key) == (2, true), "one client, a lease for each transport")
        first = nil
        #expect(clients.state(of: key) == (1, true))
        second = nil
        #expect(clients.state(of: key) == (0, true), "kept a moment for the next transport")

        // A transport made meanwhile gets the same client, and its release starts the wait again.
        var third: AsyncHTTPClientTransport? = AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
        _ = try await #require(third).send(get(server.url("/d")), body: nil)
        #expect(clients.state(of: key) == (1, true))
        third = nil
        _ = third
        let deadline = ContinuousClock.now + clients.idleShutdown + .seconds(10)
        while clients.state(of: key).running, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(clients.state(of: key) == (0, false), "shut down once it had no lease for a while")
        await server.stop()
    }

    @Test func transportsInAServiceGroupShutTheirClientsDownWithIt() async throws {
        let server = try await TestHTTPServer.start { _ in .json("{}") }
        let directory = try TemporaryDirectory()
        let tls = TLSSettings(trustStore: directory.path)
        let key = SharedHTTPClients.Key(proxy: nil, tls: tls)
        let clients = SharedHTTPClients.process
        let first = AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
        let second = AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
        _ = try await first.send(get(server.url("/a")), body: nil)
        _ = try await second.send(get(server.url("/b")), body: nil)
        #expect(clients.state(of: key) == (2, true))

        let group = ServiceGroup(
            services: [TransportShutdown(first), TransportShutdown(second)], gracefulShutdownSignals: [],
            logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(clients.state(of: key) == (2, true), "running until the group shuts down")
        await group.triggerGracefulShutdown()
        try await running.value
        // Both transports are still referenced here: the client stopped with the group, not when
        // they were released.
        #expect(clients.state(of: key) == (0, false), "shut down with the group, without the idle wait")
        _ = (first, second)

        // A request after the group stopped still goes, through a client made again.
        _ = try await first.send(get(server.url("/c")), body: nil)
        #expect(clients.state(of: key) == (1, true))
        await first.shutdown()
        #expect(clients.state(of: key) == (0, false))
        await server.stop()
    }
}
