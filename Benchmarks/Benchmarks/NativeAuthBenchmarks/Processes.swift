import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A finished child process: its exit status and its peak resident memory.
struct ChildResult {
    var status: Int32
    /// `ru_maxrss` in bytes.
    var peakResidentBytes: Int
}

/// Starts `path` with `arguments`, its output sent to /dev/null (its standard output to `output`
/// when given). Blocking work: benchmark closures that spawn are synchronous, so no cooperative
/// thread is held.
func spawn(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], output: String? = nil
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
        &actions, 1, output ?? "/dev/null", output == nil ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var base = ["PATH": "/usr/bin:/bin"]
    if let home = ProcessInfo.processInfo.environment["HOME"] { base["HOME"] = home }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = base.merging(environment) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, path, &actions, nil, argv, envp)
    guard status == 0 else { throw BenchmarkFailure("cannot start \(path): \(String(cString: strerror(status)))") }
    return pid
}

/// Waits for `pid` (blocking) and returns its status and peak memory.
///
/// On Linux the peak is the child's own `VmHWM`, read from `/proc/PID/status` while it runs (the
/// last reading before it exits; the high-water mark only grows): `ru_maxrss` is no good for a
/// child started with `posix_spawn`, which glibc starts with `vfork`, so that the child's
/// `ru_maxrss` begins at this process's own peak (`exec` keeps the high-water mark of the memory
/// it replaces). Elsewhere, `ru_maxrss`.
func wait(for pid: pid_t) throws -> ChildResult {
    var status: Int32 = 0
    var usage = rusage()
    #if os(Linux)
        var peakKiB = 0
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            guard reaped == 0 || errno == EINTR else {
                throw BenchmarkFailure("wait4: \(String(cString: strerror(errno)))")
            }
            if let hwm = highWaterMarkKiB(of: pid) { peakKiB = max(peakKiB, hwm) }
            usleep(500)
        }
        let peak = peakKiB * 1024
    #else
        while wait4(pid, &status, 0, &usage) == -1 {
            guard errno == EINTR else { throw BenchmarkFailure("wait4: \(String(cString: strerror(errno)))") }
        }
        let peak = Int(usage.ru_maxrss)  // bytes on macOS
    #endif
    let exited = (status & 0x7f) == 0
    return ChildResult(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), peakResidentBytes: peak)
}

#if os(Linux)
    /// The `VmHWM` of a running process, in KiB; `nil` once it has exited (a zombie has no memory).
    private func highWaterMarkKiB(of pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "")
        }
        return nil
    }
#endif
