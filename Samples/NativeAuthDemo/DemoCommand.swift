import ArgumentParser
import Foundation
import HTTPTypes
import HTTPTypesFoundation
import LenientJSON
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthCommands
import NativeAuthPresenters
import NativeAuthTesting

/// `nativeauth-demo` (`nativeauth-demo demo`): the whole life of a sign-in against a sandbox authorization server that runs
/// in this process, with no account and no network.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Sign in, refresh, call an API and sign out against a sandbox server in this process.",
        discussion: """
            Starts NativeAuth's sandbox authorization server on 127.0.0.1, signs in through the browser \
            and a loopback redirect, shows the userinfo, waits out a short access-token lifetime, \
            refreshes, calls the sandbox's protected resource, and signs out (revocation and logout). \
            Each step prints its time, and the end shows how many requests each endpoint received. \
            Nothing leaves this machine; the tokens live in a temporary directory that is removed.

            The browser opens on the sandbox's approval page when there is a display; with \
            --auto-approve, or without a display, the sandbox approves by itself.

            \(CommandSupport.exitStatusHelp)
            """
    )

    @Flag(name: .customLong("auto-approve"), help: "Approve without a browser (the default without a display).")
    var autoApprove = false

    @Option(name: .customLong("token-lifetime"), help: "The access token's lifetime in seconds, waited out.")
    var tokenLifetime = 3

    @OptionGroup var signing: SigningOption

    func validate() throws {
        guard (1...300).contains(tokenLifetime) else {
            throw ValidationError("--token-lifetime must be between 1 and 300 seconds")
        }
    }

    /// Whether a browser can be shown: always on macOS; on Linux with a display or `$BROWSER`.
    static func hasDisplay(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        #if os(macOS)
            return true
        #else
            return ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { environment[$0]?.isEmpty == false }
        #endif
    }

    func run() async throws {
        let approveBySelf = autoApprove || !Self.hasDisplay()
        let lifetime = tokenLifetime
        let algorithm = signing.algorithm
        try await CommandSupport.run(NativeAuthDemo.self) {
            try await CommandSupport.cancellingOnSignals {
                try await Demo(approveBySelf: approveBySelf, tokenLifetime: lifetime, algorithm: algorithm).run()
            }
        }
    }
}

/// The demo's steps, each timed and checked.
struct Demo: Sendable {
    let approveBySelf: Bool
    let tokenLifetime: Int
    let algorithm: SandboxAuthorizationServer.SigningAlgorithm

    func say(_ text: String) { CommandSupport.printLine(text) }

    /// Runs `body` as step `number`, printing its name, time and what it returned.
    func step<T: Sendable>(
        _ number: Int,
        _ name: String,
        _ body: () async throws -> (T, String)
    ) async throws -> T {
        let clock = ContinuousClock()
        let start = clock.now
        let (value, detail): (T, String)
        do {
            (value, detail) = try await body()
        } catch let error as AuthError {
            say("  \(number). \(name) failed")
            throw error
        }
        let label = "\(number). \(name)".padding(toLength: 32, withPad: " ", startingAt: 0)
        let time = String(Int(((clock.now - start) / .milliseconds(1)).rounded())).leftPadded(to: 6)
        say("  \(label)\(time) ms   \(detail)")
        return value
    }

    func check(_ condition: Bool, _ message: String) throws {
        guard condition else { throw AuthError(.requestFailed, "the demo expected \(message)") }
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nativeauth-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let sandbox = try await step(1, "start the sandbox") {
            let sandbox = try await SandboxAuthorizationServer.start(
                .init(
                    autoApprove: approveBySelf, accessTokenLifetime: .seconds(tokenLifetime),
                    signingAlgorithm: algorithm), mode: .live)
            return (sandbox, "issuer \(sandbox.issuer.absoluteString), ID tokens \(algorithm.rawValue)")
        }
        do {
            try await run(sandbox, store: FileTokenStore(directory: directory.path))
        } catch {
            await sandbox.stop()
            throw error
        }
        await sandbox.stop()
    }

    private func run(_ sandbox: SandboxAuthorizationServer, store: FileTokenStore) async throws {
        let configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile", "email", "api"]
        )
        let authenticator = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: StandardTransport.platformDefault(), logger: CommandSupport.makeLogger(label: "NativeAuth"))
        let opener: any BrowserOpener = approveBySelf ? RedirectFollowingBrowser() : SystemBrowserOpener()
        let presenter = LoopbackPresenter(configuration: .init(timeout: .seconds(300), opener: opener))

        try await step(2, "discovery") {
            let metadata = try await authenticator.metadata()
            let listed = [
                metadata.userInfoEndpoint, metadata.jwksURI, metadata.revocationEndpoint, metadata.endSessionEndpoint,
                metadata.deviceAuthorizationEndpoint,
            ]
            return (
                (),
                "\(2 + listed.compactMap { $0 }.count) endpoints; iss parameter: "
                    + (metadata.authorizationResponseIssParameterSupported ? "yes" : "no")
            )
        }
        if !approveBySelf {
            say("     Approve in your browser: the sandbox's page opens (Approve signs in as alice).")
        }
        let tokens = try await step(3, "sign in (browser + loopback)") {
            let tokens = try await authenticator.login(.browser(presenter))
            return (tokens, "signed in as \(tokens.displayName ?? tokens.subject ?? "?"); ID token verified")
        }
        try await step(4, "userinfo") {
            let user = try await authenticator.userInfo()
            return ((), [user.name, user.email].compactMap { $0 }.joined(separator: ", "))
        }
        try await step(5, "wait out the access token") {
            // The token held now: on a slow machine a 1 s token may already have been refreshed
            // (userinfo in step 4 refreshes one past half its life).
            let expiry = try await authenticator.currentTokens()?.expiresAt ?? tokens.expiresAt ?? Date()
            let wait = max(0, expiry.timeIntervalSinceNow) + 0.2
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
            return ((), "it lived \(tokenLifetime) s")
        }
        try await step(6, "refresh") {
            let held = try await authenticator.currentTokens()
            let refreshes = sandbox.grantCount(.refreshToken)
            let fresh = try await authenticator.accessToken()
            try check(fresh != held?.accessToken, "a new access token")
            try check(sandbox.grantCount(.refreshToken) == refreshes + 1, "exactly one refresh request")
            let rotated = try await authenticator.currentTokens()?.refreshToken != held?.refreshToken
            return ((), "one refresh request; new access token; refresh token \(rotated ? "rotated" : "kept")")
        }
        try await step(7, "call the protected resource") {
            var request = HTTPRequest(method: .get, url: sandbox.url(.resource))
            request.headerFields[.accept] = "application/json"
            let refreshes = sandbox.grantCount(.refreshToken)
            let (response, body) = try await authenticator.send(request)
            try check(response.status.code == 200, "HTTP 200 from the resource, not \(response.status.code)")
            let message = Demo.message(in: body) ?? "HTTP 200"
            // A very short --token-lifetime can run out again on a slow machine: say so.
            let again = sandbox.grantCount(.refreshToken) > refreshes ? " (the token ran out again: refreshed)" : ""
            return ((), message + again)
        }
        try await step(8, "sign out") {
            let result = try await authenticator.logout(presenter: presenter)
            try check(result.revocationError == nil, "revocation to succeed")
            try check(try await authenticator.currentTokens() == nil, "no stored tokens")
            return ((), "tokens revoked and removed; session ended: \(result.endSessionCompleted ? "yes" : "no")")
        }
        let counts = sandbox.requestCounts
        let endpoints = SandboxAuthorizationServer.Endpoint.allCases.compactMap { endpoint in
            counts[endpoint].map { "\(endpoint.rawValue) \($0)" }
        }
        say("")
        say("Requests per endpoint: " + endpoints.joined(separator: ", "))
        let grants = SandboxAuthorizationServer.Grant.allCases.map { grant in
            "\(grant.rawValue.split(separator: ":").last ?? "") \(sandbox.grantCount(grant))"
        }
        say("Token requests by grant: " + grants.joined(separator: ", "))
        say("All 8 steps worked.")
    }
}

extension Demo {
    /// The resource's `message`, if its answer has one.
    static func message(in body: Data) -> String? {
        guard let object = try? JSONValue.parse(body).objectValue else { return nil }
        return (try? object.string("message")) ?? nil
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
