internal import Foundation
internal import NIOCore
public import NativeAuth

/// Signs in through the system browser and a loopback redirect (RFC 8252 §7.3): the default for
/// command-line tools on a machine with a browser.
///
/// - Listens on `http://127.0.0.1:PORT/callback` (falling back to `[::1]`), never on all
///   interfaces; the port is ephemeral unless configured. The redirect URI uses the IP literal,
///   not `localhost` (RFC 8252 §8.3).
/// - Opens the browser through a ``BrowserOpener`` (``SystemBrowserOpener`` by default) without
///   blocking the listener; when it cannot, prints the URL. The browser is given a one-time
///   address on the listener (`/start/RANDOM`), never the URL itself, which would be in its
///   command line for other users to read: the first fetch of that address redirects to the
///   authorization URL (or posts an end-session page's ID token in a form); a second fetch ends
///   the sign-in with `AuthError.Code.invalidState`.
/// - On Linux, refuses requests from sockets of another user of the machine (`/proc/net/tcp`),
///   so that nobody else can deliver a callback, even with the right `state`. Without an opener (``printURL(port:timeout:output:)``)
///   it prints the URL and how to forward the port over SSH, and never launches a browser.
/// - Answers the browser with a static page; other paths get 404, callbacks of another sign-in
///   (wrong `state`) get an error page and the wait goes on.
/// - Ends with `AuthError.Code.timeout` after ``Configuration/timeout`` (5 minutes by default),
///   with `AuthError.Code.loginCancelled` when the task is cancelled, and always closes the
///   listener.
public struct LoopbackPresenter: UserAgentPresenter {
    /// The presenter's settings.
    public struct Configuration: Sendable {
        /// The port to listen on; 0 (the default) for a free ephemeral one.
        public var port: Int
        /// The callback path. Default `/callback`.
        public var callbackPath: String
        /// How long to wait for the callback. Default 5 minutes.
        public var timeout: Duration
        /// How to open the browser; `nil` prints the URL instead (for machines without one).
        public var opener: (any BrowserOpener)?
        /// Where the URL and hints are written. Default: standard error.
        public var output: ConsoleOutput
        /// How long one connection to the listener may stay open. Default 10 seconds: a browser
        /// sends its request at once, while a client that trickles a request in byte by byte, or
        /// holds an idle socket, would otherwise keep a connection for as long as it likes.
        public var connectionLifetime: Duration
        /// How many connections may be open at once; past it the oldest is closed. Default 64.
        public var maximumConnections: Int
        /// Whether the browser posts an end-session URL that carries an ID token (`id_token_hint`)
        /// as a form, keeping the token out of its history; `false` redirects to the URL instead.
        /// Default `true`: OpenID Connect RP-Initiated Logout 1.0 §2 says every provider accepts
        /// POST, but some refuse it (django-oauth-toolkit asks for its own CSRF token). The
        /// command-line tools set it from the `end_session_method` setting
        /// (`ProviderConfiguration.endSessionMethod`).
        public var postsEndSessionForm: Bool
        /// What the browser is opened for, in the words printed when it cannot be opened ("to sign
        /// in", "to sign out"). Default ``Purpose/signIn``.
        public var purpose: Purpose

        /// What a presenter opens the browser for.
        public enum Purpose: Sendable {
            /// A sign-in.
            case signIn
            /// A provider's end-session page.
            case signOut

            var phrase: String {
                switch self {
                case .signIn: "to sign in"
                case .signOut: "to sign out"
                }
            }
        }

        /// Creates settings; every parameter has the documented default.
        public init(
            port: Int = 0,
            callbackPath: String = "/callback",
            timeout: Duration = .seconds(300),
            opener: (any BrowserOpener)? = SystemBrowserOpener(),
            output: ConsoleOutput = .standardError,
            connectionLifetime: Duration = .seconds(10),
            maximumConnections: Int = 64,
            postsEndSessionForm: Bool = true,
            purpose: Purpose = .signIn
        ) {
            self.purpose = purpose
            self.port = port
            self.callbackPath = callbackPath
            self.timeout = timeout
            self.opener = opener
            self.output = output
            self.connectionLifetime = connectionLifetime
            self.maximumConnections = maximumConnections
            self.postsEndSessionForm = postsEndSessionForm
        }

        /// The limits for the receiver.
        var limits: ConnectionHandlers.Limits {
            let (seconds, attoseconds) = connectionLifetime.components
            let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let lifetime: TimeAmount =
                nanoseconds.overflow
                ? .hours(24) : .nanoseconds(max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000))
            return ConnectionHandlers.Limits(lifetime: lifetime, maximumConnections: maximumConnections)
        }
    }

    /// The presenter's settings.
    public let configuration: Configuration

    /// A presenter that never launches a browser: it prints the authorization URL, and a hint on
    /// forwarding the port over SSH (`ssh -L PORT:127.0.0.1:PORT host`), and waits for the
    /// callback on the loopback interface. For remote shells and machines without a browser.
    ///
    /// - Parameters:
    ///   - port: The port to listen on; 0 for a free one. Choose one to forward it in advance.
    ///   - timeout: How long to wait for the callback.
    ///   - output: Where the URL and the hint are written.
    public static func printURL(
        port: Int = 0,
        timeout: Duration = .seconds(300),
        output: ConsoleOutput = .standardError
    ) -> LoopbackPresenter {
        LoopbackPresenter(configuration: Configuration(port: port, timeout: timeout, opener: nil, output: output))
    }

    /// Creates a presenter.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public func beginSession() async throws -> any UserAgentSession {
        LoopbackSession(
            receiver: try await Self.startReceiver(
                port: configuration.port,
                callbackPath: configuration.callbackPath,
                limits: configuration.limits
            ),
            configuration: configuration
        )
    }

    /// A listening receiver for `port` (0: a free one) and `callbackPath` (a leading `/` added).
    static func startReceiver(
        port: Int,
        callbackPath: String,
        limits: ConnectionHandlers.Limits = LoopbackReceiver.defaultLimits
    ) async throws -> LoopbackReceiver {
        guard (0...65_535).contains(port) else {
            throw AuthError(.configurationInvalid, "the port \(port) is not between 0 and 65535")
        }
        return try await LoopbackReceiver.start(port: port, path: absolutePath(callbackPath), limits: limits)
    }

    /// `path` with a leading `/`.
    static func absolutePath(_ path: String) -> String {
        path.hasPrefix("/") ? path : "/" + path
    }
}

/// A loopback presenter's session: the bound receiver, until the callback arrives.
struct LoopbackSession: UserAgentSession {
    let receiver: LoopbackReceiver
    let configuration: LoopbackPresenter.Configuration

    var redirectURI: URL { receiver.redirectURI }

    func authorize<Outcome: Sendable>(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
    ) async throws -> Outcome {
        let received = await receiver.receive(with: handler)
        let output = configuration.output
        // The opener runs on its own and is not cancelled: it may be inside an API whose
        // cancellation handler deadlocks on Linux (URLSession's), and a browser launch is harmless.
        // It only must not print the URL once the sign-in is over.
        let finished = Locked(false)
        if let opener = configuration.opener {
            // The browser's command line is readable by every local user: it gets a one-time
            // address on the listener, which sends it on to the real page.
            let start = await receiver.startAddress(
                for: authorizationURL, postingSecrets: configuration.postsEndSessionForm)
            Task {
                do {
                    try await opener.open(start)
                } catch {
                    guard !finished.withLock({ $0 }) else { return }
                    output.write("Could not open a browser. Open this URL \(configuration.purpose.phrase):")
                    output.writeURL(authorizationURL)
                }
            }
        } else {
            output.write("Open this URL in a browser \(configuration.purpose.phrase):")
            output.writeURL(authorizationURL)
            output.write(receiver.portForwardingHint)
        }
        defer { finished.withLock { $0 = true } }
        return try await waitForCallback(received)
    }

    private func waitForCallback<Outcome: Sendable>(
        _ received: @escaping @Sendable () async -> Result<Outcome, AuthError>?
    ) async throws -> Outcome {
        let outcome = await CallbackRace.first(timeout: configuration.timeout, [received])
        await receiver.close()
        return try CallbackRace.finish(outcome)
    }

    func close() async {
        await receiver.close()
    }
}
