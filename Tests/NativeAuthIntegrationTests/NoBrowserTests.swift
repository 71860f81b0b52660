import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// Runs the scripted browser on the device verification page.
func scriptedDeviceApproval(_ url: URL, userCode: String? = nil, deny: Bool = false) async throws {
    let process = Process()
    process.executableURL = TestServer.root.appendingPathComponent(".venv/bin/python")
    process.arguments =
        [TestServer.root.appendingPathComponent("scripts/scripted-browser.py").path, "--device"]
        + (deny ? ["--deny"] : []) + (userCode.map { ["--user-code", $0] } ?? []) + [url.absoluteString]
    let exited = exitStatus(of: process)
    try process.run()
    let status = await exited.value
    guard status == 0 else { throw AuthError(.authorizationFailed, "the scripted device approval failed ($status)") }
}

/// A device display that has the scripted browser approve (or deny) the code in the background,
/// as a person on another device would, while the authenticator polls.
final class ScriptedDeviceDisplay: DeviceCodeDisplay {
    let deny: Bool
    private let approval = NIOLockedValueBox<Task<Void, any Error>?>(nil)
    private let shown = NIOLockedValueBox<DeviceAuthorization?>(nil)

    init(deny: Bool = false) { self.deny = deny }

    var authorization: DeviceAuthorization? { shown.withLockedValue { $0 } }

    func show(_ authorization: DeviceAuthorization) async {
        shown.withLockedValue { $0 = authorization }
        let deny = deny
        let url = authorization.verificationURIComplete ?? authorization.verificationURI
        approval.withLockedValue { $0 = Task { try await scriptedDeviceApproval(url, deny: deny) } }
    }

    /// Waits until the code was shown and the scripted browser is done; rethrows its failure.
    func finished() async throws {
        while true {
            if let task = approval.withLockedValue({ $0 }) { return try await task.value }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Signs in with the device flow while the scripted browser approves or denies. When the scripted
/// browser fails, or nothing is decided within 90 seconds, the sign-in is cancelled: the test fails
/// instead of polling until the code expires.
func deviceLogin(_ auth: Authenticator, deny: Bool = false) async throws -> (TokenSet, DeviceAuthorization?) {
    let display = ScriptedDeviceDisplay(deny: deny)
    let tokens = try await withThrowingTaskGroup(of: TokenSet?.self) { group in
        group.addTask { try await auth.login(.device(display)) }
        group.addTask {
            try await display.finished()
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(90))
            throw AuthError(.timeout, "the device sign-in did not finish within 90 seconds")
        }
        defer { group.cancelAll() }
        while let result = try await group.next() {
            if let result { return result }
        }
        throw AuthError(.loginCancelled, "no tokens")
    }
    return (tokens, display.authorization)
}

/// Where the sandbox, approving at once, sends the browser back: the address a person would paste.
func sandboxCallback(for authorizationURL: URL) async throws -> URL {
    let (response, _) = try await URLSessionTransport().send(
        HTTPRequest(method: .get, url: authorizationURL), body: nil)
    guard let location = response.headerFields[.location], let url = URL(string: location) else {
        throw AuthError(.authorizationFailed, "the sandbox did not redirect (HTTP \(response.status.code))")
    }
    return url
}

/// Watches what a presenter prints and hands out the authorization URLs it printed.
final class PrintedURLs: Sendable {
    private let urls = NIOLockedValueBox<[URL]>([])
    private let lines = NIOLockedValueBox<[String]>([])

    var output: ConsoleOutput {
        ConsoleOutput { line in
            self.lines.withLockedValue { $0.append(line) }
            if line.hasPrefix("http"), line.contains("/authorize"), let url = URL(string: line) {
                self.urls.withLockedValue { $0.append(url) }
            }
        }
    }

    var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }

    /// The first authorization URL printed, once it is.
    func authorizationURL() async throws -> URL {
        while true {
            if let url = urls.withLockedValue({ $0.first }) { return url }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"), .serialized)
struct NoBrowserSignInTests {
    let server: TestServer

    init() throws { server = try TestServer.load() }

    private func authenticator(_ configuration: ProviderConfiguration, store: any TokenStore) throws -> Authenticator {
        Authenticator(provider: try GenericOIDCProvider(configuration: configuration), store: store)
    }

    private var deviceConfiguration: ProviderConfiguration {
        var configuration = server.configuration(clientID: server.deviceClientID)
        configuration.endpoints.deviceAuthorization = server.deviceAuthorizationEndpoint
        return configuration
    }

    @Test func theDeviceFlowApprovedAtTheDevicePageStoresTokensThatRefresh() async throws {
        let store = MemoryTokenStore()
        let auth = try authenticator(deviceConfiguration, store: store)
        let (tokens, authorization) = try await deviceLogin(auth)

        #expect(!tokens.accessToken.isEmpty)
        #expect(tokens.refreshToken != nil)
        #expect(await store.load(auth.key) == tokens)
        let shown = try #require(authorization)
        #expect(shown.verificationURI.absoluteString == server.issuer.absoluteString + "/device/")
        #expect(shown.verificationURIComplete?.absoluteString.contains(shown.userCode) == true)

        // The server accepts the tokens, and they refresh like any others.
        let userinfo = try await auth.userInfo()
        #expect(!userinfo.subject.isEmpty)
        let refreshed = try await auth.refresh()
        #expect(refreshed.accessToken != tokens.accessToken)
        #expect(await store.load(auth.key) == refreshed)
    }

    @Test func theDeviceFlowDeniedIsAccessDeniedAndStoresNothing() async throws {
        let store = MemoryTokenStore()
        let auth = try authenticator(deviceConfiguration, store: store)
        let error = await #expect(throws: AuthError.self) { try await deviceLogin(auth, deny: true) }
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
        #expect(await store.load(auth.key) == nil)
    }

}

/// Paste and the loopback-or-paste race, against the in-process sandbox (the presenters are the
/// point); the device flow above runs against the real server.
@Suite(.testLogging, .serialized) struct NoBrowserSandboxTests {
    private func authenticator(_ configuration: ProviderConfiguration, store: any TokenStore) throws -> Authenticator {
        Authenticator(provider: try GenericOIDCProvider(configuration: configuration), store: store)
    }

    private func sandboxConfiguration(_ sandbox: SandboxAuthorizationServer) -> ProviderConfiguration {
        ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile", "email"])
    }

    @Test func thePasteFlowTakesTheRedirectTheBrowserEndedOn() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let store = MemoryTokenStore()
        let auth = try authenticator(sandboxConfiguration(sandbox), store: store)
        let printed = PrintedURLs()
        let reader = ScriptedLineReader()
        let browser = Task {
            let callback = try await sandboxCallback(for: try await printed.authorizationURL())
            reader.feed("  \(callback.absoluteString)  ")
        }
        let presenter = ManualPastePresenter(configuration: .init(reader: reader, output: printed.output))
        let tokens = try await auth.login(.browser(presenter))
        try await browser.value
        #expect(tokens.idToken != nil)
        #expect(tokens.displayName == "alice")
        #expect(await store.load(auth.key) == tokens)
        await sandbox.stop()
    }

    @Test func aWrongPasteThenTheRightOne() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let auth = try authenticator(sandboxConfiguration(sandbox), store: MemoryTokenStore())
        let printed = PrintedURLs()
        let reader = ScriptedLineReader()
        let browser = Task {
            let callback = try await sandboxCallback(for: try await printed.authorizationURL())
            // First the address of another sign-in (its state differs), then the right one.
            var components = try #require(URLComponents(url: callback, resolvingAgainstBaseURL: false))
            components.queryItems = components.queryItems?.map {
                $0.name == "state" ? URLQueryItem(name: "state", value: "another-sign-in") : $0
            }
            reader.feed(try #require(components.url).absoluteString)
            reader.feed(callback.absoluteString)
        }
        let presenter = ManualPastePresenter(configuration: .init(reader: reader, output: printed.output))
        let tokens = try await auth.login(.browser(presenter))
        try await browser.value
        #expect(!tokens.accessToken.isEmpty)
        #expect(printed.text.contains("belongs to another sign-in"))
        #expect(reader.reads == 2)
        await sandbox.stop()
    }

    @Test func theLoopbackSideWinsTheRace() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let auth = try authenticator(sandboxConfiguration(sandbox), store: MemoryTokenStore())
        let printed = PrintedURLs()
        let reader = ScriptedLineReader()
        let browser = Task {
            // A forwarded port: the browser's redirect reaches the listener.
            try await RedirectFollowingBrowser().open(try await printed.authorizationURL())
        }
        let presenter = LoopbackAndPastePresenter(
            configuration: .init(timeout: .seconds(60), reader: reader, output: printed.output))
        let tokens = try await auth.login(.browser(presenter))
        try await browser.value
        #expect(!tokens.accessToken.isEmpty)
        #expect(reader.cancellations == 1, "the paste prompt was cancelled")
        #expect(!reader.isWaiting)
        let port = try #require(redirectPort(in: try await printed.authorizationURL()))
        // Soon, not at once: the losing side's listener closes as the race ends, and another test may
        // hold the freed port for a moment.
        #expect(await canBindSoon(port: port, seconds: 3), "the listener is closed")
        await sandbox.stop()
    }

    @Test func thePasteSideWinsTheRace() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let auth = try authenticator(sandboxConfiguration(sandbox), store: MemoryTokenStore())
        let printed = PrintedURLs()
        let reader = ScriptedLineReader()
        let browser = Task {
            // No forwarding: the browser cannot reach the listener; the person pastes the address.
            let callback = try await sandboxCallback(for: try await printed.authorizationURL())
            reader.feed(callback.absoluteString)
        }
        let presenter = LoopbackAndPastePresenter(
            configuration: .init(timeout: .seconds(60), reader: reader, output: printed.output))
        let tokens = try await auth.login(.browser(presenter))
        try await browser.value
        #expect(!tokens.accessToken.isEmpty)
        let port = try #require(redirectPort(in: try await printed.authorizationURL()))
        // Soon, not at once: the losing side's listener closes as the race ends, and another test may
        // hold the freed port for a moment.
        #expect(await canBindSoon(port: port, seconds: 3), "the listener is closed")
        await sandbox.stop()
    }

    /// The loopback port named by the authorization URL's `redirect_uri`.
    private func redirectPort(in authorizationURL: URL) -> Int? {
        let query = URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return FormURLEncoding.decode(query).first(named: "redirect_uri").flatMap { URL(string: $0)?.port }
    }
}
