import Foundation
import NativeAuth
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the kill loop saw.
private struct CrashFigures: Sendable, CustomStringConvertible {
    var kills = 0
    var generationsWritten = 0
    var mostStaleFilesSeen = 0
    var problems: [String] = []

    var description: String {
        "\(kills) kills, \(generationsWritten) generations saved by the killed writers, "
            + "at most \(mostStaleFilesSeen) temporary files of killed writers at once"
    }
}

@Suite(.testLogging, .enabled(if: stressTestsEnabled, "NATIVEAUTH_STRESS_TESTS=1 runs it"))
struct FileTokenStoreCrashTests {
    /// `NATIVEAUTH_CRASH_KILLS` overrides the 1,000 kills (a quicker run on a developer's machine).
    private static let kills =
        ProcessInfo.processInfo.environment["NATIVEAUTH_CRASH_KILLS"].flatMap { Int($0) } ?? 1_000

    /// A child saves generation after generation; the parent `kill -9`s it at a random moment after
    /// its first save, 1,000 times. Every load must give one complete set, never an older one than
    /// the child had saved, and the temporary files the killed writers left are removed by a later save.
    @Test func killedWritersLeaveACompleteSetEveryTime() async throws {
        let temporary = try TemporaryDirectory()
        let directory = temporary.path + "/store"
        let store = FileTokenStore(directory: directory)
        try store.save(CrashGenerations.tokens(0), for: CrashGenerations.key)
        let writer = cliPath("TokenStoreCrashWriter")
        let kills = Self.kills

        let figures = await offCooperativePool { killLoop(writer: writer, store: store, kills: kills) }
        print("file store crash test: \(figures)")
        #expect(figures.problems.isEmpty, "\(figures.problems.prefix(5))")
        #expect(figures.kills == kills)
        #expect(figures.generationsWritten >= kills, "every writer saved at least once before it was killed")

        // Temporary files are only taken for stale after a second without writes.
        try await Task.sleep(for: .milliseconds(1_100))
        let last = try #require(try store.load(CrashGenerations.key))
        let next = try #require(CrashGenerations.generation(of: last)) + 1
        try store.save(CrashGenerations.tokens(next), for: CrashGenerations.key)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(left == [URL(fileURLWithPath: store.path(for: CrashGenerations.key)).lastPathComponent])
        #expect(try store.load(CrashGenerations.key) == CrashGenerations.tokens(next))
    }
}

/// Runs on a thread of its own: spawns, waits for "saved", sleeps 0–3 ms, kills, loads.
private func killLoop(writer: String, store: FileTokenStore, kills: Int) -> CrashFigures {
    var figures = CrashFigures()
    var floor = 0
    for round in 0..<kills {
        guard let child = spawnWriter(writer, directory: store.directory, first: floor + 1) else {
            figures.problems.append("round \(round): cannot start \(writer)")
            return figures
        }
        let ready = child.waitForLine()
        if ready {
            usleep(UInt32.random(in: 0...3_000))
        } else {
            figures.problems.append("round \(round): the writer ended before its first save")
        }
        kill(child.pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(child.pid, &status, 0)
        close(child.output)
        figures.kills += 1
        do {
            guard let loaded = try store.load(CrashGenerations.key) else {
                figures.problems.append("round \(round): the token set is missing")
                continue
            }
            guard let generation = CrashGenerations.generation(of: loaded) else {
                figures.problems.append("round \(round): the loaded set is not one complete generation")
                continue
            }
            if ready && generation < floor + 1 {
                figures.problems.append(
                    "round \(round): generation \(generation) is older than \(floor + 1), saved before")
            }
            figures.generationsWritten += max(0, generation - floor)
            floor = max(floor, generation)
        } catch {
            figures.problems.append("round \(round): load failed: \(error)")
        }
        let stale =
            (try? FileManager.default.contentsOfDirectory(atPath: store.directory))?
            .filter { $0.hasPrefix(".tokens.") }.count ?? 0
        figures.mostStaleFilesSeen = max(figures.mostStaleFilesSeen, stale)
    }
    return figures
}

private struct Child {
    let pid: pid_t
    let output: Int32

    /// Blocks until the child wrote a line, or closed its output.
    func waitForLine() -> Bool {
        var byte: UInt8 = 0
        while read(output, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return true }
        }
        return false
    }
}

/// posix_spawn with the child's stdout on a pipe (Foundation's Process reaps children itself, and
/// the loop needs `kill` and `waitpid` on its own terms).
private func spawnWriter(_ path: String, directory: String, first: Int) -> Child? {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { return nil }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
    posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
    let arguments: [String] = [path, directory, String(first)]
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    close(pipeEnds[1])
    guard spawned == 0 else {
        close(pipeEnds[0])
        return nil
    }
    return Child(pid: pid, output: pipeEnds[0])
}
