public import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
@_spi(Provider) public import NativeAuth
internal import NativeAuthPresenters
internal import NativeAuthURLSession

/// Checks that a `UserAgentPresenter` keeps every promise of the protocol, in one line
/// of a test. The suite plays the browser: you say how a redirect reaches your presenter.
///
/// ```swift
/// @Test func theLoopbackPresenterConforms() async throws {
///     try await PresenterConformance(
///         makePresenter: { LoopbackPresenter(configuration: .init(opener: nil, output: ConsoleOutput { _ in })) },
///         deliver: PresenterConformance.loopbackBrowser,
///         isReleased: PresenterConformance.loopbackPortIsFree
///     ).run()
/// }
/// ```
///
/// What it checks, each failure named in the ``ConformanceFailure`` that ``run()`` throws:
/// - the redirect URI is an absolute `http` or `https` URL, and a loopback one uses an IP literal,
///   never `localhost` (RFC 8252 §8.3);
/// - every callback reaches the handler as it was delivered; after `CallbackDisposition.ignore`
///   the wait goes on, and the first `CallbackDisposition.complete` ends it with its
///   result, success or failure;
/// - cancelling the waiting task ends the wait at once with `login_cancelled`;
/// - the session releases what it holds after a success, a failure, a cancellation and `close()`
///   (when you give `isReleased`).
///
/// A delivery may come before the presenter is ready for it (a loopback receiver answers "not this
/// sign-in" then); the suite delivers again until the handler has seen it, so `deliver` may be
/// called more than once for one callback.
public struct PresenterConformance: Sendable {
    /// Delivers the redirect the browser would make, to the session whose redirect URI is the URL's.
    public typealias Deliver = @Sendable (_ callback: URL, _ presenter: any UserAgentPresenter) async throws -> Void

    private let makePresenter: @Sendable () async throws -> any UserAgentPresenter
    private let deliver: Deliver
    private let isReleased: (@Sendable (_ redirectURI: URL) async -> Bool)?

    /// Creates the suite.
    ///
    /// - Parameters:
    ///   - makePresenter: A new presenter; the suite makes one per check.
    ///   - deliver: Brings a callback URL to the presenter, as a browser or a person would (an HTTP
    ///     request to a loopback receiver, a line for a paste prompt).
    ///   - isReleased: Whether what a session of the redirect URI held is free again (the loopback
    ///     port); `nil` skips those checks.
    public init(
        makePresenter: @escaping @Sendable () async throws -> any UserAgentPresenter,
        deliver: @escaping Deliver,
        isReleased: (@Sendable (_ redirectURI: URL) async -> Bool)? = nil
    ) {
        self.makePresenter = makePresenter
        self.deliver = deliver
        self.isReleased = isReleased
    }

    /// Delivers a callback to a loopback presenter the way a browser does: a GET of the URL.
    public static let loopbackBrowser: Deliver = { callback, _ in
        var request = HTTPRequest(method: .get, url: callback)
        request.headerFields[.accept] = "text/html"
        _ = try await URLSessionTransport().send(request, body: nil)
    }

    /// Delivers a callback to a paste presenter (`ManualPastePresenter`, `LoopbackAndPastePresenter`)
    /// whose reader is a ``ScriptedLineReader``, the way a person does: the URL, pasted.
    public static let pasteBrowser: Deliver = { callback, presenter in
        let reader: (any LineReader)? =
            (presenter as? ManualPastePresenter)?.configuration.reader
            ?? (presenter as? LoopbackAndPastePresenter)?.configuration.reader
        guard let scripted = reader as? ScriptedLineReader else {
            throw AuthError(.configurationInvalid, "pasteBrowser needs a paste presenter with a ScriptedLineReader")
        }
        scripted.feed(callback.absoluteString)
    }

    /// Whether the loopback port of `redirectURI` can be bound again.
    public static let loopbackPortIsFree: @Sendable (URL) async -> Bool = { redirectURI in
        guard let port = redirectURI.port else { return false }
        return await canBind(port: port)
    }

    /// Runs every check.
    ///
    /// - Throws: ``ConformanceFailure`` listing every requirement the presenter failed.
    public func run() async throws {
        let report = ConformanceReport("UserAgentPresenter \(type(of: try await makePresenter()))")
        await report.run("redirect URI") { try await checkRedirectURI(report) }
        await report.run("ignore, then complete") { try await checkIgnoreThenComplete(report) }
        await report.run("a failure ends the wait") { try await checkFailure(report) }
        await report.run("cancellation") { try await checkCancellation(report) }
        await report.run("close") { try await checkClose(report) }
        try report.finish()
    }

    private func checkRedirectURI(_ report: ConformanceReport) async throws {
        let session = try await makePresenter().beginSession()
        defer { Task { await session.close() } }
        let uri = session.redirectURI
        let scheme = uri.scheme?.lowercased()
        report.check(
            (scheme == "http" || scheme == "https") && uri.host?.isEmpty == false,
            "the redirect URI must be an absolute http or https URL; it is \(uri.absoluteString)")
        report.check(
            uri.host?.lowercased() != "localhost",
            "a loopback redirect URI must use the IP literal, not localhost (RFC 8252 §8.3): \(uri.absoluteString)")
        await session.close()
    }

    /// A callback for `session` carrying `marker`, with a code like any authorization response.
    private static func callback(_ session: any UserAgentSession, _ marker: String) -> URL {
        let fields = [FormField("code", "conformance-code"), FormField("conformance", marker)]
        return FormURLEncoding.url(session.redirectURI.absoluteString, adding: fields) ?? session.redirectURI
    }

    private static func marker(of received: AuthorizationCallback) -> String? {
        guard case .redirect(let url) = received else { return nil }
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return FormURLEncoding.decode(query).first(named: "conformance")
    }

    /// Delivers `callback` until `seen` says the handler got it or `waiting` ended, for at most
    /// 10 seconds.
    private func deliverUntilSeen(
        _ callback: URL,
        presenter: any UserAgentPresenter,
        waiting: Waiting,
        seen: @escaping @Sendable () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        let done = { seen() || waiting.hasEnded }
        while !done(), ContinuousClock.now < deadline {
            try? await deliver(callback, presenter)
            for _ in 0..<20 where !done() { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// One `authorize` call in a task of its own, and whether it has ended.
    private struct Waiting: Sendable {
        let task: Task<AuthorizationResponse, any Error>
        private let ended: NIOLockedValueBox<Bool>

        init(
            _ session: any UserAgentSession,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<AuthorizationResponse>
        ) {
            let ended = NIOLockedValueBox(false)
            self.ended = ended
            task = Task {
                defer { ended.withLockedValue { $0 = true } }
                return try await session.authorize(PresenterConformance.authorizationURL, handler: handler)
            }
        }

        var hasEnded: Bool { ended.withLockedValue { $0 } }

        /// The call's outcome, or `nil` (and the task cancelled) when it takes longer than `limit`.
        func outcome(within limit: Duration) async -> Result<AuthorizationResponse, any Error>? {
            let task = task
            return await NativeAuthTesting.within(limit) { try await task.value }
        }
    }

    private func checkIgnoreThenComplete(_ report: ConformanceReport) async throws {
        let presenter = try await makePresenter()
        let session = try await presenter.beginSession()
        let redirectURI = session.redirectURI
        let received = NIOLockedValueBox<[String]>([])
        let waiting = Waiting(session) { callback in
            guard let marker = Self.marker(of: callback) else { return .ignore }
            received.withLockedValue { $0.append(marker) }
            guard marker == "complete" else { return .ignore }
            return .complete(.success(AuthorizationResponse(code: "code-1", issuer: nil)))
        }
        try await deliverUntilSeen(Self.callback(session, "ignored"), presenter: presenter, waiting: waiting) {
            received.withLockedValue { $0.contains("ignored") }
        }
        report.check(received.withLockedValue { $0.contains("ignored") }, "a delivered callback must reach the handler")
        try await deliverUntilSeen(Self.callback(session, "complete"), presenter: presenter, waiting: waiting) {
            received.withLockedValue { $0.contains("complete") }
        }
        switch await waiting.outcome(within: .seconds(10)) {
        case nil:
            report.fail("the first callback the handler completes must end the wait; it still waited after 10 s")
        case .success(let response):
            report.check(
                response.code == "code-1" && received.withLockedValue { $0 } == ["ignored", "complete"],
                "after an ignored callback the wait must go on, and end with the completing callback's response"
                    + " (it returned \(response) after \(received.withLockedValue { $0 }))")
        case .failure(let error):
            report.fail(
                "after an ignored callback the wait must go on, and end with the completing one; it threw \(error)")
        }
        await checkReleased(redirectURI, after: "a completed sign-in", report)
    }

    private func checkFailure(_ report: ConformanceReport) async throws {
        let presenter = try await makePresenter()
        let session = try await presenter.beginSession()
        let redirectURI = session.redirectURI
        let seen = NIOLockedValueBox(false)
        let refusal = AuthError(.authorizationFailed, "refused by the conformance suite", oauthError: "access_denied")
        let waiting = Waiting(session) { callback in
            guard Self.marker(of: callback) == "fail" else { return .ignore }
            seen.withLockedValue { $0 = true }
            return .complete(.failure(refusal))
        }
        try await deliverUntilSeen(Self.callback(session, "fail"), presenter: presenter, waiting: waiting) {
            seen.withLockedValue { $0 }
        }
        switch await waiting.outcome(within: .seconds(10)) {
        case nil:
            report.fail("a callback completed with a failure must end the wait; it still waited after 10 s")
        case .success:
            report.fail("a callback completed with a failure must make authorize throw it; it returned")
        case .failure(let error):
            report.check(
                (error as? AuthError)?.oauthError == "access_denied",
                "authorize must throw the failure the handler completed with, not \(error)")
        }
        await checkReleased(redirectURI, after: "a failed sign-in", report)
    }

    private func checkCancellation(_ report: ConformanceReport) async throws {
        let presenter = try await makePresenter()
        let session = try await presenter.beginSession()
        let redirectURI = session.redirectURI
        let seen = NIOLockedValueBox(false)
        let waiting = Waiting(session) { callback in
            if Self.marker(of: callback) == "waiting" { seen.withLockedValue { $0 = true } }
            return .ignore
        }
        // Once a callback was ignored, the session is surely waiting.
        try await deliverUntilSeen(Self.callback(session, "waiting"), presenter: presenter, waiting: waiting) {
            seen.withLockedValue { $0 }
        }
        waiting.task.cancel()
        // Far below any sign-in timeout (minutes), yet loose enough for a loaded two-core machine
        // running the whole suite at once, where 2 s was once exceeded without any fault.
        switch await waiting.outcome(within: .seconds(10)) {
        case nil:
            report.fail("cancelling the task must end the wait at once; it still waited after 10 s")
        case .success:
            report.fail("a cancelled wait must throw login_cancelled; it returned a response")
        case .failure(let error):
            report.check(
                (error as? AuthError)?.code == .loginCancelled,
                "a cancelled wait must throw login_cancelled, not \(error)")
        }
        await checkReleased(redirectURI, after: "a cancelled sign-in", report)
    }

    private func checkClose(_ report: ConformanceReport) async throws {
        let session = try await makePresenter().beginSession()
        let redirectURI = session.redirectURI
        await session.close()
        await checkReleased(redirectURI, after: "close()", report)
    }

    private func checkReleased(_ redirectURI: URL, after what: String, _ report: ConformanceReport) async {
        guard let isReleased else { return }
        // Releasing may finish just after the wait ends: give it a moment.
        for _ in 0..<100 {
            if await isReleased(redirectURI) { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        report.fail("the session must release what it holds after \(what) (\(redirectURI.absoluteString))")
    }

    static let authorizationURL = URL(string: "https://conformance.invalid/authorize") ?? URL(fileURLWithPath: "/")
}
