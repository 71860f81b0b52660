import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A record of every secret a test server hands out, for redaction checks: run a whole test
/// suite with debug logging, then search everything it printed for each recorded secret.
///
/// When the environment variable ``environmentVariable`` names a file, ``record(_:)-(String...)`` appends
/// each secret to it on a line of its own; otherwise it does nothing. ``SandboxAuthorizationServer``
/// records the secrets of its clients when it starts, and every authorization code, device
/// code and access, refresh and ID token it issues; a stand-in server of your own calls
/// ``record(_:)-(String...)`` for its tokens.
/// Several processes may append to the same file: each line is written with one `write` call on
/// a file opened with `O_APPEND`.
///
/// The project's `scripts/test.sh` runs the suite this way and fails when a recorded secret
/// appears in any output.
public enum IssuedSecrets {
    /// `NATIVEAUTH_TEST_SECRETS_FILE`: the file the secrets are appended to.
    public static let environmentVariable = "NATIVEAUTH_TEST_SECRETS_FILE"

    private static let path = ProcessInfo.processInfo.environment[environmentVariable].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Appends each of `secrets` (empty ones and ones holding a line break are skipped) to the
    /// file named by ``environmentVariable``; does nothing when it is not set.
    public static func record(_ secrets: String...) {
        record(secrets)
    }

    /// Appends each of `secrets` to the file named by ``environmentVariable``.
    public static func record(_ secrets: [String]) {
        guard let path else { return }
        let lines = secrets.filter { !$0.isEmpty && !$0.contains(where: \.isNewline) }
        guard !lines.isEmpty else { return }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        for line in lines {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
    }
}
