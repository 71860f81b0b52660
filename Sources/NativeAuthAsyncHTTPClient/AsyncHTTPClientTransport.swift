public import AsyncHTTPClient
import Crypto
public import Foundation
public import HTTPTypes
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
@_spi(Provider) public import NativeAuth

/// The `HTTPTransport` on SwiftNIO (AsyncHTTPClient): the default on Linux.
///
/// It keeps every guarantee of `URLSessionTransport`:
/// - one deadline (``Configuration/timeout``) for the whole exchange, connecting included, past
///   which the request is cancelled and `AuthError.Code.timeout` is thrown;
/// - a response body larger than ``Configuration/maxResponseBytes`` is refused as soon as its
///   `Content-Length` or its bytes pass the limit: `AuthError.Code.responseTooLarge`;
/// - a successful answer asked for as a stream (`send(_:body:streamingTo:)`) is handed on piece by
///   piece instead, with no size limit, and its timeout counts from the last piece;
/// - redirects are never followed, authentication challenges never answered: a 3xx or a 401
///   comes back as the response at once;
/// - plain `http://` is refused except to loopback hosts; no cookies, no cache, no decompression;
/// - requests carry `User-Agent: NativeAuth/<version>` unless they set their own;
/// - logging (debug level) names the method, host, path, status and proxy; never headers,
///   queries or bodies.
///
/// And it adds what FoundationNetworking lacks on Linux:
/// - proxies from `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` as curl reads them
///   (`ProxySettings`), every request tunnelled with `CONNECT` (plain HTTP too), so a proxy sees
///   the host and port, never a path, header or body;
/// - custom trust (`SSL_CERT_FILE`, `SSL_CERT_DIR`, a CA file) and client certificates
///   (`TLSSettings`); an untrusted server certificate is `AuthError.Code.certificateUntrusted`.
///
/// An app that has an `HTTPClient` already passes it (``init(client:configuration:logger:)``),
/// as swift-openapi-async-http-client's transport takes one: requests go through it, with its
/// event loops, proxy and TLS, and the app shuts it down when it is done. Otherwise transports in
/// one process share the clients they create (kept-alive connections, HTTP/2 where the server
/// offers it): one for each proxy and TLS setting, created at the first request and shut down when
/// the last transport using it is released; a command that sends nothing starts no event loop.
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// Limits, identity, proxy and trust of an ``AsyncHTTPClientTransport``.
    public struct Configuration: Sendable {
        /// The deadline for one whole request, from connecting to the last byte. Default 30 seconds.
        public var timeout: Duration
        /// The largest response body accepted, in bytes. Default 4 MiB.
        public var maxResponseBytes: Int
        /// The `User-Agent` sent with requests that have none.
        public var userAgent: String
        /// Which proxy each request goes through. Default: the environment's (`ProxySettings`).
        public var proxy: ProxySettings
        /// Which certificates are trusted and shown. Default: the environment's (`TLSSettings`).
        public var tls: TLSSettings

        /// Creates a configuration; every parameter has the documented default.
        public init(
            timeout: Duration = .seconds(30),
            maxResponseBytes: Int = 4 << 20,
            userAgent: String = "NativeAuth/\(NativeAuthVersion.current)",
            proxy: ProxySettings = .environment,
            tls: TLSSettings = .environment
        ) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.userAgent = userAgent
            self.proxy = proxy
            self.tls = tls
        }
    }

    /// The transport's limits, identity, proxy and trust. With a client of the app's, its own
    /// proxy and TLS configuration apply instead of ``Configuration/proxy`` and
    /// ``Configuration/tls``.
    public let configuration: Configuration
    /// The `x5t#S256` thumbprint of `TLSSettings.clientCertificateFile`'s certificate, when it can
    /// be read (a file that cannot be read fails every request instead).
    public let clientCertificateThumbprint: String?
    private let logger: Logger
    /// The app's client; `nil` when the transport uses shared ones of its own.
    private let client: HTTPClient?
    /// The shared clients this transport holds a lease on, given back when it is released.
    private let leases = NIOLockedValueBox<Set<SharedHTTPClients.Key>>([])

    /// Creates a transport that creates (and shares, and shuts down) the clients it needs.
    ///
    /// - Parameters:
    ///   - configuration: Limits, identity, proxy and trust.
    ///   - logger: Where request summaries go, at debug level. Defaults to a logger labelled
    ///     `NativeAuth.HTTP`; NativeAuth never bootstraps logging itself.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "NativeAuth.HTTP")) {
        self.configuration = configuration
        self.logger = logger
        self.client = nil
        self.clientCertificateThumbprint = configuration.tls.clientCertificateFile.flatMap { path in
            guard let certificate = try? NIOSSLCertificate.fromPEMFile(path).first,
                let der = try? certificate.toDERBytes()
            else { return nil }
            return Base64URL.encode(Array(SHA256.hash(data: der)))
        }
    }

    /// Creates a transport that sends every request through the app's `client` (its event loops,
    /// proxy and TLS configuration), which the app keeps running and shuts down itself.
    ///
    /// ```swift
    /// let transport = AsyncHTTPClientTransport(client: .shared)
    /// let authenticator = Authenticator(provider: provider, store: store, transport: transport)
    /// ```
    ///
    /// The deadline and size limit of `configuration` and the endpoint policy hold whatever the
    /// client's configuration. Redirects are the client's to follow, and NativeAuth's requests
    /// must never be (a token request redirected with 307 would carry its credentials elsewhere):
    /// give a client made with `redirectConfiguration: .disallow`. An answer that comes after a
    /// redirect anyway is refused (`AuthError.Code.configurationInvalid`).
    ///
    /// - Parameters:
    ///   - client: The app's client.
    ///   - configuration: Limits and identity (its proxy and TLS settings are the client's).
    ///   - logger: Where request summaries go, at debug level.
    public init(
        client: HTTPClient,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "NativeAuth.HTTP")
    ) {
        self.configuration = configuration
        self.logger = logger
        self.client = client
        self.clientCertificateThumbprint = nil
    }

    deinit {
        SharedHTTPClients.process.release(leases.withLockedValue { $0 })
    }

    /// Gives back this transport's leases on the clients it made, and shuts down (and waits for)
    /// each one no other transport holds; an app's own client is the app's to shut down.
    /// NativeAuthServices' `TransportShutdown` calls it when a service group stops.
    ///
    /// Without it, a client is shut down a few seconds after its last transport is released. A
    /// request sent afterwards still works: it makes a client again.
    public func shutdown() async {
        guard client == nil else { return }
        let held = leases.withLockedValue { leases in
            defer { leases = [] }
            return leases
        }
        await SharedHTTPClients.process.releaseNow(held)
    }

    /// The client for a request through `proxy`: the app's, or a lease on a shared one.
    private func client(proxy: ProxyServer?) throws -> HTTPClient {
        if let client { return client }
        let key = SharedHTTPClients.Key(proxy: proxy, tls: configuration.tls)
        let held = leases.withLockedValue { !$0.insert(key).inserted }
        do {
            return try SharedHTTPClients.process.client(for: key, held: held)
        } catch {
            if !held { leases.withLockedValue { _ = $0.remove(key) } }
            throw error
        }
    }

    public func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        try await exchange(request, body: body, streamingTo: nil)
    }

    /// Sends `request`; a successful answer's body goes to `sink` piece by piece as AsyncHTTPClient
    /// reads it, with no size limit, and ``Configuration/timeout`` counts from the last piece (the
    /// time `sink` takes does not count): a server-sent event stream may last as long as it sends.
    /// The head must still come within ``Configuration/timeout``. A throw of `sink` ends the
    /// exchange (the connection is closed) and comes out as it is.
    public func send(_ request: HTTPRequest, body: Data?, streamingTo sink: @escaping ResponseBodySink)
        async throws -> (HTTPResponse, Data)
    {
        try await exchange(request, body: body, streamingTo: sink)
    }

    private func exchange(_ request: HTTPRequest, body: Data?, streamingTo sink: ResponseBodySink?)
        async throws -> (HTTPResponse, Data)
    {
        guard let url = request.url else {
            throw AuthError(.configurationInvalid, "the request has no valid URL")
        }
        try EndpointPolicy.validate(url)
        let host = url.host ?? "the server"
        let proxy = client == nil ? try configuration.proxy.proxy(for: url) : nil
        let client = try client(proxy: proxy)

        var outbound = HTTPClientRequest(url: url.absoluteString)
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        outbound.headers.reserveCapacity(request.headerFields.count + 1)
        for field in request.headerFields { outbound.headers.add(name: field.name.rawName, value: field.value) }
        if request.headerFields[.userAgent] == nil {
            outbound.headers.add(name: "User-Agent", value: configuration.userAgent)
        }
        // The async API writes a body of known bytes in the same event-loop turn as the head, so a
        // server that answers (401, 403) before reading the body gets the whole request anyway;
        // the older delegate API could write it after that answer began and fail the exchange
        // with `bodyLengthMismatch` (the MCP SDK's servers answer that early).
        if let body { outbound.body = .bytes(ByteBuffer(bytes: body)) }

        let started = NIODeadline.now()
        let deadline = started + TimeAmount(configuration.timeout)
        let received: HTTPClientResponse
        let collected: ByteBuffer?
        let limit = configuration.maxResponseBytes
        let deadlineState = NIOLockedValueBox(DeadlineState.running)
        do {
            // One deadline for the head and a body read whole, kept by a timer on the event loop
            // rather than by AsyncHTTPClient, whose own deadline ends with the head (and may still
            // fire after it when this task resumes late, cutting the body off). A successful answer
            // to stream is read below instead, piece by piece.
            (received, collected) = try await Self.within(
                deadline, on: client.eventLoopGroup.any(), state: deadlineState
            ) { [outbound, streams = sink != nil] in
                let received = try await client.execute(outbound, deadline: .distantFuture)
                if streams, (200..<300).contains(received.status.code) { return (received, nil) }
                return (received, try await received.body.collect(upTo: limit))
            }
        } catch {
            throw Self.mapped(error, host: host, proxy: proxy, configuration: configuration)
        }
        // The head of a stream came as the deadline passed: its timer stopped the request, and the
        // body would fail part-way. A timeout, before any piece reaches the sink. (A body read whole
        // came complete, and is kept.)
        if sink != nil, collected == nil, deadlineState.withLockedValue({ $0 }) == .expired {
            throw Self.mapped(
                HTTPClientError.deadlineExceeded, host: host, proxy: proxy, configuration: configuration)
        }
        // Only an app's client can follow a redirect (the shared ones never do); its answer is
        // not the answer of the server asked, and is refused.
        guard received.history.count <= 1 else {
            throw AuthError(
                .configurationInvalid,
                "the HTTP client followed a redirect from \(host); NativeAuth's requests are never redirected",
                hint: "give the transport an HTTPClient with redirectConfiguration: .disallow")
        }
        let response = HTTPResponse(received)
        let data: Data
        let bytes: Int
        if let sink, collected == nil {
            do {
                bytes = try await Self.forward(received.body, to: sink, idle: configuration.timeout)
            } catch let failure as SinkFailure {
                throw failure.error
            } catch {
                throw Self.mapped(error, host: host, proxy: proxy, configuration: configuration)
            }
            data = Data()
        } else {
            data = collected.map { Data($0.readableBytesView) } ?? Data()
            bytes = data.count
        }
        logger.debug(
            "HTTP exchange",
            metadata: [
                "transport": "AsyncHTTPClient",
                "method": "\(request.method.rawValue)",
                "host": "\(host)",
                "path": "\(url.path)",
                "proxy": "\(proxy.map(\.description) ?? "none")",
                "status": "\(response.status.code)",
                "bytes": "\(bytes)",
                "ms": "\((NIODeadline.now() - started).nanoseconds / 1_000_000)",
            ]
        )
        return (response, data)
    }

    /// Where the deadline of `within` stands: the operation running, its result taken in time, or
    /// the deadline passed first (its timer cancelled the operation).
    enum DeadlineState: Sendable, Equatable {
        case running, met, expired
    }

    /// What `operation` gives, unless `deadline` passes first: a timer on `eventLoop` then cancels
    /// it (AsyncHTTPClient stops the request and closes its connection), `state` becomes
    /// `.expired`, and `HTTPClientError.deadlineExceeded` is thrown. A timer rather than a racing
    /// task: it costs nothing when the operation ends in time.
    ///
    /// The handover is one step under `state`'s lock: once the result is taken (`.met`) the timer
    /// stops nothing, so a stream read afterwards is never cut by it; a timer that fired first leaves
    /// `.expired`, and the caller knows the request was stopped even when its head came.
    private static func within<Value: Sendable>(
        _ deadline: NIODeadline, on eventLoop: any EventLoop, state: NIOLockedValueBox<DeadlineState>,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let task = Task { try await operation() }
        let timer = eventLoop.scheduleTask(deadline: deadline) {
            let expires = state.withLockedValue { state in
                guard state == .running else { return false }
                state = .expired
                return true
            }
            if expires { task.cancel() }
        }
        defer { timer.cancel() }
        do {
            let value = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            state.withLockedValue { if $0 == .running { $0 = .met } }
            return value
        } catch  where state.withLockedValue({ $0 }) == .expired {
            throw HTTPClientError.deadlineExceeded
        }
    }

    /// Hands each piece of `body` to `sink` as it arrives, until its end; fails with
    /// ``StreamIdle`` when the server sends nothing for `idle` (the time in `sink` does not count),
    /// and with ``SinkFailure`` when `sink` throws. Returns the number of bytes.
    private static func forward(_ body: HTTPClientResponse.Body, to sink: @escaping ResponseBodySink, idle: Duration)
        async throws -> Int
    {
        /// Since when the server is waited for; `nil` while `sink` has a piece.
        let waitingSince = NIOLockedValueBox<ContinuousClock.Instant?>(.now)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var count = 0
                for try await piece in body {
                    waitingSince.withLockedValue { $0 = nil }
                    count += piece.readableBytes
                    do { try await sink(Data(piece.readableBytesView)) } catch { throw SinkFailure(error: error) }
                    waitingSince.withLockedValue { $0 = .now }
                }
                return count
            }
            group.addTask {
                while true {
                    guard let since = waitingSince.withLockedValue({ $0 }) else {
                        try await Task.sleep(for: idle)
                        continue
                    }
                    if ContinuousClock.now - since >= idle { throw StreamIdle() }
                    try await Task.sleep(until: since + idle, clock: .continuous)
                }
            }
            defer { group.cancelAll() }
            guard let count = try await group.next() else { throw StreamIdle() }
            return count
        }
    }

    /// A streamed answer whose server sent nothing for the timeout.
    struct StreamIdle: Error {}

    /// What a sink threw, carried past the transport's mapping of errors.
    private struct SinkFailure: Error {
        let error: any Error
    }

    /// The error for a request that got no response, naming the host and the proxy (never a URL's
    /// path or query, never a credential).
    static func mapped(
        _ error: any Error, host: String, proxy: ProxyServer?, configuration: Configuration
    ) -> any Error {
        let timeout = configuration.timeout
        if error is CancellationError { return error }
        let via = proxy.map { " through the proxy \($0)" } ?? ""
        if error is StreamIdle {
            return AuthError(
                .timeout, "the answer from \(host)\(via) stopped: nothing came for \(timeout.seconds) seconds",
                isRetryable: true, underlying: error)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled:
                return CancellationError()
            case .deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout:
                return AuthError(
                    .timeout, "no complete answer from \(host)\(via) within \(timeout.seconds) seconds",
                    isRetryable: true, underlying: error)
            case .proxyAuthenticationRequired:
                return AuthError(
                    .network,
                    "the proxy \(proxy.map(\.description) ?? "") refused to connect to \(host): HTTP 407, proxy authentication required",
                    hint: "put the proxy's user name and password in its URL (http://user:password@host:port)",
                    isRetryable: false, underlying: error)
            case .invalidProxyResponse, .httpProxyHandshakeTimeout:
                return AuthError(
                    .network,
                    "the proxy \(proxy.map(\.description) ?? "") did not open a connection to \(host) (it refused CONNECT or did not answer it)",
                    hint: "check HTTPS_PROXY and NO_PROXY, and that the proxy may reach \(host)",
                    isRetryable: true, underlying: error)
            default:
                break
            }
        }
        if error is NIOTooManyBytesError {
            return AuthError(
                .responseTooLarge,
                "the answer from \(host) is larger than the limit of \(configuration.maxResponseBytes) bytes; it was not read",
                underlying: error)
        }
        if let untrusted = CertificateFailure(error) {
            return AuthError(
                .certificateUntrusted, "the server's certificate is not trusted: \(untrusted.reason) (\(host)\(via))",
                hint: "trust the CA that issued it (`ca_file`, or SSL_CERT_FILE)",
                isRetryable: false, underlying: error)
        }
        let reached = proxy.map { "the proxy \($0) (for \(host))" } ?? host
        return AuthError(
            .network, "could not reach \(reached): \(NetworkFailure.summary(error))",
            hint: proxy == nil
                ? "check the network connection and the server's address"
                : "check the network connection, HTTPS_PROXY and NO_PROXY",
            isRetryable: true, underlying: error)
    }
}

extension HTTPResponse {
    /// The response AsyncHTTPClient received, in swift-http-types' terms.
    fileprivate init(_ received: HTTPClientResponse) {
        var fields = HTTPFields()
        fields.reserveCapacity(received.headers.count)
        for (name, value) in received.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.init(
            status: HTTPResponse.Status(code: Int(received.status.code), reasonPhrase: received.status.reasonPhrase),
            headerFields: fields)
    }
}

/// A TLS failure that is about the server's certificate, and why, in a few words.
private struct CertificateFailure {
    var reason: String

    init?(_ error: any Error) {
        let text = String(describing: error)
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            reason = "it is not for this host name"
        } else if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            reason =
                text.contains("expired")
                ? "it has expired" : "it was not issued by a trusted certificate authority"
        } else {
            return nil
        }
    }
}

/// Short phrases for connection failures.
private enum NetworkFailure {
    static func summary(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the host name could not be resolved"
            }
            return "the connection was refused"
        }
        if let error = error as? IOError {
            return error.errnoCode == ECONNREFUSED
                ? "the connection was refused" : "a socket error (\(error.errnoCode))"
        }
        if error is NIOSSLError { return "the TLS connection failed" }
        if let error = error as? HTTPClientError, error == .remoteConnectionClosed {
            return "the connection was closed"
        }
        // Which failure it was, by its type's fixed wording (never the text of an answer).
        if let error = error as? HTTPClientError { return "the connection failed (\(error))" }
        return "the connection failed (\(type(of: error)))"
    }
}

extension TimeAmount {
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
