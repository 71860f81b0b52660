public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A request as the test server saw it.
public struct TestRequest: Sendable {
    public var method: String
    public var uri: String
    public var headers: [(String, String)]
    public var body: Data

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// What the test server answers.
public struct TestResponse: Sendable {
    public var status: Int = 200
    public var headers: [(String, String)] = []
    public var body: Data = Data()
    /// Wait this long before answering.
    public var delay: Duration = .zero
    /// Send the body chunked, without a `Content-Length`.
    public var chunked = false

    public init(
        status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), delay: Duration = .zero,
        chunked: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.chunked = chunked
    }

    public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
        TestResponse(
            status: status,
            headers: [("Content-Type", "application/json")] + headers,
            body: Data(text.utf8)
        )
    }

    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain") -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }
}

/// A real HTTP/1.1 server on 127.0.0.1 and an ephemeral port, built on SwiftNIO, answering with a closure.
public final class TestHTTPServer: Sendable {
    public typealias Handler = @Sendable (TestRequest) async -> TestResponse

    public let port: Int
    private let channel: any Channel
    private let serving: Task<Void, Never>
    private let handlers: Handlers

    private init(port: Int, channel: any Channel, serving: Task<Void, Never>, handlers: Handlers) {
        self.handlers = handlers
        self.port = port
        self.channel = channel
        self.serving = serving
    }

    public func url(_ path: String) -> URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        components.path = path
        guard let url = components.url else { preconditionFailure("not a URL path: \(path)") }
        return url
    }

    public static func start(_ handler: @escaping Handler) async throws -> TestHTTPServer {
        let handlers = Handlers()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    let connection = try Connection(wrappingChannelSynchronously: channel)
                    handlers.register(connection)
                    return connection
                }
            }
        let port = server.channel.localAddress?.port ?? 0
        let channel = server.channel
        // Never cancel the accept loop: NIO traps on an accepted connection that is dropped
        // without `executeThenClose`. Stopping closes the listener, lets the loop drain, then
        // cancels the handlers; connections nobody handled are closed through executeThenClose.
        let serving = Task<Void, Never> {
            _ = try? await server.executeThenClose { inbound in
                for try await connection in inbound {
                    handlers.add(connection) { try? await serve(connection, handler: handler) }
                }
            }
        }
        return TestHTTPServer(port: port, channel: channel, serving: serving, handlers: handlers)
    }

    public func stop() async {
        try? await channel.close().get()
        await serving.value
        await handlers.cancelAndWait()
    }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private final class Handlers: Sendable {
        private struct State {
            var unclaimed: [ObjectIdentifier: Connection] = [:]
            var tasks: [Task<Void, Never>] = []
            var closed = false
        }

        private let state = Mutex(State())

        func register(_ connection: Connection) {
            let closed = state.withLock { state in
                if !state.closed { state.unclaimed[ObjectIdentifier(connection.channel)] = connection }
                return state.closed
            }
            if closed { Task { _ = try? await connection.executeThenClose { _, _ in } } }
        }

        func add(_ connection: Connection, _ body: @escaping @Sendable () async -> Void) {
            let task = Task {
                _ = state.withLock { $0.unclaimed.removeValue(forKey: ObjectIdentifier(connection.channel)) }
                await body()
            }
            state.withLock { $0.tasks.append(task) }
        }

        func cancelAndWait() async {
            let running = state.withLock { state in
                state.closed = true
                return state.tasks
            }
            for task in running { task.cancel() }
            for task in running { await task.value }
            let leftovers = state.withLock { state in
                defer { state.unclaimed.removeAll() }
                return Array(state.unclaimed.values)
            }
            for connection in leftovers { _ = try? await connection.executeThenClose { _, _ in } }
        }
    }

    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        handler: Handler
    ) async throws {
        try await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var body = Data()
            for try await part in inbound {
                switch part {
                case .head(let received):
                    head = received
                    body = Data()
                case .body(let buffer):
                    body.append(contentsOf: buffer.readableBytesView)
                case .end:
                    guard let head else { continue }
                    let request = TestRequest(
                        method: head.method.rawValue,
                        uri: head.uri,
                        headers: head.headers.map { ($0.name, $0.value) },
                        body: body
                    )
                    let response = await handler(request)
                    if response.delay > .zero { try await Task.sleep(for: response.delay) }
                    var headers = HTTPHeaders(response.headers)
                    if !response.chunked {
                        headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)")
                    }
                    try await outbound.write(
                        .head(
                            HTTPResponseHead(
                                version: .http1_1, status: .init(statusCode: response.status), headers: headers))
                    )
                    // Write big bodies in pieces so that a client can stop reading part-way.
                    var offset = 0
                    while offset < response.body.count {
                        let end = min(offset + 16_384, response.body.count)
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body[offset..<end]))))
                        offset = end
                    }
                    try await outbound.write(.end(nil))
                }
            }
        }
    }
}

/// Whether a TCP port on 127.0.0.1 can be bound right now by a listener: `false` while something
/// listens there. SO_REUSEADDR lets it pass connections in TIME_WAIT.
public func canBind(port: Int) async -> Bool {
    do {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port).get()
        try await channel.close().get()
        return true
    } catch {
        return false
    }
}
