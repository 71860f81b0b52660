internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NativeAuth

/// An HTTP/1.1 listener on the loopback interface that receives the authorization callback
/// (RFC 8252 §7.3), built on SwiftNIO.
///
/// Only the first callback that the handler completes is taken; every other request gets a static
/// page (404 for other paths, 400 for callbacks of another sign-in, 405 for other methods) and
/// the wait goes on. On Linux, requests from sockets of another user are refused (403) and change
/// nothing (``LoopbackPeer``).
///
/// A browser is sent to a one-time start address (``StartPage``) rather than to the authorization
/// URL, which would be in its command line for every local user to read.
actor LoopbackReceiver {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// The redirect URI: `http://127.0.0.1:PORT/PATH` (or `[::1]`).
    nonisolated let redirectURI: URL

    /// One line telling the person how to forward the port when the browser runs elsewhere.
    nonisolated var portForwardingHint: String {
        let port = redirectURI.port.map(String.init) ?? "PORT"
        let bare = (redirectURI.host ?? "127.0.0.1").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let host = bare.contains(":") ? "[\(bare)]" : bare
        return "If the browser runs on another machine, forward the port first: ssh -L \(port):\(host):\(port) HOST"
    }

    private let server: NIOAsyncChannel<Connection, Never>
    private var serving: Task<Void, Never>?
    private let handlers: ConnectionHandlers
    private var handler: (@Sendable (AuthorizationCallback) -> CallbackDisposition<Void>)?
    private var completed = false
    private var start: StartPage?
    private var answersWithCopyPage = false
    private var startOpened = false
    private let results: AsyncStream<Result<Void, AuthError>>
    private let resultSink: AsyncStream<Result<Void, AuthError>>.Continuation

    private init(server: NIOAsyncChannel<Connection, Never>, handlers: ConnectionHandlers, redirectURI: URL) {
        self.server = server
        self.handlers = handlers
        self.redirectURI = redirectURI
        (results, resultSink) = AsyncStream.makeStream(of: Result<Void, AuthError>.self)
    }

    /// Binds 127.0.0.1 (falling back to ::1 when IPv4 loopback is unavailable) and starts serving.
    ///
    /// - Parameters:
    ///   - port: The port; 0 for an ephemeral one.
    ///   - path: The callback path, starting with `/`.
    /// - Throws: `AuthError` (`AuthError.Code.configurationInvalid`) naming a configured port
    ///   that is in use.
    ///   - limits: How long one connection may stay open, and how many may be open at once.
    static func start(
        port: Int,
        path: String,
        limits: ConnectionHandlers.Limits = defaultLimits
    ) async throws(AuthError) -> LoopbackReceiver {
        var lastError: (any Error)?
        for host in ["127.0.0.1", "::1"] {
            do {
                let handlers = ConnectionHandlers(limits: limits)
                let server = try await bind(host: host, port: port, handlers: handlers)
                let bound = server.channel.localAddress?.port ?? port
                let hostPart = host.contains(":") ? "[\(host)]" : host
                guard let redirect = URL(string: "http://\(hostPart):\(bound)\(path)") else {
                    try? await server.channel.close().get()
                    throw AuthError(.configurationInvalid, "the callback path \"\(path)\" cannot be part of a URL")
                }
                let receiver = LoopbackReceiver(server: server, handlers: handlers, redirectURI: redirect)
                await receiver.serve()
                return receiver
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                throw AuthError(
                    .configurationInvalid,
                    "port \(port) on \(host) is already in use",
                    hint: "choose another `port`, or leave it out to use a free one",
                    underlying: error
                )
            } catch let error as AuthError {
                throw error
            } catch {
                lastError = error  // this loopback address is unavailable: try the next
            }
        }
        throw AuthError(
            .configurationInvalid,
            "cannot listen on the loopback interface (127.0.0.1 or ::1)",
            underlying: lastError
        )
    }

    /// 10 seconds per connection (a browser sends its request at once) and 64 connections.
    static let defaultLimits = ConnectionHandlers.Limits(lifetime: .seconds(10), maximumConnections: 64)

    private static func bind(
        host: String,
        port: Int,
        handlers: ConnectionHandlers
    ) async throws -> NIOAsyncChannel<Connection, Never> {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            // Lets a configured port be bound again while closed connections linger in TIME_WAIT.
            // On Linux this never allows binding over a port that is still listening.
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: false,
                        withErrorHandling: true
                    )
                    let connection = try Connection(wrappingChannelSynchronously: channel)
                    handlers.register(connection)
                    return connection
                }
            }
    }

    /// Accepts connections until the listener closes. The accept loop is never cancelled: every
    /// accepted connection must reach `executeThenClose` (NIO traps on one dropped unhandled), so
    /// closing stops the listener, lets the loop drain, and then cancels the handlers.
    private func serve() {
        let server = server
        let handlers = handlers
        serving = Task { [weak self] in
            _ = try? await server.executeThenClose { inbound in
                for try await connection in inbound {
                    let receiver = self
                    handlers.add(connection) {
                        if let receiver {
                            await receiver.handle(connection)
                        } else {
                            // The receiver is gone: still close the connection the NIO way.
                            _ = try? await connection.executeThenClose { _, _ in }
                        }
                    }
                }
            }
        }
    }

    /// Sets the callback handler; requests that arrive before it is set are treated as not ours.
    /// Returns the source of its outcome, for a ``CallbackRace``.
    func receive<Value: Sendable>(
        with handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Value>
    ) -> @Sendable () async -> Result<Value, AuthError>? {
        let completed = CompletedValue<Value>()
        self.handler = completed.erasing(handler)
        return { completed.typed(await self.result()) }
    }

    /// Answers every request for the callback path with a page asking the person to copy its
    /// address into the terminal, and takes no callback itself (``ManualPastePresenter``, which
    /// holds the port so that nobody else can bind it and receive the code).
    func answerWithCopyPage() {
        answersWithCopyPage = true
    }

    /// A one-time address on this listener that sends the browser on to `target` (see
    /// ``StartPage``); it replaces the address of any earlier call.
    func startAddress(for target: URL, postingSecrets: Bool = true) -> URL {
        let page = StartPage(target: target, postsSecrets: postingSecrets)
        start = page
        startOpened = false
        var components = URLComponents()
        components.scheme = redirectURI.scheme
        components.host = redirectURI.host
        components.port = redirectURI.port
        components.path = page.path
        return components.url ?? redirectURI
    }

    /// The outcome of the first completed callback.
    func result() async -> Result<Void, AuthError>? {
        for await result in results { return result }
        return nil
    }

    /// Stops listening, closes open connections and waits for the server to finish.
    func close() async {
        resultSink.finish()
        try? await server.channel.close().get()
        await serving?.value
        serving = nil
        await handlers.closeAll()
    }

    private nonisolated func handle(_ connection: Connection) async {
        let (remote, local) = handlers.addresses(of: connection)
        _ = try? await connection.executeThenClose { inbound, outbound in
            for try await part in inbound {
                guard case .head(let head) = part else { continue }
                // Asked only for the paths that can change something (a kernel query per request).
                let (answer, outcome) = await decide(head) {
                    LoopbackPeer.isCurrentUser(remote: remote, local: local)
                }
                var headers = HTTPHeaders(answer.headers)
                let body = ByteBuffer(string: answer.body)
                headers.add(name: "Content-Length", value: String(body.readableBytes))
                // The outcome is delivered even when writing the page fails (a browser that closes
                // the connection as soon as it has the body): the callback was taken either way.
                defer { if let outcome { deliver(outcome) } }
                try await outbound.write(
                    .head(
                        HTTPResponseHead(
                            version: head.version, status: .init(statusCode: answer.status), headers: headers))
                )
                try await outbound.write(.body(.byteBuffer(body)))
                try await outbound.write(.end(nil))
                return  // one request per connection (Connection: close)
            }
        }
    }

    private func decide(
        _ head: HTTPRequestHead,
        fromThisUser: @Sendable () -> Bool
    ) -> (LoopbackAnswer, Result<Void, AuthError>?) {
        guard head.method == .GET || head.method == .HEAD else { return (LoopbackAnswer(.methodNotAllowed), nil) }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if let start, path == start.path {
            guard fromThisUser() else { return (LoopbackAnswer(.anotherUser), nil) }
            guard head.method == .GET else { return (LoopbackAnswer(.methodNotAllowed), nil) }
            guard startOpened else {
                startOpened = true
                return (start.answer, nil)
            }
            guard !completed else { return (LoopbackAnswer(.notThisSignIn), nil) }
            completed = true
            return (
                LoopbackAnswer(.startOpenedTwice),
                .failure(
                    AuthError(
                        .invalidState,
                        "the one-time address given to the browser was opened twice; another program may have"
                            + " read it from the browser's command line",
                        hint: "sign in again; on a shared machine, mount /proc with hidepid=2"
                    ))
            )
        }
        guard path == redirectURI.path else { return (LoopbackAnswer(.notFound), nil) }
        if answersWithCopyPage { return (LoopbackAnswer(.copyThisAddress), nil) }
        guard fromThisUser() else { return (LoopbackAnswer(.anotherUser), nil) }
        guard !completed, let handler, let url = URL(string: head.uri, relativeTo: redirectURI)?.absoluteURL else {
            return (LoopbackAnswer(.notThisSignIn), nil)
        }
        switch handler(.redirect(url)) {
        case .ignore:
            return (LoopbackAnswer(.notThisSignIn), nil)
        case .complete(let result):
            completed = true
            if case .success = result { return (LoopbackAnswer(.success), result) }
            return (LoopbackAnswer(.failure), result)
        }
    }

    private nonisolated func deliver(_ outcome: Result<Void, AuthError>) {
        resultSink.yield(outcome)
    }
}
