import Benchmark
import Foundation
import NativeAuth
import NativeAuthKeyring
import NativeAuthTesting

// The keyring store against the file store, in the same run: `oidc-login token` with a valid token
// (a cold start that reads the store once), and 8 `oidc-login token` processes after the access
// token expired. The keyring is the gnome-keyring-daemon that scripts/benchmarks starts on a private
// bus (this process's session bus); the benchmarks fail without one.

private struct KeyringState: Sendable {
    var sandbox: SandboxAuthorizationServer
    var files: FileTokenStore
    var keyring: SecretServiceTokenStore
    var directory: String
    var cli: String

    /// The environment of a command that uses the keyring: the session bus, and the lock directory.
    var keyringEnvironment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "",
            "XDG_RUNTIME_DIR": directory + "/runtime",
        ]
    }

    func arguments(_ command: String, keyring: Bool) -> [String] {
        [
            command, "--issuer", sandbox.issuer.absoluteString, "--client-id",
            SandboxAuthorizationServer.Client.defaultID,
        ] + (keyring ? ["--token-storage", "keyring"] : ["--store", directory + "/store"])
    }
}

private let keyringFixture = Fixture<KeyringState>()

func keyringBenchmarks() {
    let setUp: Benchmark.BenchmarkSetupHook = {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            throw BenchmarkFailure("no keyring: run scripts/benchmarks, which starts one on a private bus")
        }
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let files = FileTokenStore(directory: directory + "/store")
        let keyring = SecretServiceTokenStore(lockDirectory: directory + "/runtime/nativeauth")
        _ = try await signedIn(sandbox, store: files)
        _ = try await signedIn(sandbox, store: keyring)
        keyringFixture.set(
            KeyringState(
                sandbox: sandbox, files: files, keyring: keyring, directory: directory, cli: try cliPath("oidc-login")))
    }
    let tearDown: Benchmark.BenchmarkTeardownHook = {
        if let state = try? keyringFixture.get() {
            let auth = Authenticator(provider: try sandboxProvider(state.sandbox), store: state.keyring, logger: quiet)
            try? await state.keyring.remove(auth.key)
            await state.sandbox.stop()
            try? FileManager.default.removeItem(atPath: state.directory)
        }
        keyringFixture.set(nil)
    }

    for keyring in [false, true] {
        let store = keyring ? "keyring" : "file store"
        Benchmark(
            "CLI: oidc-login token, valid token, cold start, \(store)",
            configuration: .init(
                metrics: [.wallClock, .throughput, cliMicroseconds, cliPeakResident],
                warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 100,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try keyringFixture.get()
            let arguments = state.arguments("token", keyring: keyring)
            let environment = keyring ? state.keyringEnvironment : [:]
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            let result = try wait(for: try spawn(state.cli, arguments, environment: environment))
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            guard result.status == 0 else { throw BenchmarkFailure("oidc-login token exited with \(result.status)") }
            benchmark.measurement(cliMicroseconds, elapsed.nanoseconds / 1_000)
            benchmark.measurement(cliPeakResident, result.peakResidentBytes / 1_024)
        }

        Benchmark(
            "cross-process: 8 processes, \(store)",
            configuration: .init(
                metrics: [.wallClock, .throughput, refreshRequests, invalidGrants, stormMicroseconds],
                warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 30,
                setup: setUp, teardown: tearDown)
        ) { benchmark in
            let state = try keyringFixture.get()
            let store: any TokenStore = keyring ? state.keyring : state.files
            let auth = Authenticator(provider: try sandboxProvider(state.sandbox), store: store, logger: quiet)
            try await auth.expireAccessToken()
            let before = try await auth.currentTokens()?.accessToken
            state.sandbox.resetCounts()
            let arguments = state.arguments("token", keyring: keyring)
            let environment = keyring ? state.keyringEnvironment : [:]
            let clock = ContinuousClock()
            benchmark.startMeasurement()
            let start = clock.now
            let results = try await runTogether(8) { _ in try spawn(state.cli, arguments, environment: environment) }
            let elapsed = clock.now - start
            benchmark.stopMeasurement()
            if let failed = results.first(where: { $0.status != 0 }) {
                throw BenchmarkFailure("oidc-login token exited with \(failed.status)")
            }
            guard let after = try await store.load(auth.key)?.accessToken, after != before else {
                throw BenchmarkFailure("the processes did not store a refreshed access token")
            }
            benchmark.measurement(refreshRequests, state.sandbox.grantCount(.refreshToken))
            benchmark.measurement(invalidGrants, state.sandbox.errorCount("invalid_grant"))
            benchmark.measurement(stormMicroseconds, elapsed.nanoseconds / 1_000)
        }
    }
}
