public import Foundation
public import NativeAuth

/// Signs in by having the person paste the result: for machines where no loopback callback can
/// reach the program (a container, a remote shell without port forwarding).
///
/// It prints the authorization URL, then reads from a ``LineReader`` (standard input by default)
/// either the whole URL the browser was redirected to, or only the code when the provider's page
/// shows just the code. Whitespace and surrounding quotes are trimmed. A pasted URL gets the same
/// checks as a loopback callback (`state`, RFC 9207 `iss`, `error`); a wrong paste gets a message
/// and another prompt, up to ``Configuration/maximumAttempts``. The end of the input ends the
/// sign-in with `AuthError.Code.loginCancelled`.
///
/// ## Choosing the redirect URI
/// The redirect URI must be registered with the provider. Two choices are usual:
/// - **A loopback URI on a port the presenter holds** (the default: `http://127.0.0.1:PORT/callback`
///   on an ephemeral port, bound for the whole sign-in so that no other process can bind it and
///   receive the code). A browser on another machine ends on a "cannot connect" page; one on this
///   machine gets a static page asking to copy its address. Either way the address bar holds the
///   whole response: the person copies that address. Providers that follow RFC 8252 §7.3 accept
///   any port for a registered `http://127.0.0.1/callback`.
/// - **A page the provider hosts that displays the code** (Google's and others' "copy this code"
///   pages): set ``Configuration/redirectURI`` to it; the person pastes the code.
///
/// A bare code carries no `state` or `iss`; PKCE still binds it to this sign-in. Set
/// ``Configuration/acceptsBareCode`` to `false` to insist on the whole URL.
public struct ManualPastePresenter: UserAgentPresenter {
    /// The presenter's settings.
    public struct Configuration: Sendable {
        /// The redirect URI; `nil` (the default) for `http://127.0.0.1:PORT` plus ``callbackPath``
        /// on a port that is free when the sign-in starts.
        public var redirectURI: URL?
        /// The path of the default redirect URI. Default `/callback`.
        public var callbackPath: String
        /// Where the pasted lines come from. Default: standard input.
        public var reader: any LineReader
        /// Where the URL and prompts are written. Default: standard error.
        public var output: ConsoleOutput
        /// How many wrong pastes are answered with another prompt before the sign-in fails.
        public var maximumAttempts: Int
        /// Whether a bare code (without the URL around it) is accepted.
        public var acceptsBareCode: Bool
        /// How long to wait for the paste. Default 5 minutes.
        public var timeout: Duration

        /// Creates settings; every parameter has the documented default.
        public init(
            redirectURI: URL? = nil,
            callbackPath: String = "/callback",
            reader: any LineReader = StandardInputLineReader(),
            output: ConsoleOutput = .standardError,
            maximumAttempts: Int = 5,
            acceptsBareCode: Bool = true,
            timeout: Duration = .seconds(300)
        ) {
            self.redirectURI = redirectURI
            self.callbackPath = callbackPath
            self.reader = reader
            self.output = output
            self.maximumAttempts = maximumAttempts
            self.acceptsBareCode = acceptsBareCode
            self.timeout = timeout
        }
    }

    /// The presenter's settings.
    public let configuration: Configuration

    /// Creates a presenter.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public func beginSession() async throws -> any UserAgentSession {
        let redirectURI: URL
        var listener: LoopbackReceiver?
        if let configured = configuration.redirectURI {
            guard let scheme = configured.scheme?.lowercased(), scheme == "http" || scheme == "https",
                configured.host?.isEmpty == false
            else {
                throw AuthError(
                    .configurationInvalid,
                    "the redirect URI \"\(configured.absoluteString)\" is not an http or https URL"
                )
            }
            redirectURI = configured
        } else {
            // Held until the session ends: a port released here could be bound by another process,
            // which would then receive the code and the state.
            let receiver = try await LoopbackPresenter.startReceiver(port: 0, callbackPath: configuration.callbackPath)
            await receiver.answerWithCopyPage()
            listener = receiver
            redirectURI = receiver.redirectURI
        }
        return PasteSession(
            redirectURI: redirectURI,
            prompt: PastePrompt(
                reader: configuration.reader,
                output: configuration.output,
                redirectURI: redirectURI,
                maximumAttempts: max(1, configuration.maximumAttempts),
                acceptsBareCode: configuration.acceptsBareCode
            ),
            timeout: configuration.timeout,
            listener: listener
        )
    }
}

/// A paste-only session.
struct PasteSession: UserAgentSession {
    let redirectURI: URL
    let prompt: PastePrompt
    let timeout: Duration
    /// The listener that holds the default redirect's port, until the session ends.
    let listener: LoopbackReceiver?

    func authorize<Outcome: Sendable>(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
    ) async throws -> Outcome {
        prompt.output.write("Open this URL in a browser to sign in:")
        prompt.output.writeURL(authorizationURL)
        prompt.output.write(
            "Then paste the address the browser ends on"
                + (prompt.acceptsBareCode ? " (or the code the page shows)" : "") + ", and press Enter:"
        )
        let prompt = prompt
        let pasted: @Sendable () async -> Result<Outcome, AuthError>? = {
            await prompt.run(handler: handler)
                ?? .failure(
                    AuthError(
                        .loginCancelled,
                        "the input ended before the sign-in's result was pasted",
                        hint: "sign in again and paste the address the browser ends on",
                        operation: .authorization
                    )
                )
        }
        let outcome = await CallbackRace.first(timeout: timeout, [pasted])
        await listener?.close()
        return try CallbackRace.finish(outcome)
    }

    func close() async {
        await listener?.close()
    }
}
