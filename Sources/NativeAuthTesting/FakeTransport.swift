public import Foundation
public import HTTPTypes
public import NativeAuth

/// An `HTTPTransport` that answers with a closure, without any network: for unit tests of code
/// that takes a transport.
///
/// ```swift
/// let transport = FakeTransport { request, body in
///     #expect(request.path == "/token")
///     return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
///             Data(#"{"access_token": "at-1", "token_type": "Bearer"}"#.utf8))
/// }
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: transport)
/// ```
///
/// The closure sees every request as NativeAuth sends it (headers, form body); it may throw, like
/// a transport without an answer (`AuthError` with code `network`). Use a ``TestHTTPServer`` instead
/// when the real HTTP stack should run too.
public struct FakeTransport: HTTPTransport {
    /// Answers one request.
    public typealias Handler = @Sendable (HTTPRequest, Data?) async throws -> (HTTPResponse, Data)

    private let handler: Handler

    /// Creates a transport that answers with `handler`.
    ///
    /// - Parameter handler: Called for every request, with the request and its body.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Passes the request to the closure.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: Its body, if any.
    /// - Returns: What the closure answered.
    /// - Throws: What the closure threw.
    public func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        try await handler(request, body)
    }
}
