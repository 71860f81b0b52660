public import Foundation

/// A second user of this machine, for the attacks another local user can make: the tests run as
/// root, create the user once with `useradd`, and run the attacker's part as that user with
/// `runuser`.
public enum OtherUser {
    /// The user's name.
    public static let name = "nativeauth-other"

    /// Why the tests that need a second user cannot run here, or `nil` when they can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "needs root to create a second user (the tests run as root in CI)" }
        for tool in ["/usr/sbin/useradd", "/usr/sbin/runuser", "/usr/bin/curl", "/usr/bin/id"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "needs \(tool)"
        }
        return nil
    }()

    /// Whether the second-user tests run.
    public static var isAvailable: Bool { unavailableReason == nil }

    /// Creates the user when it does not exist yet (a system user without a home or a shell).
    public static func ensure() async throws {
        if try await run("/usr/bin/id", ["-u", name]).status == 0 { return }
        let created = try await run(
            "/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        // Another test may have created it at the same moment.
        let exists = try await run("/usr/bin/id", ["-u", name]).status == 0
        guard created.status == 0 || exists else {
            throw OtherUserError(message: "useradd failed: \(created.stderr)")
        }
    }

    /// The user's uid.
    public static func uid() async throws -> uid_t {
        try await ensure()
        let result = try await run("/usr/bin/id", ["-u", name])
        guard let uid = uid_t(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw OtherUserError(message: "id -u \(name) printed \(result.stdout)")
        }
        return uid
    }

    /// GETs `url` with curl as the other user, without following redirects; the HTTP status
    /// (0 when it could not connect).
    public static func fetch(_ url: URL) async throws -> Int {
        try await ensure()
        let result = try await run(
            "/usr/sbin/runuser",
            ["-u", name, "--", "/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url.absoluteString])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

/// A failure to set up the second user.
public struct OtherUserError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
