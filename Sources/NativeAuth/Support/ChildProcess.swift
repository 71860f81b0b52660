package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The programs NativeAuth starts (a browser, a workload's subject-token command, git): found on
/// `PATH` as a shell finds them, given only the environment variables a ``ChildEnvironment``
/// allows, and waited for on a thread of their own.
package enum ChildProcess {
    /// The executable for `name`: a path as it is, a bare name looked up in the absolute entries of
    /// `searchPath` (`$PATH` by default), as Go's `exec.LookPath` does.
    package static func executable(
        _ name: String,
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    ) -> URL? {
        if name.contains("/") {
            return FileManager.default.isExecutableFile(atPath: name) ? URL(fileURLWithPath: name) : nil
        }
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: true)
        where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        }
        return nil
    }

    /// Runs `process` to its end and returns its exit status, without holding a thread of Swift's
    /// pool. It waits with `waitUntilExit()` on a thread of its own: on Linux, a `Process` that is
    /// only watched through `terminationHandler` is never freed (nor the URL in its arguments,
    /// which for an end-session URL holds the ID token). The child gets the variables of
    /// `environment` that `allowed` passes on.
    package static func launch(
        _ process: Process,
        executable: URL,
        arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        allowing allowed: ChildEnvironment = .standard
    ) async throws -> Int32 {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.environment = childEnvironment(environment, allowing: allowed)
        return try await runToEnd(process) { () }.status
    }

    /// Starts `process` and waits for its end on a thread of its own (see
    /// ``launch(_:executable:arguments:environment:)`` for why), calling `collect` in between (to
    /// read its pipes to their end); returns its exit status and what `collect` returned.
    package static func runToEnd<T: Sendable>(
        _ process: Process,
        collect: @escaping @Sendable () -> T
    ) async throws -> (status: Int32, collected: T) {
        let result = try await runToEnd(process, timeout: nil, collect: collect)
        return (result.status, result.collected)
    }

    /// ``runToEnd(_:collect:)``, stopping the process when it runs longer than `timeout`: `SIGTERM`,
    /// then `SIGKILL` two seconds later, to its whole process group (the children it started, such
    /// as a wrapper script's, too). `collect` gets the deadline, and must stop reading by then
    /// whatever still holds its pipe (``readToEnd(_:limit:deadline:)``). `timedOut` says whether
    /// it was stopped so.
    package static func runToEnd<T: Sendable>(
        _ process: Process,
        timeout: Duration?,
        collect: @escaping @Sendable (_ deadline: ContinuousClock.Instant?) -> T
    ) async throws -> (status: Int32, collected: T, timedOut: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            // Resumed once: by this thread when the child ends, or, past the deadline, when the
            // child is killed (see below).
            let answer = Locked<
                CheckedContinuation<(status: Int32, collected: T, timedOut: Bool), any Error>?
            >(continuation)
            let finish = { @Sendable (result: Result<(status: Int32, collected: T, timedOut: Bool), any Error>) in
                answer.withLock { waiting in
                    waiting?.resume(with: result)
                    waiting = nil
                }
            }
            let thread = Thread {
                do {
                    let deadline = timeout.map { ContinuousClock.now + $0 }
                    try process.run()
                    let pid = process.processIdentifier
                    // Foundation starts a child as the leader of a process group of its own (on
                    // Linux and on Darwin); when it did not, only the child is signalled.
                    let stopped = ProcessWatchdog(pid: pid, group: getpgid(pid) == pid)
                    let collected = Locked<T?>(nil)
                    // On Linux, Foundation sees the child's end only when every process that
                    // inherited its descriptors has ended, and one that left the group may live
                    // on: when the child is killed, the caller goes on; this thread still waits.
                    if let timeout {
                        stopped.arm(after: timeout) {
                            if let value = collected.withLock({ $0 }) { finish(.success((-1, value, true))) }
                        }
                    }
                    let value = collect(deadline)
                    collected.withLock { $0 = value }
                    // The pipe was still held at the deadline (by the child, or by one it left behind).
                    if let deadline, ContinuousClock.now >= deadline {
                        stopped.fire()
                        finish(.success((-1, value, true)))
                    }
                    process.waitUntilExit()
                    let timedOut = stopped.disarm()
                    finish(.success((process.terminationStatus, value, timedOut)))
                } catch {
                    finish(.failure(error))
                }
            }
            thread.start()
        }
    }

    /// ``runToEnd(_:timeout:collect:)`` for a `collect` without a deadline.
    package static func runToEnd<T: Sendable>(
        _ process: Process,
        timeout: Duration?,
        collect: @escaping @Sendable () -> T
    ) async throws -> (status: Int32, collected: T, timedOut: Bool) {
        try await runToEnd(process, timeout: timeout) { (_: ContinuousClock.Instant?) in collect() }
    }

    /// Reads `handle` to its end, keeping at most `limit` bytes (and one more, to tell that there
    /// were more), and stops at `deadline` whatever still holds the other end open. `complete` is
    /// `false` when it stopped so, or on a read error.
    package static func readToEnd(_ handle: FileHandle, limit: Int, deadline: ContinuousClock.Instant?)
        -> (data: Data, complete: Bool)
    {
        let descriptor = handle.fileDescriptor
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return (data, false) }
                let milliseconds = Int32(
                    clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                var wanted = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&wanted, 1, milliseconds)
                if ready < 0, errno == EINTR { continue }
                guard ready >= 0 else { return (data, false) }
                if ready == 0 { continue }
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return (data, false) }
            if count == 0 { return (data, true) }
            if data.count <= limit { data.append(contentsOf: buffer[0..<min(count, limit + 1 - data.count)]) }
        }
    }

    /// The environment a child starts with: the variables of the program's that `allowed` passes on.
    package static func childEnvironment(
        _ environment: [String: String], allowing allowed: ChildEnvironment = .standard
    ) -> [String: String] {
        allowed.filtered(environment)
    }

    /// Splits a command line into words like a POSIX shell: whitespace separates words, single
    /// quotes keep everything, double quotes keep everything but `\"` and `\\`, a backslash outside
    /// quotes escapes the next character.
    package static func split(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"):
                escaped = true
                inWord = true
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case (nil, " "), (nil, "\t"):
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

/// Stops a child that runs too long: `SIGTERM` at the deadline, `SIGKILL` two seconds later, to
/// its process group when it leads one; never after ``disarm()`` (so that a reused pid is never
/// signalled).
private final class ProcessWatchdog: Sendable {
    private let pid: Int32
    private let group: Bool
    /// Whether it is armed, and whether it fired.
    private let state = Locked((armed: false, fired: false))

    init(pid: Int32, group: Bool) {
        self.pid = pid
        self.group = group
    }

    /// Fires after `timeout`; `killed` is called just after `SIGKILL` is sent.
    func arm(after timeout: Duration, killed: @escaping @Sendable () -> Void = {}) {
        state.withLock { $0.armed = true }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in fire(killed: killed) }
    }

    /// Signals now: `SIGTERM`, and `SIGKILL` two seconds later (once, however often it is called).
    func fire(killed: @escaping @Sendable () -> Void = {}) {
        let first = state.withLock { state in
            defer { if state.armed { state.fired = true } }
            return state.armed && !state.fired
        }
        guard first else { return }
        signal(SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [self] in
            signal(SIGKILL)
            killed()
        }
    }

    private func signal(_ number: Int32) {
        state.withLock { state in
            // The group is signalled even after the child ended (it may have left others behind
            // in it); only ``disarm()`` stops that.
            guard state.armed else { return }
            if group { kill(-pid, number) }
            kill(pid, number)
        }
    }

    /// Stops it; whether it fired.
    func disarm() -> Bool {
        state.withLock { state in
            state.armed = false
            return state.fired
        }
    }
}
