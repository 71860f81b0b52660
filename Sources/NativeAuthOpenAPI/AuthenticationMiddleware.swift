public import Foundation
public import HTTPTypes
internal import HTTPTypesFoundation
public import NativeAuth
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientMiddleware` that gives an OpenAPI client's operations the
/// access tokens of an `Authenticator` through its `TokenSender`, with everything
/// `Authenticator.send(_:body:for:stepUpWith:streamingTo:)` does: a refresh ahead of expiry, and on a 401 one refresh (one for every operation and process
/// waiting at once) and one retry with the same body; DPoP proofs of each operation's own method
/// and URL, and a second proof when the server asks for a nonce; RFC 9728 resource metadata when
/// the configuration follows it; a step-up when the app gives a presenter for one.
///
/// ```swift
/// let client = Client(
///     serverURL: api, transport: AsyncHTTPClientTransport(),
///     middlewares: [AuthenticationMiddleware(authenticator: authenticator, api: api)])
/// let profile = try await client.getProfile()
/// ```
///
/// A token goes only to URLs under `api` (or under an operation's own resource): an operation the
/// generated client sends elsewhere fails with `AuthError.Code.configurationInvalid`,
/// and nothing is sent. A 403 that is not a scope challenge, and every other answer, is the
/// operation's: it comes back as it is.
public struct AuthenticationMiddleware: ClientMiddleware {
    /// The token an operation carries, when it is not the sign-in's own.
    public struct Operation: Sendable, Equatable {
        /// The resource (RFC 8707) whose token the operation carries; `nil` for the middleware's
        /// `api`. The operation's URL must lie under it.
        public var resource: URL?
        /// The scopes of that token; `nil` for the sign-in's.
        public var scopes: [String]?

        /// An operation's token: for `resource` (`nil`: the middleware's `api`), with `scopes`
        /// (`nil`: the sign-in's).
        public init(resource: URL? = nil, scopes: [String]? = nil) {
            self.resource = resource
            self.scopes = scopes
        }
    }

    /// Whose tokens the operations carry.
    public let authenticator: Authenticator
    /// The API the sign-in's tokens are for: operations whose URL lies under it get a token.
    public let api: URL
    /// The operations (by their `operationID`) that carry a token of their own: for another
    /// resource, or with other scopes.
    public var operations: [String: Operation]
    /// Where a step-up's sign-in is shown (RFC 9470 challenges, a 403 naming missing scopes);
    /// `nil`: such an answer is an error (`AuthError.Code.stepUpRequired`,
    /// `AuthError.Code.insufficientScope`).
    public var stepUpPresenter: (any UserAgentPresenter)?
    /// The largest request body read into memory so that it can be sent again after a refused
    /// token. A body the client can iterate more than once (what generated clients make of JSON,
    /// forms and text) is never copied; a larger one-pass stream goes once, and a refusal of its
    /// token is an error saying the operation can be sent again.
    public var replayableBodyLimit: Int
    /// The largest answer body read for an error or before a retry.
    public var refusalBodyLimit = 1 << 20

    /// A middleware giving the operations of a client of `api` the tokens of `authenticator`.
    ///
    /// - Parameters:
    ///   - authenticator: Whose tokens the operations carry.
    ///   - api: The API the sign-in's tokens are for (the client's server URL, or a parent of it).
    ///   - operations: The operations whose token is another resource's, or has other scopes.
    ///   - presenter: Where a step-up's sign-in is shown; `nil` for none.
    ///   - replayableBodyLimit: The largest one-pass request body kept for a retry (4 MiB).
    public init(
        authenticator: Authenticator, api: URL, operations: [String: Operation] = [:],
        stepUpWith presenter: (any UserAgentPresenter)? = nil, replayableBodyLimit: Int = 4 << 20
    ) {
        self.authenticator = authenticator
        self.api = api
        self.operations = operations
        self.stepUpPresenter = presenter
        self.replayableBodyLimit = replayableBodyLimit
    }

    /// Sends the operation through `next` with the access token of its resource, and acts on the
    /// answer as `TokenSender.send(_:body:reading:next:)` does (see the type's overview).
    ///
    /// - Throws: `AuthError`: `configurationInvalid` for an operation outside the API, the
    ///   authenticator's errors (`loginRequired`, `invalidToken` after the retry, a step-up or a
    ///   missing scope without a presenter); whatever `next` throws, as it is.
    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let url = try Self.url(of: request, baseURL: baseURL, operationID: operationID)
        let operation = operations[operationID]
        let resource = operation?.resource ?? api
        let target = (operation.map { TokenTarget.resource($0.resource ?? api, scopes: $0.scopes) } ?? .signIn)
            .confined(to: resource)
        var absolute = request
        absolute.url = url
        let body = try await Self.replayable(body, limit: replayableBodyLimit)
        let limit = refusalBodyLimit
        let sender = authenticator.sender(for: target, stepUpWith: stepUpPresenter)
        let sent = Locked(false)
        // Each attempt goes through the rest of the client's stack as the operation's own request
        // (a path relative to its server), with the headers NativeAuth set.
        return try await sender.send(absolute, body: body) { body in
            guard let body else { return Data() }
            return (try? await Data(collecting: body, upTo: limit)) ?? Data()
        } next: { authorized, body in
            let again = sent.withLock { sent in
                defer { sent = true }
                return sent
            }
            if again, body.onePass {
                throw AuthError(
                    .invalidToken,
                    "the server refused the first attempt of the operation \(operationID) (its access token or its"
                        + " DPoP proof), and its body is a stream that can be read once; it was not sent again",
                    hint: "send the operation again: a new token is ready", operation: .apiRequest,
                    status: 401, isRetryable: true)
            }
            var relative = request
            relative.headerFields = authorized.headerFields
            return try await next(relative, body.body, baseURL)
        }
    }

    /// The URL an OpenAPI transport sends `request` to: `baseURL` with the request's path and query
    /// appended (as the runtime's transports build it).
    static func url(of request: HTTPRequest, baseURL: URL, operationID: String) throws -> URL {
        // A base URL without query or fragment (the usual server URL): the two joined as text,
        // parsed once. The same URL as the components below give, at a fraction of the cost.
        let base = baseURL.absoluteString
        if !base.contains(where: { $0 == "?" || $0 == "#" }), let url = URL(string: base + (request.path ?? "")) {
            return url
        }
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let relative = URLComponents(string: request.path ?? "")
        else {
            throw AuthError(
                .configurationInvalid, "the operation \(operationID) has no URL that can be read",
                operation: .apiRequest)
        }
        components.percentEncodedPath += relative.percentEncodedPath
        components.percentEncodedQuery = relative.percentEncodedQuery
        guard let url = components.url else {
            throw AuthError(
                .configurationInvalid, "the operation \(operationID) has no URL that can be read",
                operation: .apiRequest)
        }
        return url
    }

    /// A request body, and whether it can be sent once only.
    struct Replayable: Sendable {
        var body: HTTPBody?
        var onePass: Bool
    }

    /// `body` in a form that can be sent again: as it is when it can be iterated again, read into
    /// memory when it is a one-pass stream of at most `limit` bytes, and else as it is, once.
    static func replayable(_ body: HTTPBody?, limit: Int) async throws -> Replayable {
        guard let body, body.iterationBehavior == .single else { return Replayable(body: body, onePass: false) }
        guard case .known(let length) = body.length, length <= limit else {
            return Replayable(body: body, onePass: true)
        }
        let bytes = try await ArraySlice<UInt8>(collecting: body, upTo: limit)
        return Replayable(body: HTTPBody(bytes), onePass: false)
    }
}
