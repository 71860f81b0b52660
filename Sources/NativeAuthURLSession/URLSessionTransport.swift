public import Foundation
public import HTTPTypes
internal import HTTPTypesFoundation
public import Logging
@_spi(Provider) public import NativeAuth

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `HTTPTransport` over `URLSession` (FoundationNetworking on Linux): Apple platforms' own,
/// with their proxy and trust settings.
///
/// - Every request has a deadline (``Configuration/timeout``) for the whole exchange, not only
///   between packets; past it the request is cancelled and `AuthError.Code.timeout` is thrown.
/// - A response body larger than ``Configuration/maxResponseBytes`` is refused as soon as its
///   `Content-Length` or its bytes pass the limit: `AuthError.Code.responseTooLarge`.
/// - Redirects are never followed: a 3xx comes back as the response.
/// - Plain `http://` is refused except to loopback hosts.
/// - No cookies, no cache and no credential storage are used.
/// - Requests carry `User-Agent: NativeAuth/<version>` unless they set their own.
/// - Logging (debug level) names the method, host, path and status; never headers, queries or bodies.
public final class URLSessionTransport: HTTPTransport {
    /// Limits and identity of a ``URLSessionTransport``.
    public struct Configuration: Sendable {
        /// The deadline for one whole request, from sending to the last byte. Default 30 seconds.
        public var timeout: Duration
        /// The largest response body accepted, in bytes. Default 4 MiB.
        public var maxResponseBytes: Int
        /// The `User-Agent` sent with requests that have none.
        public var userAgent: String

        /// Creates a configuration; every parameter has the documented default.
        public init(
            timeout: Duration = .seconds(30),
            maxResponseBytes: Int = 4 << 20,
            userAgent: String = "NativeAuth/\(NativeAuthVersion.current)"
        ) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.userAgent = userAgent
        }
    }

    /// The transport's limits and identity.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate
    private let logger: Logger

    /// Creates a transport with its own `URLSession`.
    ///
    /// - Parameters:
    ///   - configuration: Limits and identity.
    ///   - logger: Where request summaries go, at debug level. Defaults to a logger labelled
    ///     `NativeAuth.HTTP`; NativeAuth never bootstraps logging itself.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "NativeAuth.HTTP")) {
        self.configuration = configuration
        self.logger = logger
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCache = nil
        sessionConfiguration.urlCredentialStorage = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // The deadline is enforced by the transport's own timer. URLSession's timeouts are a
        // backstop only: FoundationNetworking truncates them to whole seconds (0.4 s becomes "now").
        let backstop = configuration.timeout.timeInterval.rounded(.up) + 1
        sessionConfiguration.timeoutIntervalForRequest = backstop
        sessionConfiguration.timeoutIntervalForResource = backstop
        let delegate = SessionDelegate()
        self.delegate = delegate
        // The delegate must be the session's: a per-task delegate does not see redirects on Linux.
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        guard let url = request.url else {
            throw AuthError(.configurationInvalid, "the request has no valid URL")
        }
        try EndpointPolicy.validate(url)
        guard var urlRequest = URLRequest(httpRequest: request) else {
            throw AuthError(.configurationInvalid, "the request cannot be sent with URLSession")
        }
        if request.headerFields[.userAgent] == nil {
            urlRequest.setValue(configuration.userAgent, forHTTPHeaderField: "User-Agent")
        }
        urlRequest.httpBody = body
        urlRequest.timeoutInterval = configuration.timeout.timeInterval.rounded(.up) + 1
        urlRequest.httpShouldHandleCookies = false

        let host = url.host ?? "the server"
        let started = ContinuousClock.now
        let task = session.dataTask(with: urlRequest)
        let exchange = Exchange(task: task, host: host, limit: configuration.maxResponseBytes)
        let (urlResponse, data) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.start(exchange, continuation: continuation, timeout: configuration.timeout)
                // A task cancelled before `start` registered the exchange ran `onCancel` too early
                // to stop it: stop it now.
                if Task.isCancelled { delegate.finish(exchange.id, with: .failure(CancellationError())) }
            }
        } onCancel: {
            delegate.finish(exchange.id, with: .failure(CancellationError()))
        }
        guard let response = urlResponse.httpResponse else {
            throw AuthError(.responseMalformed, "the answer from \(host) is not a valid HTTP response")
        }
        logger.debug(
            "HTTP exchange",
            metadata: [
                "transport": "URLSession",
                "method": "\(request.method.rawValue)",
                "host": "\(host)",
                "path": "\(url.path)",
                "status": "\(response.status.code)",
                "bytes": "\(data.count)",
                "ms": "\((ContinuousClock.now - started).milliseconds)",
            ]
        )
        return (response, data)
    }
}

/// One request in flight.
private struct Exchange: Sendable {
    let task: URLSessionDataTask
    let host: String
    let limit: Int
    var id: Int { task.taskIdentifier }
}

/// The session's delegate: collects bodies under the size limit, refuses redirects, enforces the
/// deadline, and resumes each request's continuation exactly once.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        let exchange: Exchange
        let continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>
        var response: HTTPURLResponse?
        var data = Data()
        var timer: Task<Void, Never>?
        /// An HTTP authentication challenge was refused: the task ends cancelled, with `response`.
        var challenged = false
    }

    private let pending = Locked<[Int: Pending]>([:])

    func start(
        _ exchange: Exchange,
        continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>,
        timeout: Duration
    ) {
        pending.withLock { $0[exchange.id] = Pending(exchange: exchange, continuation: continuation) }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.finish(
                exchange.id,
                with: .failure(
                    AuthError(
                        .timeout,
                        "no complete answer from \(exchange.host) within \(timeout.seconds) seconds",
                        isRetryable: true
                    )
                )
            )
        }
        let started = pending.withLock { state -> Bool in
            guard state[exchange.id] != nil else { return false }
            state[exchange.id]?.timer = timer
            return true
        }
        if started {
            exchange.task.resume()
        } else {
            timer.cancel()  // cancelled before it started
        }
    }

    /// Resumes the request's continuation with `result` unless it was already resumed, and stops
    /// the task and its timer.
    func finish(_ id: Int, with result: Result<(HTTPURLResponse, Data), any Error>) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: id) }) else { return }
        entry.timer?.cancel()
        if case .failure = result {
            // Not here: `finish` runs inside task-cancellation handlers, and URLSessionTask.cancel()
            // waits for the session's queue, which can be waiting for the same task (a deadlock
            // seen with FoundationNetworking on Linux).
            let task = entry.exchange.task
            DispatchQueue.global().async { task.cancel() }
        }
        entry.continuation.resume(with: result)
    }

    private func tooLarge(_ exchange: Exchange, size: Int64?) -> AuthError {
        let stated = size.map { " (\($0) bytes)" } ?? ""
        return AuthError(
            .responseTooLarge,
            "the answer from \(exchange.host) is larger than the limit of \(exchange.limit) bytes\(stated); it was not read"
        )
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        let verdict = pending.withLock { state -> AuthError? in
            guard let entry = state[id] else { return nil }
            let expected = response.expectedContentLength
            if expected > entry.exchange.limit { return tooLarge(entry.exchange, size: expected) }
            state[id]?.response = response as? HTTPURLResponse
            return nil
        }
        if let verdict {
            finish(id, with: .failure(verdict))
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let verdict = pending.withLock { state -> AuthError? in
            guard let received = state[id]?.data.count, let exchange = state[id]?.exchange else { return nil }
            if received + data.count > exchange.limit { return tooLarge(exchange, size: nil) }
            // In place: a copy of the entry would make every append copy the whole body so far.
            state[id]?.data.append(data)
            return nil
        }
        if let verdict { finish(id, with: .failure(verdict)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        guard let entry = pending.withLock({ $0[id] }) else { return }
        if error != nil, entry.challenged, let response = entry.response {
            finish(id, with: .success((response, entry.data)))
            return
        }
        if let error {
            let mapped: any Error =
                if let urlError = error as? URLError {
                    urlError.code == .cancelled
                        ? CancellationError() : AuthError.transport(urlError, host: entry.exchange.host)
                } else {
                    AuthError(
                        .network, "the request to \(entry.exchange.host) failed", isRetryable: true, underlying: error)
                }
            finish(id, with: .failure(mapped))
            return
        }
        guard let response = entry.response ?? task.response as? HTTPURLResponse else {
            finish(
                id,
                with: .failure(AuthError(.responseMalformed, "\(entry.exchange.host) sent no HTTP response"))
            )
            return
        }
        finish(id, with: .success((response, entry.data)))
    }

    /// NativeAuth authenticates its requests itself (client secrets, bearer tokens): an HTTP
    /// authentication challenge is never answered with other credentials, and the 401 it came
    /// with is the answer (RFC 6749 §5.2 has servers send `WWW-Authenticate: Basic` with
    /// `invalid_client`). FoundationNetworking on Linux waits on such a challenge until the
    /// deadline when left to its default, and drops the response when it is refused: the
    /// response is kept here, the challenge cancelled, and the 401 returned without its body.
    /// TLS server trust keeps the system's checks.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let httpMethods = [
            NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
            NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
        ]
        guard httpMethods.contains(challenge.protectionSpace.authenticationMethod) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #if canImport(FoundationNetworking)
            let response = (challenge.failureResponse ?? task.response) as? HTTPURLResponse
            pending.withLock { state in
                if let response, state[task.taskIdentifier] != nil {
                    state[task.taskIdentifier]?.response = response
                    state[task.taskIdentifier]?.challenged = true
                }
            }
            completionHandler(.cancelAuthenticationChallenge, nil)
        #else
            completionHandler(.rejectProtectionSpace, nil)
        #endif
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)  // never follow: the 3xx is the answer
    }
}
