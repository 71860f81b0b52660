internal import Foundation
public import NativeAuth

/// Listens on loopback and reads a paste at the same time: the default for `--no-browser`.
///
/// The person opens the printed URL wherever there is a browser. When the loopback port is
/// forwarded to that machine (the hint shows `ssh -L PORT:127.0.0.1:PORT HOST`), the browser's
/// redirect completes the sign-in; when it is not, the browser ends on a "cannot connect" page and
/// the person pastes its address. Whichever arrives first wins; the other is cancelled and has
/// stopped (listener closed, reader released) before `UserAgentSession.authorize(_:handler:)`
/// returns.
///
/// A pasted URL is checked exactly like a loopback callback. The end of the input ends only the
/// paste side: the listener keeps waiting (a script may run the program with no input at all).
public struct LoopbackAndPastePresenter: UserAgentPresenter {
    /// The presenter's settings.
    public struct Configuration: Sendable {
        /// The port to listen on; 0 (the default) for a free ephemeral one.
        public var port: Int
        /// The callback path. Default `/callback`.
        public var callbackPath: String
        /// How long to wait. Default 5 minutes.
        public var timeout: Duration
        /// Where the pasted lines come from. Default: standard input.
        public var reader: any LineReader
        /// Where the URL, hints and prompts are written. Default: standard error.
        public var output: ConsoleOutput
        /// How many wrong pastes are answered with another prompt before the sign-in fails.
        public var maximumAttempts: Int

        /// Creates settings; every parameter has the documented default.
        public init(
            port: Int = 0,
            callbackPath: String = "/callback",
            timeout: Duration = .seconds(300),
            reader: any LineReader = StandardInputLineReader(),
            output: ConsoleOutput = .standardError,
            maximumAttempts: Int = 5
        ) {
            self.port = port
            self.callbackPath = callbackPath
            self.timeout = timeout
            self.reader = reader
            self.output = output
            self.maximumAttempts = maximumAttempts
        }
    }

    /// The presenter's settings.
    public let configuration: Configuration

    /// Creates a presenter.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public func beginSession() async throws -> any UserAgentSession {
        let receiver = try await LoopbackPresenter.startReceiver(
            port: configuration.port, callbackPath: configuration.callbackPath)
        return LoopbackAndPasteSession(
            receiver: receiver,
            prompt: PastePrompt(
                reader: configuration.reader,
                output: configuration.output,
                redirectURI: receiver.redirectURI,
                maximumAttempts: max(1, configuration.maximumAttempts),
                acceptsBareCode: false
            ),
            timeout: configuration.timeout
        )
    }
}

/// The loopback receiver and the paste prompt of one sign-in.
struct LoopbackAndPasteSession: UserAgentSession {
    let receiver: LoopbackReceiver
    let prompt: PastePrompt
    let timeout: Duration

    var redirectURI: URL { receiver.redirectURI }

    func authorize<Outcome: Sendable>(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
    ) async throws -> Outcome {
        let received = await receiver.receive(with: handler)
        let output = prompt.output
        output.write("Open this URL in a browser to sign in:")
        output.writeURL(authorizationURL)
        output.write(receiver.portForwardingHint)
        output.write(
            "Without forwarding, the browser ends on a page that cannot be reached:"
                + " paste that page's address here and press Enter."
        )
        let receiver = receiver
        let prompt = prompt
        let pasted: @Sendable () async -> Result<Outcome, AuthError>? = {
            let outcome = await prompt.run(handler: handler)
            if outcome == nil, !Task.isCancelled {
                output.write("No more input; still waiting for the browser.")
            }
            return outcome
        }
        let outcome = await CallbackRace.first(timeout: timeout, [received, pasted])
        await receiver.close()
        return try CallbackRace.finish(outcome)
    }

    func close() async {
        await receiver.close()
    }
}
