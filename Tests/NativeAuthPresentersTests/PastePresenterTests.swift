import Foundation
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// Metadata of a fictional provider that promises `iss` (RFC 9207).
private func metadata() throws -> ProviderMetadata {
    ProviderMetadata(
        issuer: "https://id.example.com",
        authorizationEndpoint: try #require(URL(string: "https://id.example.com/authorize")),
        tokenEndpoint: try #require(URL(string: "https://id.example.com/token")),
        authorizationResponseIssParameterSupported: true
    )
}

/// Begins a session and builds the matching request, as `Authenticator.login` does.
private func begin(_ presenter: any UserAgentPresenter) async throws -> (any UserAgentSession, AuthorizationRequest) {
    let session = try await presenter.beginSession()
    let request = AuthorizationRequest(
        metadata: try metadata(),
        clientID: "client",
        redirectURI: session.redirectURI,
        scopes: ["openid"]
    )
    return (session, request)
}

/// The redirect a browser would end on, for `request`.
private func redirect(_ request: AuthorizationRequest, code: String = "the-code", state: String? = nil) -> String {
    request.redirectURI.absoluteString + "?code=\(code)&state=\(state ?? request.state)&iss="
        + FormURLEncoding.encode(component: "https://id.example.com")
}

private func authorize(
    _ session: any UserAgentSession,
    _ request: AuthorizationRequest
) async throws -> AuthorizationResponse {
    try await session.authorize(request.url) { request.disposition(of: $0) }
}

@Suite(.testLogging) struct ManualPastePresenterTests {
    @Test(arguments: ["URL", "  URL  ", "\"URL\"", "'URL'\r", "<URL>", "\t\" URL \" "])
    func aPastedRedirectCompletesTheSignIn(pattern: String) async throws {
        let reader = ScriptedLineReader()
        let output = OutputRecorder()
        let (session, request) = try await begin(
            ManualPastePresenter(configuration: .init(reader: reader, output: output.output)))
        reader.feed(pattern.replacingOccurrences(of: "URL", with: redirect(request)))
        let response = try await authorize(session, request)
        #expect(response.code == "the-code")
        #expect(response.issuer == "https://id.example.com")
        #expect(output.text.contains(request.url.absoluteString))
        #expect(output.text.contains("paste the address the browser ends on"))
    }

    /// The default redirect's port stays bound for the whole sign-in, so that no other process can
    /// bind it and receive the code and the state; a browser that reaches it gets a static page
    /// asking to copy the address, and the port is released when the sign-in ends.
    @Test func theDefaultRedirectPortIsHeldAndAnswersWithACopyPage() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(ManualPastePresenter(configuration: .init(reader: reader)))
        let redirectURI = session.redirectURI
        #expect(redirectURI.scheme == "http" && redirectURI.host == "127.0.0.1" && redirectURI.path == "/callback")
        let port = try #require(redirectURI.port)
        #expect(await !canBind(port: port), "the port is held")
        let callback = try #require(URL(string: redirect(request)))
        let (status, page) = try await fetch(callback)
        #expect(status == 200 && page.contains("Copy the whole address"))
        #expect(!page.contains(request.state) && !page.contains("the-code"), "the page reflects nothing")
        reader.feed(redirect(request))
        #expect(try await authorize(session, request).code == "the-code", "the page took nothing: the paste did")
        #expect(await canBind(port: port), "released when the sign-in ends")
    }

    @Test func aConfiguredRedirectIsUsedAsGiven() async throws {
        let page = try #require(URL(string: "https://id.example.com/oauth/code-page"))
        let (session, request) = try await begin(
            ManualPastePresenter(configuration: .init(redirectURI: page, reader: ScriptedLineReader())))
        #expect(session.redirectURI == page)
        #expect(request.url.absoluteString.contains("redirect_uri=https%3A%2F%2Fid.example.com%2Foauth%2Fcode-page"))
    }

    @Test func aBareCodeIsAcceptedWithoutStateOrIssuer() async throws {
        let reader = ScriptedLineReader(["  4/0AbCdEf-ghij_KLM  "])
        let (session, request) = try await begin(ManualPastePresenter(configuration: .init(reader: reader)))
        let response = try await authorize(session, request)
        #expect(response.code == "4/0AbCdEf-ghij_KLM")
        #expect(response.issuer == nil)
    }

    @Test func theQueryAloneIsAccepted() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(ManualPastePresenter(configuration: .init(reader: reader)))
        let query = try #require(redirect(request).split(separator: "?", maxSplits: 1).last)
        reader.feed("?" + query)
        #expect(try await authorize(session, request).code == "the-code")
    }

    @Test func wrongPastesGetAMessageAndAnotherPrompt() async throws {
        let reader = ScriptedLineReader()
        let output = OutputRecorder()
        let (session, request) = try await begin(
            ManualPastePresenter(configuration: .init(reader: reader, output: output.output, acceptsBareCode: false)))
        reader.feed(redirect(request, code: "OLDCODE-XYZ", state: "state-of-another-sign-in"))
        reader.feed("")  // an empty line is no attempt
        reader.feed("https://id.example.com/somewhere-else?code=x&state=y")
        reader.feed("not a url")
        reader.feed(redirect(request))
        let response = try await authorize(session, request)
        #expect(response.code == "the-code")
        let text = output.text
        #expect(text.contains("belongs to another sign-in"))
        #expect(
            text.contains("is not the redirect address; it should start with \(request.redirectURI.absoluteString)"))
        #expect(text.contains("paste the whole address"))
        #expect(text.contains("(2 left)"))
        #expect(!text.contains("OLDCODE-XYZ"), "the wrong code is not echoed")
    }

    @Test func tooManyWrongPastesFail() async throws {
        let reader = ScriptedLineReader(["one word", "two words", "three words"])
        let (session, request) = try await begin(
            ManualPastePresenter(
                configuration: .init(reader: reader, output: ConsoleOutput { _ in }, maximumAttempts: 2))
        )
        let error = await #expect(throws: AuthError.self) { try await authorize(session, request) }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.message.contains("2 pastes were not the result of this sign-in") == true)
        #expect(reader.reads == 2)
    }

    @Test func theEndOfTheInputCancelsTheSignIn() async throws {
        let reader = ScriptedLineReader(["garbage garbage", nil])
        let (session, request) = try await begin(
            ManualPastePresenter(configuration: .init(reader: reader, output: ConsoleOutput { _ in })))
        let error = await #expect(throws: AuthError.self) { try await authorize(session, request) }
        #expect(error?.code == .loginCancelled)
    }

    @Test func aPastedErrorEndsTheSignInWithTheServersError() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(ManualPastePresenter(configuration: .init(reader: reader)))
        reader.feed(request.redirectURI.absoluteString + "?error=access_denied&state=\(request.state)")
        let error = await #expect(throws: AuthError.self) { try await authorize(session, request) }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
    }

    @Test func aPastedURLFromAnotherIssuerIsRefused() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(ManualPastePresenter(configuration: .init(reader: reader)))
        reader.feed(
            request.redirectURI.absoluteString + "?code=c&state=\(request.state)&iss=https%3A%2F%2Fevil.example")
        let error = await #expect(throws: AuthError.self) { try await authorize(session, request) }
        #expect(error?.code == .invalidState)
    }

    @Test func cancellingAWaitingPasteEndsPromptlyWithLoginCancelled() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(
            ManualPastePresenter(configuration: .init(reader: reader, output: ConsoleOutput { _ in })))
        let waiting = Task { try await authorize(session, request) }
        while !reader.isWaiting { try await Task.sleep(for: .milliseconds(5)) }
        waiting.cancel()
        let error = await #expect(throws: AuthError.self) { try await waiting.value }
        #expect(error?.code == .loginCancelled)
        #expect(reader.cancellations == 1)
    }

    @Test func aPasteThatNeverComesTimesOut() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(
            ManualPastePresenter(
                configuration: .init(reader: reader, output: ConsoleOutput { _ in }, timeout: .milliseconds(200))))
        let error = await #expect(throws: AuthError.self) { try await authorize(session, request) }
        #expect(error?.code == .timeout)
        #expect(reader.cancellations == 1)
    }
}

@Suite(.testLogging) struct LoopbackAndPastePresenterTests {
    @Test func theBrowserWinsAndThePasteIsCancelled() async throws {
        let reader = ScriptedLineReader()
        let output = OutputRecorder()
        let (session, request) = try await begin(
            LoopbackAndPastePresenter(configuration: .init(reader: reader, output: output.output)))
        let port = try #require(session.redirectURI.port)
        let browser = Task {
            while !reader.isWaiting { try await Task.sleep(for: .milliseconds(5)) }
            return try await fetch(try #require(URL(string: redirect(request))))
        }
        let response = try await authorize(session, request)
        #expect(response.code == "the-code")
        #expect(try await browser.value.0 == 200)
        #expect(reader.cancellations == 1, "the paste prompt was cancelled")
        #expect(!reader.isWaiting)
        #expect(await canBindSoon(port: port), "the listener is closed")
        let text = output.text
        #expect(text.contains(request.url.absoluteString))
        #expect(text.contains("ssh -L \(port):127.0.0.1:\(port) HOST"))
    }

    @Test func thePasteWinsAndTheListenerCloses() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(
            LoopbackAndPastePresenter(configuration: .init(reader: reader, output: ConsoleOutput { _ in })))
        let port = try #require(session.redirectURI.port)
        reader.feed(redirect(request, code: "pasted"))
        let response = try await authorize(session, request)
        #expect(response.code == "pasted")
        #expect(await canBindSoon(port: port), "the listener is closed")
    }

    @Test func theEndOfTheInputKeepsWaitingForTheBrowser() async throws {
        let reader = ScriptedLineReader([nil])
        let output = OutputRecorder()
        let (session, request) = try await begin(
            LoopbackAndPastePresenter(configuration: .init(reader: reader, output: output.output)))
        let browser = Task {
            while !output.text.contains("No more input") { try await Task.sleep(for: .milliseconds(5)) }
            return try await fetch(try #require(URL(string: redirect(request, code: "late-browser"))))
        }
        #expect(try await authorize(session, request).code == "late-browser")
        _ = try await browser.value
    }

    @Test func aBareCodeIsNotAcceptedBesideTheListener() async throws {
        let reader = ScriptedLineReader(["just-a-code"])
        let output = OutputRecorder()
        let (session, request) = try await begin(
            LoopbackAndPastePresenter(configuration: .init(reader: reader, output: output.output)))
        reader.feed(redirect(request))
        #expect(try await authorize(session, request).code == "the-code")
        #expect(output.text.contains("paste the whole address"))
    }

    @Test func cancellingEndsBothSides() async throws {
        let reader = ScriptedLineReader()
        let (session, request) = try await begin(
            LoopbackAndPastePresenter(configuration: .init(reader: reader, output: ConsoleOutput { _ in })))
        let port = try #require(session.redirectURI.port)
        let waiting = Task { try await authorize(session, request) }
        while !reader.isWaiting { try await Task.sleep(for: .milliseconds(5)) }
        waiting.cancel()
        let error = await #expect(throws: AuthError.self) { try await waiting.value }
        #expect(error?.code == .loginCancelled)
        #expect(reader.cancellations == 1)
        #expect(await canBindSoon(port: port))
    }
}

@Suite(.testLogging) struct PrintURLPresenterTests {
    @Test func printsTheURLAndTheForwardingHintAndNeverOpensABrowser() async throws {
        let output = OutputRecorder()
        let (session, request) = try await begin(LoopbackPresenter.printURL(port: 0, output: output.output))
        let port = try #require(session.redirectURI.port)
        let browser = Task {
            while !output.text.contains("ssh -L") { try await Task.sleep(for: .milliseconds(5)) }
            return try await fetch(try #require(URL(string: redirect(request))))
        }
        #expect(try await authorize(session, request).code == "the-code")
        _ = try await browser.value
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.contains(request.url.absoluteString))
        #expect(
            lines.last
                == "If the browser runs on another machine, forward the port first: ssh -L \(port):127.0.0.1:\(port) HOST"
        )
    }
}
