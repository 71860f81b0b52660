import Crypto
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
@_spi(Provider) public import NativeAuth
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthPresenters

/// A request as ``TestHTTPServer`` received it.
public struct TestRequest: Sendable {
    /// The method, like `GET` or `POST`.
    public var method: String
    /// The request target as sent: the path and the query, still percent-encoded.
    public var uri: String
    /// The header fields in the order they arrived.
    public var headers: [(String, String)]
    /// The body, empty when there was none.
    public var body: Data
    /// The server's own URL, `http://127.0.0.1:PORT`: for documents that name the server's endpoints.
    public var serverURL: URL
    /// The SHA-256 thumbprint (`x5t#S256`, base64url) of the TLS client certificate the request
    /// came with, on a server that asks for one (``TestTLSIdentity/clientCAFile``); else `nil`.
    public var clientCertificateThumbprint: String?
    /// The client's port: requests on one kept-alive connection share it. `nil` in memory.
    public var remotePort: Int?

    /// Creates a request (the server makes these; tests of handlers may too).
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - uri: The request target.
    ///   - headers: The header fields.
    ///   - body: The body.
    ///   - serverURL: The URL of the server that received it.
    ///   - clientCertificateThumbprint: The thumbprint of the TLS client certificate, if any.
    ///   - remotePort: The client's port.
    public init(
        method: String, uri: String, headers: [(String, String)] = [], body: Data = Data(), serverURL: URL,
        clientCertificateThumbprint: String? = nil, remotePort: Int? = nil
    ) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
        self.serverURL = serverURL
        self.clientCertificateThumbprint = clientCertificateThumbprint
        self.remotePort = remotePort
    }

    /// The first header field with this name (case-insensitive).
    ///
    /// - Parameter name: The field name.
    /// - Returns: Its value, or `nil`.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The path of ``uri``, without the query.
    public var path: String {
        String(uri.prefix { $0 != "?" })
    }

    /// The decoded query parameters.
    public var query: [FormField] {
        guard let mark = uri.firstIndex(of: "?") else { return [] }
        return FormURLEncoding.decode(String(uri[uri.index(after: mark)...]))
    }

    /// The body read as `application/x-www-form-urlencoded` fields (a token request's).
    public var form: [FormField] { FormURLEncoding.decode(bytes: body) }

    /// The URL of a path on the server that received the request.
    ///
    /// - Parameter path: A path such as `/token`.
    /// - Returns: `serverURL` with the path.
    public func url(_ path: String) -> URL {
        URL(string: serverURL.absoluteString + path) ?? serverURL
    }
}

/// What ``TestHTTPServer`` answers.
public struct TestResponse: Sendable {
    /// The status code.
    public var status: Int = 200
    /// The header fields; `Content-Length` is added unless ``chunked``.
    public var headers: [(String, String)] = []
    /// The body.
    public var body: Data = Data()
    /// Wait this long before answering.
    public var delay: Duration = .zero
    /// Send the body chunked, without a `Content-Length`.
    public var chunked = false
    /// Awaited after the head and after each 16 KiB piece of the body is written and flushed (its
    /// argument: how many pieces are out), before the next: a test holds the body back with it
    /// until the client has shown what it did with the pieces so far, or stalls the answer.
    public var beforePiece: (@Sendable (Int) async -> Void)?

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - body: The body.
    ///   - delay: How long to wait before answering.
    ///   - chunked: Whether to send the body chunked.
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

    /// A JSON answer.
    ///
    /// - Parameters:
    ///   - text: The JSON text, sent as it is (so a test can send malformed JSON too).
    ///   - status: The status code.
    ///   - headers: More header fields.
    /// - Returns: The response, with `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
        TestResponse(
            status: status,
            headers: [("Content-Type", "application/json")] + headers,
            body: Data(text.utf8)
        )
    }

    /// A text answer, such as the HTML error page of a proxy.
    ///
    /// - Parameters:
    ///   - text: The body.
    ///   - status: The status code.
    ///   - contentType: The media type.
    /// - Returns: The response.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain") -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }
}

/// A real HTTP/1.1 server on 127.0.0.1 and an ephemeral port, built on SwiftNIO, that answers every
/// request with a closure: the stand-in for an authorization server in a provider's tests.
///
/// ```swift
/// let server = try await TestHTTPServer.start { request in
///     switch request.path {
///     case "/token": .json(#"{"access_token": "at-1", "token_type": "Bearer"}"#)
///     default: .text("not found", status: 404)
///     }
/// }
/// defer { Task { await server.stop() } }
/// let tokenEndpoint = server.url("/token")
/// ```
///
/// Requests are handled concurrently, one task per connection. Call ``stop()`` at the end: it
/// closes the listener and every connection and waits for the handlers.
///
/// Started ``TestServerMode/inMemory``, the same handler answers without a socket: pass
/// ``transport`` to the code under test, and requests reach the handler directly (most tests need
/// nothing more, and run several times faster). ``TestServerMode/live``, the default, is a real
/// server on 127.0.0.1, for tests whose point is the HTTP stack, a browser or another process.
public final class TestHTTPServer: Sendable {
    /// Answers one request.
    public typealias Handler = @Sendable (TestRequest) async -> TestResponse

    private enum Backend: Sendable {
        case live(channel: any Channel, serving: Task<Void, Never>, handlers: ConnectionHandlers)
        case inMemory(InMemoryTransport)
    }

    /// The port the server listens on; in memory, a port nothing listens on, which only
    /// ``transport`` reaches.
    public let port: Int
    /// `https` when the server was started with a ``TestTLSIdentity``, else `http`.
    public let scheme: String
    /// How the server was started.
    public let mode: TestServerMode
    private let backend: Backend

    private init(port: Int, mode: TestServerMode, backend: Backend, scheme: String = "http") {
        self.port = port
        self.scheme = scheme
        self.mode = mode
        self.backend = backend
    }

    /// The transport that reaches this server: the platform's default for a live server, an
    /// ``InMemoryTransport`` to the handler for one in memory.
    public var transport: any HTTPTransport {
        switch backend {
        case .live: StandardTransport.platformDefault()
        case .inMemory(let transport): transport
        }
    }

    /// The URL of a path on this server.
    ///
    /// - Parameter path: A path such as `/token`, or `""` for the server's root.
    /// - Returns: `http://127.0.0.1:PORT` (or `https://`) with the path.
    public func url(_ path: String) -> URL {
        var components = URLComponents()
        components.scheme = scheme
        components.host = "127.0.0.1"
        components.port = port
        components.path = path
        guard let url = components.url else { preconditionFailure("not a URL path: \(path)") }
        return url
    }

    /// Starts a server.
    ///
    /// - Parameters:
    ///   - mode: On 127.0.0.1 (``TestServerMode/live``, the default), or in memory.
    ///   - port: The port; 0 (the default) picks a free one (in memory: a port of its own that
    ///     nothing listens on).
    ///   - tls: Serve HTTPS with this certificate (live only), and ask for client certificates
    ///     when it names a client CA.
    ///   - handler: Answers every request.
    /// - Returns: The running server.
    /// - Throws: When the port cannot be bound, or the certificate or key cannot be read.
    public static func start(
        _ mode: TestServerMode = .live,
        port: Int = 0,
        tls: TestTLSIdentity? = nil,
        _ handler: @escaping Handler
    ) async throws -> TestHTTPServer {
        guard mode == .live else {
            let port = port == 0 ? InMemoryPorts.next() : port
            let base = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
            return TestHTTPServer(
                port: port, mode: mode, backend: .inMemory(InMemoryTransport(serving: base, handler: handler)))
        }
        let handlers = ConnectionHandlers()
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration()) }
        let scheme = tls == nil ? "http" : "https"
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    let connection = try ConnectionHandlers.Connection(wrappingChannelSynchronously: channel)
                    handlers.register(connection)
                    return connection
                }
            }
        let port = server.channel.localAddress?.port ?? port
        let channel = server.channel
        // Never cancel the accept loop: NIO traps on an accepted connection that is dropped
        // without `executeThenClose`. Stopping closes the listener, lets the loop drain, then
        // cancels the handlers; connections nobody handled are closed through executeThenClose.
        let serving = Task<Void, Never> {
            _ = try? await server.executeThenClose { inbound in
                for try await connection in inbound {
                    handlers.add(connection) {
                        try? await serve(connection, base: "\(scheme)://127.0.0.1:\(port)", handler: handler)
                    }
                }
            }
        }
        return TestHTTPServer(
            port: port, mode: mode, backend: .live(channel: channel, serving: serving, handlers: handlers),
            scheme: scheme)
    }

    /// Stops the server: closes the listener and the open connections and waits for the handlers.
    /// In memory there is nothing to stop.
    public func stop() async {
        guard case .live(let channel, let serving, let handlers) = backend else { return }
        try? await channel.close().get()
        await serving.value
        await handlers.closeAll()
    }

    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        base: String,
        handler: Handler
    ) async throws {
        let channel = connection.channel
        let remotePort = channel.remoteAddress?.port
        try await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var thumbprint: String??
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
                    if thumbprint == nil { thumbprint = try await Self.clientCertificateThumbprint(of: channel) }
                    let request = TestRequest(
                        method: head.method.rawValue,
                        uri: head.uri,
                        headers: head.headers.map { ($0.name, $0.value) },
                        body: body,
                        serverURL: URL(string: base) ?? URL(fileURLWithPath: "/"),
                        clientCertificateThumbprint: thumbprint ?? nil, remotePort: remotePort
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
                    var written = 0
                    while offset < response.body.count {
                        // Each write is flushed: what came before is on its way to the client.
                        await response.beforePiece?(written)
                        written += 1
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

extension TestHTTPServer {
    /// The `x5t#S256` thumbprint of the client certificate of a TLS connection, `nil` for none.
    fileprivate static func clientCertificateThumbprint(of channel: any Channel) async throws -> String? {
        // A plain HTTP connection has no TLS handler: no certificate.
        guard let certificate = (try? await channel.nioSSL_peerCertificate().get()) ?? nil else { return nil }
        return Base64URL.encode(Array(SHA256.hash(data: try certificate.toDERBytes())))
    }
}

/// The certificate a ``TestHTTPServer`` serves HTTPS with, and the CA whose client certificates
/// it asks for (mutual TLS).
public struct TestTLSIdentity: Sendable {
    /// The server's PEM certificate (chain).
    public var certificateFile: String
    /// Its PEM private key.
    public var keyFile: String
    /// When set, clients are asked for a certificate this PEM CA issued.
    public var clientCAFile: String?
    /// Whether a client without a certificate is refused at the handshake (default), or served
    /// (for a server where browsers and mutual-TLS clients meet, like the sandbox's).
    public var requiresClientCertificate: Bool

    /// Creates an identity.
    ///
    /// - Parameters:
    ///   - certificateFile: The server's PEM certificate (chain).
    ///   - keyFile: Its PEM private key.
    ///   - clientCAFile: When set, clients are asked for a certificate this PEM CA issued.
    ///   - requiresClientCertificate: Whether a client without one is refused.
    public init(
        certificateFile: String, keyFile: String, clientCAFile: String? = nil, requiresClientCertificate: Bool = true
    ) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
        self.requiresClientCertificate = requiresClientCertificate
    }

    func serverConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem)))
        if let clientCAFile {
            configuration.certificateVerification =
                requiresClientCertificate ? .noHostnameVerification : .optionalVerification
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCAFile))
        }
        return configuration
    }
}

/// Where a ``TestHTTPServer`` or a ``SandboxAuthorizationServer`` serves its requests.
public enum TestServerMode: Sendable, Equatable {
    /// A real HTTP/1.1 server on 127.0.0.1: for tests of the HTTP stack, of a browser's round
    /// trip through a loopback receiver, or of another process.
    case live
    /// No socket: the handler answers through the server's ``TestHTTPServer/transport``.
    case inMemory
}

/// The ports of in-memory servers: each its own, in a range the system does not hand out for
/// listening sockets by default, so a request that misses the in-memory transport fails at once.
enum InMemoryPorts {
    private static let counter = Locked(0)

    static func next() -> Int {
        counter.withLock { count in
            count += 1
            return 20_000 + count % 12_000
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
