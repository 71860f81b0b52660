public import Foundation
internal import NIOCore
internal import NIOPosix

/// Signs in by having the person paste the result: for machines where no loopback callback can
/// reach the program (a container, a remote shell without port forwarding).
///
/// It prints the authorization URL, then reads from a ``LineReader`` (standard input by default)
/// either the whole URL the browser was redirected to, or only the code when the provider's page
/// shows just the code. Whitespace and surrounding quotes are trimmed. A pasted URL gets the same
/// checks as a loopback callback (`state`, RFC 9207 `iss`, `error`); a wrong paste gets a message
/// and another prompt, up to ``Configuration/maximumAttempts``. The end of the input ends the
/// sign-in with ``AuthError/Code/loginCancelled``.
///
/// ## Choosing the redirect URI
/// The redirect URI must be registered with the provider. Two choices are usual:
/// - **A loopback URI that nothing listens on** (the default: `http://127.0.0.1:PORT/callback` on a
///   port that is free when the sign-in starts). The browser ends on a "cannot connect" page, but
///   its address bar holds the whole response: the person copies that address. Providers that
///   follow RFC 8252 §7.3 accept any port for a registered `http://127.0.0.1/callback`.
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
            let path = LoopbackPresenter.absolutePath(configuration.callbackPath)
            let port = try await Self.unusedLoopbackPort()
            guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else {
                throw AuthError(.configurationInvalid, "the callback path \"\(path)\" cannot be part of a URL")
            }
            redirectURI = url
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
            timeout: configuration.timeout
        )
    }

    /// A port on 127.0.0.1 that is free now: bound, read and released.
    static func unusedLoopbackPort() async throws -> Int {
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: "127.0.0.1", port: 0).get()
            let port = channel.localAddress?.port
            try await channel.close().get()
            guard let port else { throw AuthError(.configurationInvalid, "the loopback port is unknown") }
            return port
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(.configurationInvalid, "cannot find a free loopback port", underlying: error)
        }
    }
}

/// A paste-only session.
struct PasteSession: UserAgentSession {
    let redirectURI: URL
    let prompt: PastePrompt
    let timeout: Duration

    func authorize(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition
    ) async throws -> AuthorizationResponse {
        prompt.output.write("Open this URL in a browser to sign in:")
        prompt.output.writeURL(authorizationURL)
        prompt.output.write(
            "Then paste the address the browser ends on"
                + (prompt.acceptsBareCode ? " (or the code the page shows)" : "") + ", and press Enter:"
        )
        let prompt = prompt
        let outcome = await CallbackRace.first(
            timeout: timeout,
            [
                {
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
            ]
        )
        return try CallbackRace.finish(outcome)
    }

    func close() async {}
}

/// Listens on loopback and reads a paste at the same time: the default for `--no-browser`.
///
/// The person opens the printed URL wherever there is a browser. When the loopback port is
/// forwarded to that machine (the hint shows `ssh -L PORT:127.0.0.1:PORT HOST`), the browser's
/// redirect completes the sign-in; when it is not, the browser ends on a "cannot connect" page and
/// the person pastes its address. Whichever arrives first wins; the other is cancelled and has
/// stopped (listener closed, reader released) before ``UserAgentSession/authorize(_:handler:)``
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

    func authorize(
        _ authorizationURL: URL,
        handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition
    ) async throws -> AuthorizationResponse {
        await receiver.setHandler(handler)
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
        let outcome = await CallbackRace.first(
            timeout: timeout,
            [
                { await receiver.result() },
                {
                    let outcome = await prompt.run(handler: handler)
                    if outcome == nil, !Task.isCancelled {
                        output.write("No more input; still waiting for the browser.")
                    }
                    return outcome
                },
            ]
        )
        await receiver.close()
        return try CallbackRace.finish(outcome)
    }

    func close() async {
        await receiver.close()
    }
}

/// Reads pastes until one completes the sign-in.
struct PastePrompt: Sendable {
    let reader: any LineReader
    let output: ConsoleOutput
    let redirectURI: URL
    let maximumAttempts: Int
    let acceptsBareCode: Bool

    /// What a pasted line is.
    enum Interpretation: Equatable {
        case callback(URL)
        case code(String)
        case empty
        case problem(String)
    }

    /// The outcome of the first paste the handler completes, a failure after too many wrong
    /// pastes, or `nil` at the end of the input or on cancellation.
    func run(
        handler: @Sendable (AuthorizationCallback) -> CallbackDisposition
    ) async -> Result<AuthorizationResponse, AuthError>? {
        var wrong = 0
        while true {
            let line: String?
            do {
                line = try await reader.readLine()
            } catch is CancellationError {
                return nil
            } catch {
                return .failure(
                    error as? AuthError
                        ?? AuthError(.loginCancelled, "cannot read the pasted input", operation: .authorization)
                )
            }
            guard let line else { return nil }
            let problem: String
            switch interpret(line) {
            case .empty:
                continue
            case .problem(let text):
                problem = text
            case .callback(let url):
                switch handler(.redirect(url)) {
                case .complete(let result): return result
                case .ignore:
                    problem =
                        "that address belongs to another sign-in (its state does not match this one);"
                        + " paste the address from the browser tab this sign-in opened"
                }
            case .code(let code):
                switch handler(.code(code)) {
                case .complete(let result): return result
                case .ignore: problem = "that code was not accepted"
                }
            }
            wrong += 1
            if wrong >= maximumAttempts {
                return .failure(
                    AuthError(
                        .authorizationFailed,
                        "\(wrong) pastes were not the result of this sign-in: \(problem)",
                        hint: "sign in again, and paste the address the browser ends on",
                        operation: .authorization
                    )
                )
            }
            output.write("That did not work: \(problem). Try again (\(maximumAttempts - wrong) left):")
        }
    }

    /// Reads a pasted line: trims whitespace and one pair of surrounding quotes, then decides
    /// whether it is a redirect URL, a query string, a bare code, or something else.
    func interpret(_ line: String) -> Interpretation {
        var text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        for (open, close) in [("\"", "\""), ("'", "'"), ("<", ">")]
        where text.count >= 2 && text.hasPrefix(open) && text.hasSuffix(close) {
            text = String(text.dropFirst().dropLast()).trimmingCharacters(in: .whitespacesAndNewlines)
            break
        }
        if text.isEmpty { return .empty }
        let expected = redirectURI.absoluteString.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        if text.contains("://") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            else {
                return .problem("that is not a web address")
            }
            guard url.path == redirectURI.path else {
                return .problem("that is not the redirect address; it should start with \(expected)")
            }
            guard hasResponse(url.query) else {
                return .problem("that address carries no code or error; copy it after approving in the browser")
            }
            return .callback(url)
        }
        let query = text.hasPrefix("?") ? String(text.dropFirst()) : text
        if query.contains("=") {
            guard hasResponse(query), let url = URL(string: expected + "?" + query) else {
                return .problem("that carries no code or error; paste the whole address the browser ends on")
            }
            return .callback(url)
        }
        guard acceptsBareCode else {
            return .problem("paste the whole address the browser ends on (it starts with \(expected))")
        }
        guard text.utf8.count <= 4096, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .problem("that is neither the address the browser ends on nor a code")
        }
        return .code(text)
    }

    private func hasResponse(_ query: String?) -> Bool {
        let names = Set(FormURLEncoding.decode(query ?? "").map(\.name))
        return names.contains("code") || names.contains("error")
    }
}
