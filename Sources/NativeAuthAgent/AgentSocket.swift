internal import Foundation
internal import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where an agent listens: `agent.<pid>.sock` in a directory of its own, made 0700 (as ssh-agent's
/// `/tmp/ssh-XXXXXXXXXX/agent.<ppid>`), and what the remote side reads: `NATIVEAUTH_AGENT_SOCK`.
public struct AgentSocket: Sendable, Equatable {
    /// `NATIVEAUTH_AGENT_SOCK`: the environment variable that names an agent's socket.
    public static let environmentVariable = "NATIVEAUTH_AGENT_SOCK"

    /// The socket's path.
    public let path: String
    /// The directory made for it, removed with it; `nil` when the caller chose the path.
    public let directory: String?

    /// A socket at `path` the caller chose (its directory must not be writable by others).
    public init(path: String) {
        self.path = path
        directory = nil
    }

    private init(path: String, directory: String) {
        self.path = path
        self.directory = directory
    }

    /// A new 0700 directory under `parent` (default: `$XDG_RUNTIME_DIR`, else `$TMPDIR`, else
    /// `/tmp`) with the socket's path in it.
    public static func create(in parent: String? = nil) throws -> AgentSocket {
        let environment = ProcessInfo.processInfo.environment
        let base =
            parent ?? environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template =
            Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
            + Array("nativeauth-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap(mkdtemp) }) else {
            throw AuthError(
                .configurationInvalid, "no directory for the agent's socket could be made under \(base)",
                hint: "give the agent a writable directory")
        }
        let directory = String(cString: made)
        chmod(directory, 0o700)  // mkdtemp makes it 0700; said again in case of an odd umask handling
        return AgentSocket(path: directory + "/agent.\(getpid()).sock", directory: directory)
    }

    /// The socket named by `NATIVEAUTH_AGENT_SOCK`, when it is set.
    public static var fromEnvironment: AgentSocket? { named(in: ProcessInfo.processInfo.environment) }

    /// The socket `NATIVEAUTH_AGENT_SOCK` names in `environment`, when it is set.
    public static func named(in environment: [String: String]) -> AgentSocket? {
        environment[environmentVariable].flatMap { $0.isEmpty ? nil : AgentSocket(path: $0) }
    }

    /// The lines a shell evaluates, as `ssh-agent -s` prints them.
    public var shellExport: String {
        "\(Self.environmentVariable)=\(path); export \(Self.environmentVariable);"
    }

    /// Removes the socket, and the directory when this made it.
    public func remove() {
        unlink(path)
        if let directory { rmdir(directory) }
    }
}
