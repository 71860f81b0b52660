import Foundation
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// A provider with a device endpoint whose token endpoint answers from a script, one answer per
/// poll; in memory.
private struct DeviceServer {
    let server: TestHTTPServer
    let deviceRequests: RequestLog
    let tokenRequests: RequestLog

    static func start(
        device: TestResponse? = nil,
        advertiseDeviceEndpoint: Bool = true,
        polls: [TestResponse]
    ) async throws -> DeviceServer {
        let box = IssuerBox()
        let deviceLog = RequestLog()
        let tokenLog = RequestLog()
        let script = NIOLockedValueBox(polls)
        let server = try await TestHTTPServer.start(.inMemory) { request in
            let path = request.uri.split(separator: "?").first.map(String.init) ?? ""
            let body = String(decoding: request.body, as: UTF8.self)
            switch path {
            case "/o/.well-known/openid-configuration":
                let extra =
                    advertiseDeviceEndpoint ? "\"device_authorization_endpoint\": \"\(box.value)/device/code\"" : ""
                return .json(discoveryDocument(issuer: box.value, extra: extra))
            case "/o/device/code":
                deviceLog.record(body)
                return device
                    ?? .json(
                        #"{"device_code": "secret-device-code", "user_code": "WDJB-MJHT", "#
                            + #""verification_url": "https://id.example.com/device", "expires_in": "1800", "interval": 2}"#
                    )
            case "/o/token/":
                tokenLog.record(body)
                return script.withLockedValue {
                    $0.isEmpty ? .json(#"{"error": "authorization_pending"}"#, status: 400) : $0.removeFirst()
                }
            default:
                return .text("not found", status: 404)
            }
        }
        box.value = server.url("/o").absoluteString
        return DeviceServer(server: server, deviceRequests: deviceLog, tokenRequests: tokenLog)
    }

    var issuer: URL { server.url("/o") }
}

extension TestClock {
    /// A clock at ``fixedNow`` that moves only when the device flow sleeps.
    fileprivate static func fixed() -> TestClock { TestClock(fixedNow) }

    /// The sleeps asked for, in whole seconds.
    fileprivate var sleptSeconds: [Int] { sleeps.map { Int($0.components.seconds) } }
}

/// Records what a display was asked to show.
private final class RecordingDisplay: DeviceCodeDisplay {
    private let shown = NIOLockedValueBox<[DeviceAuthorization]>([])
    var authorizations: [DeviceAuthorization] { shown.withLockedValue { $0 } }
    func show(_ authorization: DeviceAuthorization) async { shown.withLockedValue { $0.append(authorization) } }
}

private let pending = TestResponse.json(#"{"error": "authorization_pending"}"#, status: 400)
private let slowDown = TestResponse.json(#"{"error": "slow_down"}"#, status: 400)
private let success = TestResponse.json(
    #"{"access_token": "device-access", "refresh_token": "device-refresh", "expires_in": 3600, "token_type": "Bearer"}"#
)

@Suite(.testLogging) struct DeviceFlowTests {
    private func authenticator(_ server: DeviceServer, store: any TokenStore, time: TestClock) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(configuration: testConfiguration(issuer: server.issuer)),
            store: store,
            transport: server.server.transport,
            clock: time.clock
        )
    }

    @Test func pollsThroughPendingAndSlowDownThenStoresTheTokens() async throws {
        let server = try await DeviceServer.start(polls: [
            pending, slowDown, .json(#"{"error": "slow_down", "interval": 9}"#, status: 400), pending, success,
        ])
        let store: any TokenStore = MemoryTokenStore()
        let time = TestClock.fixed()
        let display = RecordingDisplay()
        let auth = try authenticator(server, store: store, time: time)
        let tokens = try await auth.login(.device(display))
        await server.server.stop()

        #expect(tokens.accessToken == "device-access")
        #expect(try await store.load(auth.key) == tokens)
        // interval 2; slow_down adds 5; then the server's own new interval, 9.
        #expect(time.sleptSeconds == [2, 2, 7, 9, 9])
        let shown = try #require(display.authorizations.first)
        #expect(shown.userCode == "WDJB-MJHT")
        #expect(shown.verificationURI.absoluteString == "https://id.example.com/device", "Google's spelling")
        #expect(shown.expiresIn == 1800)
        #expect(!shown.description.contains("secret-device-code"))

        let deviceForm = FormURLEncoding.decode(try #require(server.deviceRequests.paths.first))
        #expect(deviceForm.first(named: "client_id") == "test-client")
        #expect(deviceForm.first(named: "scope") == "openid profile")
        #expect(server.tokenRequests.paths.count == 5)
        let poll = FormURLEncoding.decode(try #require(server.tokenRequests.paths.first))
        #expect(poll.first(named: "grant_type") == "urn:ietf:params:oauth:grant-type:device_code")
        #expect(poll.first(named: "device_code") == "secret-device-code")
        #expect(poll.first(named: "client_id") == "test-client")
    }

    @Test func deniedIsAuthorizationFailedAndStoresNothing() async throws {
        let server = try await DeviceServer.start(polls: [
            pending, .json(#"{"error": "access_denied"}"#, status: 400),
        ])
        let store: any TokenStore = MemoryTokenStore()
        let time = TestClock.fixed()
        let auth = try authenticator(server, store: store, time: time)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.device(RecordingDisplay()))
        }
        await server.server.stop()
        #expect(error?.code == .authorizationFailed)
        #expect(error?.oauthError == "access_denied")
        #expect(try await store.load(auth.key) == nil)
    }

    @Test func anExpiredDeviceCodeIsATimeout() async throws {
        let server = try await DeviceServer.start(polls: [
            pending, .json(#"{"error": "expired_token"}"#, status: 400),
        ])
        let store: any TokenStore = MemoryTokenStore()
        let time = TestClock.fixed()
        let auth = try authenticator(server, store: store, time: time)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.device(RecordingDisplay()))
        }
        await server.server.stop()
        #expect(error?.code == .timeout)
        #expect(error?.oauthError == "expired_token")
        #expect(error?.hint?.contains("sign in again") == true)
        #expect(try await store.load(auth.key) == nil)
    }

    /// Polling stops when the code expires (`expires_in`), and after 30 minutes whatever
    /// `expires_in` a server sends.
    @Test(arguments: [
        (10, 3, "not approved within 10 seconds", [3, 3, 3]),
        (86400, 60, "not approved within 1800 seconds", Array(repeating: 60, count: 30)),
    ])
    func pollingStopsWhenTheCodeExpiresOrAfterThirtyMinutes(
        expiresIn: Int, interval: Int, message: String, sleeps: [Int]
    ) async throws {
        let device = TestResponse.json(
            #"{"device_code": "d", "user_code": "U", "verification_uri": "https://id.example.com/device", "#
                + #""expires_in": \#(expiresIn), "interval": \#(interval)}"#)
        let server = try await DeviceServer.start(device: device, polls: [])
        let time = TestClock.fixed()
        let auth = try authenticator(server, store: MemoryTokenStore(), time: time)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.device(RecordingDisplay()))
        }
        await server.server.stop()
        #expect(error?.code == .timeout)
        #expect(error?.message.contains(message) == true)
        #expect(time.sleptSeconds == sleeps, "the next poll would come after the code expired")
        #expect(server.tokenRequests.paths.count == sleeps.count)
    }

    /// A huge `interval` used to overflow `interval + 5` on the next `slow_down`.
    @Test func aHugeIntervalIsCappedAtTenMinutes() async throws {
        let server = try await DeviceServer.start(polls: [
            .json(#"{"error": "slow_down", "interval": 9223372036854775807}"#, status: 400), slowDown, success,
        ])
        let time = TestClock.fixed()
        let auth = try authenticator(server, store: MemoryTokenStore(), time: time)
        let tokens = try await auth.login(.device(RecordingDisplay()))
        await server.server.stop()
        #expect(tokens.accessToken == "device-access")
        #expect(time.sleptSeconds == [2, 600, 600])
    }

    @Test func serverTroubleBacksOffAndPollsOn() async throws {
        let server = try await DeviceServer.start(polls: [
            .text("<h1>502 Bad Gateway</h1>", status: 502, contentType: "text/html"),
            .json(#"{"error": "slow_down"}"#, status: 429),
            success,
        ])
        let time = TestClock.fixed()
        let auth = try authenticator(server, store: MemoryTokenStore(), time: time)
        let tokens = try await auth.login(.device(RecordingDisplay()))
        await server.server.stop()
        #expect(tokens.accessToken == "device-access")
        #expect(time.sleptSeconds == [2, 4, 9])
    }

    @Test func withoutADeviceEndpointTheErrorSaysHowToSetOne() async throws {
        let server = try await DeviceServer.start(advertiseDeviceEndpoint: false, polls: [])
        let auth = try authenticator(server, store: MemoryTokenStore(), time: TestClock.fixed())
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.device(RecordingDisplay()))
        }
        await server.server.stop()
        #expect(error?.code == .configurationInvalid)
        #expect(error?.field == "device_authorization_endpoint", "the CLI names its option for it")
    }

    @Test func anOverrideSuppliesTheDeviceEndpoint() async throws {
        let server = try await DeviceServer.start(advertiseDeviceEndpoint: false, polls: [success])
        var configuration = testConfiguration(issuer: server.issuer)
        configuration.endpoints.deviceAuthorization = server.server.url("/o/device/code")
        let time = TestClock.fixed()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration),
            store: MemoryTokenStore(),
            transport: server.server.transport,
            clock: time.clock
        )
        let tokens = try await auth.login(.device(RecordingDisplay()))
        await server.server.stop()
        #expect(tokens.accessToken == "device-access")
    }

    @Test(arguments: [
        (TestResponse.json(#"{"error": "invalid_client"}"#, status: 401), AuthError.Code.configurationInvalid),
        (TestResponse.text("<html>proxy login</html>", contentType: "text/html"), .responseMalformed),
        (TestResponse.json(#"{"device_code": "d", "user_code": "U", "expires_in": 60}"#), .responseMalformed),
        (
            TestResponse.json(
                #"{"device_code": "d", "user_code": "U", "verification_uri": "http://evil.example/x", "expires_in": 60}"#
            ), .responseMalformed
        ),
    ])
    func aBadDeviceAuthorizationAnswerIsAClearError(response: TestResponse, code: AuthError.Code) async throws {
        let server = try await DeviceServer.start(device: response, polls: [])
        let display = RecordingDisplay()
        let auth = try authenticator(server, store: MemoryTokenStore(), time: TestClock.fixed())
        let error = await #expect(throws: AuthError.self) { try await auth.login(.device(display)) }
        await server.server.stop()
        #expect(error?.code == code)
        #expect(error?.operation == .deviceAuthorization)
        #expect(display.authorizations.isEmpty)
        #expect(server.tokenRequests.paths.isEmpty)
    }

    @Test func cancellingAWaitingDeviceLoginEndsItPromptly() async throws {
        let server = try await DeviceServer.start(polls: [])
        let display = RecordingDisplay()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: testConfiguration(issuer: server.issuer)),
            store: MemoryTokenStore(),
            transport: server.server.transport,
            // Between polls it waits an hour: the test ends only if cancelling cuts the wait short.
            clock: AuthClock(now: { Date() }, sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
        )
        let waiting = Task { try await auth.login(.device(display)) }
        while display.authorizations.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        waiting.cancel()
        let error = await #expect(throws: AuthError.self) { try await waiting.value }
        await server.server.stop()
        #expect(error?.code == .loginCancelled)
        #expect(server.tokenRequests.paths.isEmpty)
    }

    @Test func theTerminalDisplayPrintsCodeAndOpenLines() async throws {
        let output = OutputRecorder()
        let authorization = DeviceAuthorization(
            deviceCode: "secret-device-code",
            userCode: "WDJB-MJHT",
            verificationURI: try #require(URL(string: "https://id.example.com/device")),
            verificationURIComplete: URL(string: "https://id.example.com/device?user_code=WDJB-MJHT"),
            expiresIn: 900
        )
        await TerminalDeviceCodeDisplay(output: output.output).show(authorization)
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.contains("Code: WDJB-MJHT"))
        #expect(lines.contains("Open: https://id.example.com/device"))
        #expect(lines.contains { $0.hasSuffix("https://id.example.com/device?user_code=WDJB-MJHT") })
        #expect(lines.last?.contains("15 minutes") == true)
        #expect(!output.text.contains("secret-device-code"))
    }
}
