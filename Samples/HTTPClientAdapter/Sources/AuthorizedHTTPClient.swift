public import AsyncHTTPClient
internal import Foundation
public import HTTPTypes
public import NIOCore
internal import NIOHTTP1
public import NativeAuth

/// AsyncHTTPClient's `HTTPClient`, its requests sent with an ``Authenticator``'s tokens: an adapter
/// of NativeAuth's public sender (`TokenSender`) for a stack of one's own, as a Vapor, gRPC or
/// WebSocket adapter is made.
///
/// ```swift
/// let client = AuthorizedHTTPClient(authenticator: authenticator, target: .signIn.confined(to: api))
/// let response = try await client.execute(HTTPRequest(method: .get, url: api.appending(path: "me")))
/// let body = try await response.body.collect(upTo: 1 << 20)
/// ```
///
/// Everything NativeAuth does for its own requests happens here too, on public API alone: a
/// refresh ahead of expiry, one refresh and one retry on a 401 (one for every caller and process
/// at once), a DPoP proof of each request and a second one with the server's nonce, a step-up
/// with a presenter. The answer comes back as the client gave it, its body unread.
public struct AuthorizedHTTPClient: Sendable {
    /// The client requests go through.
    public let client: HTTPClient
    /// Whose tokens go with them, and where they may go.
    public let sender: TokenSender
    /// How long each attempt may take.
    public var timeout: TimeAmount
    /// The largest body of an answer read for its error (a refusal), in bytes.
    public var refusalBodyLimit = 1 << 20

    /// A client sending with `authenticator`'s tokens for `target`.
    ///
    /// - Parameters:
    ///   - client: The app's `HTTPClient` (it stays the app's to shut down).
    ///   - authenticator: Whose tokens.
    ///   - target: Whose token, and where it may go.
    ///   - presenter: Where a step-up's sign-in is shown; `nil` for none.
    ///   - timeout: How long each attempt may take.
    public init(
        client: HTTPClient = .shared, authenticator: Authenticator, target: TokenTarget = .signIn,
        stepUpWith presenter: (any UserAgentPresenter)? = nil, timeout: TimeAmount = .seconds(30)
    ) {
        self.client = client
        self.sender = authenticator.sender(for: target, stepUpWith: presenter)
        self.timeout = timeout
    }

    /// Sends `request` (with `body`, sent again as it is on a retry) and returns the answer to
    /// deliver.
    ///
    /// - Throws: `AuthError` as `TokenSender.send(_:body:reading:next:)` does; AsyncHTTPClient's
    ///   errors as they are.
    public func execute(_ request: HTTPRequest, body: ByteBuffer? = nil) async throws -> HTTPClientResponse {
        let (client, timeout, limit) = (client, timeout, refusalBodyLimit)
        let (_, response) = try await sender.send(request, body: body) { (response: HTTPClientResponse) in
            Data(try await response.body.collect(upTo: limit).readableBytesView)
        } next: { (authorized: HTTPRequest, body: ByteBuffer?) in
            let response = try await client.execute(try Self.clientRequest(authorized, body: body), timeout: timeout)
            return (Self.response(of: response), response)
        }
        return response
    }

    /// `request` as AsyncHTTPClient's.
    static func clientRequest(_ request: HTTPRequest, body: ByteBuffer?) throws -> HTTPClientRequest {
        guard let url = request.url else { throw AuthError(.configurationInvalid, "the request has no URL") }
        var sent = HTTPClientRequest(url: url.absoluteString)
        sent.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields { sent.headers.add(name: field.name.rawName, value: field.value) }
        if let body { sent.body = .bytes(body) }
        return sent
    }

    /// The head of AsyncHTTPClient's answer, as NativeAuth reads it.
    static func response(of response: HTTPClientResponse) -> HTTPResponse {
        var head = HTTPResponse(status: .init(code: Int(response.status.code)))
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { head.headerFields.append(HTTPField(name: name, value: value)) }
        }
        return head
    }
}
