public import Foundation
public import HTTPTypes

/// Sends one HTTP request and returns the response: the seam between NativeAuth and the network.
///
/// The core ships none: NativeAuthURLSession's `URLSessionTransport` (Apple platforms' own) and
/// NativeAuthAsyncHTTPClient's `AsyncHTTPClientTransport` (proxies, a private CA, client
/// certificates, an app's `HTTPClient`; the default of NativeAuthCommands' tools on Linux) are the
/// standard ones. Tests and adopters can pass any other, such as a closure-backed fake.
///
/// ### Implementation requirements
/// - Return every response the server sends, whatever its status: 4xx and 5xx are not errors at
///   this level. Throw only when there is no response (``AuthError/Code/network``,
///   ``AuthError/Code/timeout``, ``AuthError/Code/responseTooLarge``, `CancellationError`).
/// - Never follow redirects: return the 3xx response. OAuth endpoints must not be redirected, and
///   a redirect would carry the request's credentials elsewhere.
/// - Honour task cancellation.
/// - Never log header values or bodies: they carry tokens and secrets.
public protocol HTTPTransport: Sendable {
    /// Sends `request` with an optional body and returns the response with its whole body.
    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data)

    /// Sends `request` as ``send(_:body:)`` does, except that the body of a successful answer
    /// (2xx) is not collected: each piece goes to `sink` as it arrives (a server-sent event
    /// stream, a long download), with no size limit and a timeout that counts from the last piece,
    /// and the body returned is empty. Any other answer comes back whole, as from
    /// ``send(_:body:)``, so that 401 and 403 can be acted on.
    ///
    /// The default implementation sends with ``send(_:body:)`` and hands a successful answer's
    /// body to `sink` in one piece; a transport that can stream implements it.
    func send(_ request: HTTPRequest, body: Data?, streamingTo sink: @escaping ResponseBodySink)
        async throws -> (HTTPResponse, Data)

    /// The SHA-256 thumbprint (`x5t#S256`, base64url) of the TLS client certificate this transport
    /// presents, or `nil` when it presents none (the default). NativeAuth binds certificate-bound
    /// access tokens (RFC 8705 §3) to it, and sends such a token only through a transport that
    /// presents the same certificate.
    var clientCertificateThumbprint: String? { get }

    /// Stops what the transport runs for itself (its connection pools), waiting until it has; what
    /// it was given (an app's client) stays the app's. The default does nothing. NativeAuthServices'
    /// `TransportShutdown` calls it on a service group's graceful shutdown. A request sent
    /// afterwards still works: a transport starts what it needs again.
    func shutdown() async
}

extension HTTPTransport {
    public var clientCertificateThumbprint: String? { nil }

    public func shutdown() async {}

    public func send(_ request: HTTPRequest, body: Data?, streamingTo sink: @escaping ResponseBodySink)
        async throws -> (HTTPResponse, Data)
    {
        let (response, data) = try await send(request, body: body)
        guard response.status.kind == .successful else { return (response, data) }
        try await sink(data)
        return (response, Data())
    }
}

/// Where the body of a successful answer goes, piece by piece as it arrives
/// (``HTTPTransport/send(_:body:streamingTo:)``). A piece may end anywhere, also inside a line or
/// a character; a throw ends the exchange.
public typealias ResponseBodySink = @Sendable (Data) async throws -> Void
