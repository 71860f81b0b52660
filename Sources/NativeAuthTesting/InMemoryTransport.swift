public import Foundation
public import HTTPTypes
public import Logging
@_spi(Provider) public import NativeAuth

/// An `HTTPTransport` that hands each request straight to a ``TestHTTPServer`` handler in the
/// same process: no socket, no HTTP parsing, no threads. ``TestHTTPServer/transport`` and
/// ``SandboxAuthorizationServer/transport`` give one for servers started ``TestServerMode/inMemory``.
///
/// It behaves as NativeAuth's real transport does where a test could tell: it refuses plain HTTP
/// to hosts other than loopback, returns every status (redirects are not followed), waits out a
/// response's `delay`, honours cancellation, and fails like a refused connection for a URL that
/// is not the server's. Like the real transport, it logs each exchange at debug level (method,
/// host, path, status), never headers, queries or bodies.
public struct InMemoryTransport: HTTPTransport {
    private let base: URL
    private let handler: TestHTTPServer.Handler
    private let logger: Logger

    /// A transport to `handler`, serving the server at `base` (`http://127.0.0.1:PORT`).
    ///
    /// - Parameters:
    ///   - base: The server's URL; requests to any other host or port fail like a refused connection.
    ///   - logger: Where each exchange is noted, at debug level.
    ///   - handler: Answers every request.
    public init(
        serving base: URL,
        logger: Logger = Logger(label: "NativeAuthTesting.InMemory"),
        handler: @escaping TestHTTPServer.Handler
    ) {
        self.base = base
        self.logger = logger
        self.handler = handler
    }

    /// Hands the request to the handler and returns its answer.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: Its body, if any.
    /// - Returns: The handler's answer.
    /// - Throws: `AuthError` (`network`) for a URL that is not the server's, `CancellationError`.
    public func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        guard let url = request.url else { throw AuthError(.configurationInvalid, "the request has no valid URL") }
        try EndpointPolicy.validate(url)
        guard url.scheme == base.scheme, url.host == base.host, url.port == base.port else {
            throw AuthError(
                .network,
                "could not reach \(url.host ?? "the server"): the connection was refused (in memory)",
                isRetryable: true
            )
        }
        try Task.checkCancellation()
        // The request target as it goes on the wire: the path as written (a trailing slash kept),
        // and the query.
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var headers = request.headerFields.map { ($0.name.rawName, $0.value) }
        if let body, request.headerFields[.contentLength] == nil { headers.append(("Content-Length", "\(body.count)")) }
        let received = TestRequest(
            method: request.method.rawValue, uri: target, headers: headers, body: body ?? Data(), serverURL: base)
        let answer = await handler(received)
        if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        if !answer.chunked, fields[.contentLength] == nil { fields[.contentLength] = "\(answer.body.count)" }
        logger.debug(
            "HTTP exchange (in memory)",
            metadata: [
                "method": "\(request.method.rawValue)", "host": "\(url.host ?? "")", "path": "\(url.path)",
                "status": "\(answer.status)", "bytes": "\(answer.body.count)",
            ]
        )
        return (HTTPResponse(status: HTTPResponse.Status(code: answer.status), headerFields: fields), answer.body)
    }
}
