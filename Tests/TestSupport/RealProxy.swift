import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP proxy for the transport tests: Debian's tinyproxy on 127.0.0.1 (`scripts/tinyproxy`),
/// its configuration and log in a private directory.
public final class TinyProxy: Sendable {
    /// The directory holding its configuration, pid file and log.
    public let directory: TemporaryDirectory
    /// The port it listens on.
    public let port: Int

    private static let script = repositoryRoot.path + "/scripts/tinyproxy"

    private init(directory: TemporaryDirectory, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Starts a proxy; with `credentials` (`user:password`) it asks for Basic proxy authentication.
    public static func start(credentials: String? = nil) async throws -> TinyProxy {
        let directory = try TemporaryDirectory()
        let result = try await run(
            "/bin/bash", [script, "start", directory.path + "/proxy"] + (credentials.map { [$0] } ?? []))
        guard result.status == 0,
            let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("port: ") }),
            let port = Int(line.dropFirst("port: ".count))
        else {
            throw TestComponentError(message: "scripts/tinyproxy failed: \(result.stderr)")
        }
        return TinyProxy(directory: directory, port: port)
    }

    /// `http://127.0.0.1:PORT`, with `credentials` when given.
    public func url(credentials: String? = nil) -> String {
        "http://\(credentials.map { $0 + "@" } ?? "")127.0.0.1:\(port)"
    }

    /// The request lines it logged (`GET http://… HTTP/1.1`, `CONNECT host:port HTTP/1.1`).
    public var requests: [String] {
        let log = (try? String(contentsOfFile: directory.path + "/proxy/log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): ", options: []), line.contains("Request (") else { return nil }
            return String(line[range.upperBound...])
        }
    }

    /// Stops it.
    public func stop() async {
        _ = try? await run("/bin/bash", [Self.script, "stop", directory.path + "/proxy"])
    }

    /// A test that ended early (a thrown error) leaves no proxy behind.
    deinit {
        let pidFile = directory.path + "/proxy/pid"
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1
        {
            kill(pid, SIGKILL)
        }
    }
}

/// Throwaway certificates made with openssl (`scripts/test-certificates`): a CA, a server
/// certificate for 127.0.0.1, a client certificate, and another CA with its own client certificate.
public struct TestCertificates: Sendable {
    /// The directory holding them (kept while this value's directory lives).
    public let directory: TemporaryDirectory

    /// Makes a new set.
    public static func make() async throws -> TestCertificates {
        let directory = try TemporaryDirectory()
        let result = try await run("/bin/bash", [repositoryRoot.path + "/scripts/test-certificates", directory.path])
        guard result.status == 0 else {
            throw TestComponentError(message: "scripts/test-certificates failed: \(result.stderr)")
        }
        return TestCertificates(directory: directory)
    }

    /// The path of one of the files (`ca.pem`, `server.key`, …).
    public func path(_ name: String) -> String { directory.path + "/" + name }
}

/// A real component of the tests that did not start.
public struct TestComponentError: Error, CustomStringConvertible {
    /// What happened.
    public var message: String
    public var description: String { message }
}

/// Whether the port can be bound within `seconds`: a listener that was just closed may take a moment
/// to let go of it on a loaded machine (ThreadSanitizer in CI).
public func canBindSoon(port: Int, seconds: Int = 10) async -> Bool {
    for _ in 0..<(seconds * 20) {
        if await canBind(port: port) { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}
