public import Foundation

#if os(Linux)

    import Glibc

    /// A real Secret Service for the keyring tests: a private D-Bus bus and gnome-keyring-daemon on it,
    /// all inside a temporary directory (`scripts/keyring-daemon`), never a real user's keyring.
    ///
    /// The tests run when `NATIVEAUTH_KEYRING_TESTS=1` (scripts/test.sh sets it for the main run, not
    /// under the sanitizers); then a missing daemon fails them instead of skipping them.
    public final class KeyringDaemon: Sendable {
        /// Whether the keyring tests run.
        public static let enabled = ProcessInfo.processInfo.environment["NATIVEAUTH_KEYRING_TESTS"] == "1"

        /// The directory holding the bus socket, the keyring files and the daemon's HOME.
        public let directory: TemporaryDirectory
        /// The bus address (`unix:path=…/bus`).
        public let address: String

        private static let script = repositoryRoot.path + "/scripts/keyring-daemon"

        private init(directory: TemporaryDirectory, address: String) {
            self.directory = directory
            self.address = address
        }

        /// Starts a bus and, unless `secretService` is `false`, an unlocked gnome-keyring-daemon on it.
        public static func start(secretService: Bool = true) async throws -> KeyringDaemon {
            let directory = try TemporaryDirectory()
            let result = try await run(
                "/bin/bash", [script, secretService ? "start" : "bus", directory.path + "/keyring"])
            guard result.status == 0,
                let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("address: ") })
            else {
                throw KeyringDaemonError(message: "scripts/keyring-daemon failed: \(result.stderr)")
            }
            return KeyringDaemon(directory: directory, address: String(line.dropFirst("address: ".count)))
        }

        /// The environment that points a command at this bus.
        public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

        private func script(_ command: String) async throws {
            let result = try await run("/bin/bash", [Self.script, command, directory.path + "/keyring"])
            guard result.status == 0 else {
                throw KeyringDaemonError(message: "scripts/keyring-daemon \(command) failed: \(result.stderr)")
            }
        }

        /// Locks the login keyring.
        public func lock() async throws { try await script("lock") }
        /// Kills gnome-keyring-daemon (SIGKILL); the bus stays.
        public func kill() async throws { try await script("kill") }
        /// Kills gnome-keyring-daemon and starts it again, unlocked.
        public func restart() async throws { try await script("restart") }
        /// Stops the daemon and the bus.
        public func stop() async throws { try await script("stop") }

        /// gnome-keyring-daemon's pid.
        public func keyringPID() throws -> pid_t {
            let text = try String(contentsOfFile: directory.path + "/keyring/keyring.pid", encoding: .utf8)
            guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw KeyringDaemonError(message: "no keyring pid")
            }
            return pid
        }

        /// The secret of the item with `attributes`, read with `secret-tool lookup` in a process that is
        /// not recorded for the redaction check (it reads the tokens on purpose, to search for them).
        public func lookUp(_ attributes: [String: String]) async -> String {
            await Self.lookUp(attributes, environment: environment)
        }

        /// `lookUp` on the bus `environment` names.
        public static func lookUp(_ attributes: [String: String], environment: [String: String]) async -> String {
            await offCooperativePool {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
                process.arguments = ["lookup"] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
                process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }
                let output = Pipe()
                process.standardOutput = output
                process.standardError = FileHandle.nullDevice
                guard (try? process.run()) != nil else { return "" }
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return String(decoding: data, as: UTF8.self)
            }
        }

        /// Runs `secret-tool` on this bus, with `input` on its standard input.
        public func secretTool(_ arguments: [String], input: String? = nil) async throws -> CommandResult {
            let command = try RunningCommand("/usr/bin/secret-tool", arguments, environment: environment)
            if let input { command.type(input) }
            return await command.finish(closeInput: true)
        }

        deinit {
            // Tests stop it themselves; this catches a test that threw first.
            for name in ["keyring.pid", "bus.pid"] {
                if let text = try? String(contentsOfFile: directory.path + "/keyring/" + name, encoding: .utf8),
                    let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
                {
                    Glibc.kill(pid, SIGKILL)
                }
            }
        }
    }

    /// A failure to start or drive the keyring daemon.
    public struct KeyringDaemonError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
#endif
