public import Foundation
public import NativeAuth

#if canImport(Glibc)
    internal import Glibc
#endif

/// Opens a URL in the person's browser.
///
/// ### Implementation requirements
/// - Return once the browser was launched (or throw when it could not be); the presenter runs
///   this concurrently with the loopback receiver, so it may take its time.
/// - Never print the URL yourself: the presenter prints it when opening fails.
public protocol BrowserOpener: Sendable {
    /// Opens `url`; throws when no browser could be launched.
    func open(_ url: URL) async throws
}

/// Opens URLs the way `xdg-open` and Python's `webbrowser` do.
///
/// - When `$BROWSER` is set, each of its `:`-separated commands is tried in turn: the URL replaces
///   `%s` in it, or is added as the last argument. The command is split like a shell would
///   (quotes, backslashes) but no shell runs it, so nothing in the URL is interpreted.
/// - Otherwise `xdg-open URL` on Linux, `open URL` on macOS.
/// - A command that cannot be started or exits non-zero counts as a failure.
/// - The command's standard output is discarded, so it never mixes with the program's output.
/// - The browser starts with only the environment variables a `ChildEnvironment` passes on
///   (`ChildEnvironment.standard` by default: never the program's `NATIVEAUTH_` variables, a
///   database URL or a key it holds), and a bare command name is looked up only in absolute `$PATH` entries (a
///   relative one, or an empty one, would run `./xdg-open` from a cloned repository).
public struct SystemBrowserOpener: BrowserOpener {
    private let environment: [String: String]
    private let childEnvironment: ChildEnvironment

    /// Creates an opener reading `$BROWSER` from `environment`.
    ///
    /// - Parameters:
    ///   - environment: Where `$BROWSER` is read, and the environment the browser is started from.
    ///   - childEnvironment: Which of those variables the browser gets: `ChildEnvironment.standard`
    ///     (the display, the session bus, the language, proxies) by default, never a database
    ///     password or a key the program holds in its own.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        childEnvironment: ChildEnvironment = .standard
    ) {
        self.environment = environment
        self.childEnvironment = childEnvironment
    }

    /// The commands that will be tried for `url`, in order, each as an argument vector.
    public func commands(for url: URL) -> [[String]] {
        let target = url.absoluteString
        if let browser = environment["BROWSER"], !browser.trimmingCharacters(in: .whitespaces).isEmpty {
            return browser.split(separator: ":").compactMap { entry in
                let words = ChildProcess.split(String(entry))
                guard !words.isEmpty else { return nil }
                if words.contains(where: { $0.contains("%s") }) {
                    return words.map { $0.replacingOccurrences(of: "%s", with: target) }
                }
                return words + [target]
            }
        }
        #if os(macOS)
            return [["open", target]]
        #else
            return [["xdg-open", target]]
        #endif
    }

    public func open(_ url: URL) async throws {
        var failures: [String] = []
        for command in commands(for: url) {
            guard let executable = ChildProcess.executable(command[0]) else {
                failures.append("\(command[0]) was not found")
                continue
            }
            do {
                let status = try await ChildProcess.launch(
                    Process(), executable: executable, arguments: Array(command.dropFirst()), environment: environment,
                    allowing: childEnvironment)
                if status == 0 { return }
                failures.append("\(command[0]) exited with status \(status)")
            } catch {
                failures.append("\(command[0]) could not be started")
            }
        }
        throw AuthError(.configurationInvalid, "no browser could be opened: " + failures.joined(separator: "; "))
    }

}
