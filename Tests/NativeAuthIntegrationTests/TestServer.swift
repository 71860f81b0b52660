import Foundation
import LenientJSON
import NativeAuth
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The django-oauth-toolkit server started by `scripts/test-server start`, as its env.json describes it.
struct TestServer: Sendable {
    let issuer: URL
    let username: String
    let password: String
    /// A second person (bob), for tests of several accounts (`scripted-browser.py --second-user`).
    let secondUsername: String
    let publicClientID: String
    let confidentialClientID: String
    let confidentialClientSecret: String
    let deviceClientID: String
    let deviceAuthorizationEndpoint: URL
    /// A confidential client allowed the client credentials grant only.
    let serviceClientID: String
    let serviceClientSecret: String

    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var stateDirectory: URL {
        ProcessInfo.processInfo.environment["NATIVEAUTH_TEST_STATE"].map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent(".test-server")
    }

    /// Whether `scripts/test-server start` left a running server.
    static var isRunning: Bool {
        guard let text = try? String(contentsOf: stateDirectory.appendingPathComponent("pid"), encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return false }
        return kill(pid, 0) == 0
            && FileManager.default.fileExists(atPath: stateDirectory.appendingPathComponent("env.json").path)
    }

    /// Whether a missing server is a failure (CI) rather than a reason to skip.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["NATIVEAUTH_REQUIRE_TEST_SERVER"] == "1" }

    static func load() throws -> TestServer {
        let data = try Data(contentsOf: stateDirectory.appendingPathComponent("env.json"))
        guard let object = try JSONValue.parse(data).objectValue,
            let issuer = URL(string: try object.requiredString("issuer")),
            let device = URL(string: try object.requiredString("device_authorization_endpoint"))
        else { throw AuthError(.configurationInvalid, "env.json is not what scripts/test-server writes") }
        return TestServer(
            issuer: issuer,
            username: try object.requiredString("username"),
            password: try object.requiredString("password"),
            secondUsername: try object.requiredString("second_username"),
            publicClientID: try object.requiredString("public_client_id"),
            confidentialClientID: try object.requiredString("confidential_client_id"),
            confidentialClientSecret: try object.requiredString("confidential_client_secret"),
            deviceClientID: try object.requiredString("device_client_id"),
            deviceAuthorizationEndpoint: device,
            serviceClientID: try object.requiredString("service_client_id"),
            serviceClientSecret: try object.requiredString("service_client_secret")
        )
    }

    /// The `$BROWSER` value that runs the scripted browser, with extra options before the URL.
    static func browserCommand(_ options: String = "") -> String {
        let python = root.appendingPathComponent(".venv/bin/python").path
        let script = root.appendingPathComponent("scripts/scripted-browser.py").path
        return "'\(python)' '\(script)' \(options) %s"
    }

    /// A browser opener that plays the person with the scripted browser (`--second-user`: bob).
    static func scriptedBrowser(_ options: String = "") -> SystemBrowserOpener {
        SystemBrowserOpener(environment: ["BROWSER": browserCommand(options), "PATH": "/usr/bin:/bin"])
    }

    func configuration(
        clientID: String? = nil,
        secret: String? = nil,
        authentication: ClientAuthentication? = nil,
        issuer: URL? = nil
    ) -> ProviderConfiguration {
        ProviderConfiguration(
            issuer: issuer ?? self.issuer,
            clientID: clientID ?? publicClientID,
            clientSecret: secret,
            scopes: ["openid", "profile", "email"],
            clientAuthentication: authentication
        )
    }
}

/// Runs a scripted browser in the print-callback mode and returns the URL it would have followed.
func scriptedCallback(for authorizationURL: URL) async throws -> URL {
    let process = Process()
    process.executableURL = TestServer.root.appendingPathComponent(".venv/bin/python")
    process.arguments = [
        TestServer.root.appendingPathComponent("scripts/scripted-browser.py").path, "--print-callback",
        authorizationURL.absoluteString,
    ]
    let output = Pipe()
    process.standardOutput = output
    let exited = exitStatus(of: process)
    try process.run()
    let data = await offCooperativePool { output.fileHandleForReading.readDataToEndOfFile() }
    let status = await exited.value
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard status == 0, let url = URL(string: text) else {
        throw AuthError(.authorizationFailed, "the scripted browser failed (status \(status))")
    }
    return url
}

/// A browser stand-in that runs a closure.
struct ClosureOpener: BrowserOpener {
    let body: @Sendable (URL) async throws -> Void
    func open(_ url: URL) async throws { try await body(url) }
}
