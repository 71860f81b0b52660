import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A browser stand-in: runs a closure with the authorization URL.
struct ClosureOpener: BrowserOpener {
    let body: @Sendable (URL) async throws -> Void
    func open(_ url: URL) async throws { try await body(url) }
}

/// GETs `url` and returns the status and body (no redirects, no cookies).
func fetch(_ url: URL) async throws -> (Int, String) {
    let (data, response) = try await URLSession.shared.data(from: url)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

@Suite(.testLogging) struct LoopbackPresenterTests {
    private static let state = "expected-state-value"

    private func handler(_ callback: AuthorizationCallback) -> CallbackDisposition<AuthorizationResponse> {
        guard case .redirect(let url) = callback else { return .ignore }
        let fields = FormURLEncoding.decode(url.query ?? "")
        guard fields.first(named: "state") == Self.state else { return .ignore }
        if let error = fields.first(named: "error") {
            return .complete(.failure(AuthError(.authorizationFailed, "refused", oauthError: error)))
        }
        return .complete(.success(AuthorizationResponse(code: fields.first(named: "code") ?? "", issuer: nil)))
    }

    private func callback(_ redirect: URL, _ query: String) throws -> URL {
        try #require(URL(string: redirect.absoluteString + "?" + query))
    }

    @Test func bindsLoopbackAndCompletesAfterStrayRequests() async throws {
        let seen = NIOLockedValueBox<[(Int, String)]>([])
        let session = try await LoopbackPresenter(configuration: .init(opener: nil, output: OutputRecorder().output))
            .beginSession()
        let redirect = session.redirectURI
        #expect(redirect.scheme == "http")
        #expect(redirect.host == "127.0.0.1")
        #expect(redirect.path == "/callback")
        let port = try #require(redirect.port)
        #expect(port > 0)

        let browser = Task {
            // A favicon request, a forged callback with another state, then the real one.
            let favicon = try await fetch(try #require(URL(string: "http://127.0.0.1:\(port)/favicon.ico")))
            let forged = try await fetch(try callback(redirect, "code=evil&state=forged"))
            let real = try await fetch(try callback(redirect, "code=good&state=\(Self.state)"))
            let late = try? await fetch(try callback(redirect, "code=late&state=\(Self.state)"))
            seen.withLockedValue { $0 = [favicon, forged, real] + (late.map { [$0] } ?? []) }
        }
        let response = try await session.authorize(try #require(URL(string: "https://idp.example/authorize"))) {
            handler($0)
        }
        try await browser.value
        #expect(response.code == "good")
        let answers = seen.withLockedValue { $0 }
        #expect(answers.first?.0 == 404)
        #expect(answers.dropFirst().first?.0 == 400)
        #expect(answers.dropFirst(2).first?.0 == 200)
        #expect(answers.dropFirst(2).first?.1.contains("You are signed in") == true)
        // Once the callback was taken the listener is gone: a late request cannot connect, or is refused.
        if answers.count == 4 { #expect(answers[3].0 != 200) }
        #expect(await canBind(port: port), "the listener is closed afterwards")
    }

    @Test func aBrowserThatHangsUpAtOnceStillCompletesTheSignIn() async throws {
        let session = try await LoopbackPresenter(
            configuration: .init(timeout: .seconds(10), opener: nil, output: OutputRecorder().output)
        )
        .beginSession()
        let port = try #require(session.redirectURI.port)
        let state = Self.state
        let browser = Task.detached {
            // Send the callback and close the socket without reading the page.
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let request = "GET /callback?code=quick&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
            close(descriptor)
            return connected
        }
        let response = try await session.authorize(try #require(URL(string: "https://idp.example/a"))) {
            handler($0)
        }
        #expect(await browser.value == 0)
        #expect(response.code == "quick")
    }

    @Test func pagesReflectNothingFromTheRequest() async throws {
        let session = try await LoopbackPresenter(configuration: .init(opener: nil, output: OutputRecorder().output))
            .beginSession()
        let redirect = session.redirectURI
        let marker = "%3Cscript%3Ealert(1)%3C%2Fscript%3E"
        let pages = Task {
            let forged = try await fetch(try callback(redirect, "code=\(marker)&state=\(marker)&error=\(marker)"))
            let other = try await fetch(try #require(URL(string: "http://127.0.0.1:\(redirect.port ?? 0)/\(marker)")))
            let failure = try await fetch(try callback(redirect, "error=\(marker)&state=\(Self.state)"))
            return [forged, other, failure]
        }
        let refused = await #expect(throws: AuthError.self) {
            _ = try await session.authorize(try #require(URL(string: "https://idp.example/a"))) { handler($0) }
        }
        #expect(refused?.code == .authorizationFailed)
        let answers = try await pages.value
        #expect(answers.map(\.0) == [400, 404, 200])
        for (_, body) in answers {
            #expect(!body.contains("script"))
            #expect(!body.contains("alert"))
        }
        #expect(answers[2].1.contains("Sign-in did not complete"))
    }

    @Test func aConfiguredPortInUseIsNamed() async throws {
        let first = try await LoopbackPresenter(configuration: .init(opener: nil)).beginSession()
        let port = try #require(first.redirectURI.port)
        let error = await #expect(throws: AuthError.self) {
            _ = try await LoopbackPresenter(configuration: .init(port: port, opener: nil)).beginSession()
        }
        await first.close()
        #expect(error?.code == .configurationInvalid)
        #expect(error?.message.contains("port \(port)") == true)
        #expect(error?.hint?.contains("`port`") == true)
        // The configured port works once it is free.
        let again = try await LoopbackPresenter(configuration: .init(port: port, opener: nil)).beginSession()
        #expect(again.redirectURI.port == port)
        await again.close()
    }

    @Test func aTimeoutEndsTheWaitAndClosesTheListener() async throws {
        let session = try await LoopbackPresenter(
            configuration: .init(timeout: .milliseconds(300), opener: nil, output: OutputRecorder().output)
        ).beginSession()
        let port = try #require(session.redirectURI.port)
        let error = await #expect(throws: AuthError.self) {
            _ = try await session.authorize(try #require(URL(string: "https://idp.example/a"))) { handler($0) }
        }
        #expect(error?.code == .timeout)
        #expect(await canBind(port: port))
    }

    @Test func cancellationIsLoginCancelledAndClosesTheListener() async throws {
        let session = try await LoopbackPresenter(configuration: .init(opener: nil, output: OutputRecorder().output))
            .beginSession()
        let port = try #require(session.redirectURI.port)
        let url = try #require(URL(string: "https://idp.example/a"))
        let waiting = Task { try await session.authorize(url) { handler($0) } }
        try await Task.sleep(for: .milliseconds(200))
        waiting.cancel()
        let result = await waiting.result
        let cancelled = #expect(throws: AuthError.self) { try result.get() }
        #expect(cancelled?.code == .loginCancelled)
        #expect(await canBind(port: port))
    }

    @Test func withoutABrowserTheURLIsPrinted() async throws {
        let recorder = OutputRecorder()
        let session = try await LoopbackPresenter(
            configuration: .init(timeout: .milliseconds(200), opener: nil, output: recorder.output)
        ).beginSession()
        let url = try #require(URL(string: "https://idp.example/authorize?x=1"))
        _ = try? await session.authorize(url) { handler($0) }
        #expect(recorder.text.contains(url.absoluteString))
    }

    @Test func aBrowserThatFailsGetsTheURLPrinted() async throws {
        let recorder = OutputRecorder()
        let opener = ClosureOpener { _ in throw AuthError(.configurationInvalid, "no browser") }
        let session = try await LoopbackPresenter(
            configuration: .init(timeout: .milliseconds(500), opener: opener, output: recorder.output)
        ).beginSession()
        let url = try #require(URL(string: "https://idp.example/authorize?y=2"))
        _ = try? await session.authorize(url) { handler($0) }
        #expect(recorder.text.contains("Could not open a browser"))
        #expect(recorder.text.contains(url.absoluteString))
    }

    /// An end-session URL carries the ID token in `id_token_hint`: neither printed form (no opener,
    /// a failing opener) shows it, and the browser's command line gets only the one-time start
    /// address, which holds nothing of the URL.
    @Test(arguments: [false, true]) func aPrintedEndSessionURLLeavesOutTheIDToken(browserFails: Bool) async throws {
        let recorder = OutputRecorder()
        let opened = NIOLockedValueBox<[URL]>([])
        let opener = ClosureOpener { url in
            opened.withLockedValue { $0.append(url) }
            throw AuthError(.configurationInvalid, "no browser")
        }
        let session = try await LoopbackPresenter(
            configuration: .init(
                timeout: .milliseconds(500), opener: browserFails ? opener : nil, output: recorder.output)
        ).beginSession()
        let idToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
        let url = try #require(
            URL(string: "https://idp.example/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=x&state=s"))
        _ = try? await session.authorize(url) { handler($0) }
        #expect(recorder.text.contains("https://idp.example/logout?post_logout_redirect_uri=x&state=s"))
        #expect(!recorder.text.contains(idToken))
        let launched = opened.withLockedValue { $0 }
        #expect(launched.count == (browserFails ? 1 : 0))
        if let start = launched.first {
            #expect(start.host == "127.0.0.1" && start.port == session.redirectURI.port)
            #expect(start.path.hasPrefix("/start/") && start.query == nil)
            #expect(!start.absoluteString.contains(idToken) && !start.absoluteString.contains("idp.example"))
        }
    }

    @Test func aPrintableURLIsTheURLUnlessItCarriesAToken() throws {
        let plain = try #require(URL(string: "https://idp.example/authorize?a=%2F&b=c+d"))
        #expect(ConsoleOutput.printable(plain) == plain.absoluteString, "unchanged, byte for byte")
        let only = try #require(URL(string: "https://idp.example/logout?id_token_hint=t"))
        #expect(ConsoleOutput.printable(only) == "https://idp.example/logout")
        let repeated = try #require(URL(string: "https://idp.example/logout?id_token_hint=t&x=1&id_token_hint=u"))
        #expect(ConsoleOutput.printable(repeated) == "https://idp.example/logout?x=1")
    }

    @Test func aSlowBrowserDoesNotBlockTheReceiver() async throws {
        let opened = NIOLockedValueBox(false)
        let session = try await LoopbackPresenter(
            configuration: .init(
                opener: ClosureOpener { _ in
                    try await Task.sleep(for: .seconds(30))
                    opened.withLockedValue { $0 = true }
                },
                output: OutputRecorder().output
            )
        ).beginSession()
        let redirect = session.redirectURI
        let browser = Task { try await fetch(try callback(redirect, "code=c&state=\(Self.state)")) }
        let response = try await session.authorize(try #require(URL(string: "https://idp.example/a"))) { handler($0) }
        #expect(response.code == "c")
        #expect(try await browser.value.0 == 200)
        #expect(!opened.withLockedValue { $0 })
    }
}
