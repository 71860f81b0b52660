import Foundation
import NativeAuth
import TestSupport
import Testing

/// `nativeauth-demo` and `nativeauth-demo sandbox` as a person runs them.
@Suite(.testLogging, .serialized) struct DemoCLITests {
    let cli = cliPath("nativeauth-demo")
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func expectEveryStep(_ result: CommandResult) {
        #expect(result.status == 0, "\(result.stderr)")
        let steps = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.contains(" ms ") }
        #expect(steps.count == 8, "\(result.stdout)")
        // The demo checks that step 6 sent exactly one refresh request. On a loaded machine (CI's
        // sanitizer runs) a 1 s token also runs out during the other steps and is refreshed there
        // too, so the totals may count more.
        #expect(result.stdout.contains("one refresh request; new access token"), "exactly one refresh")
        let total = result.stdout.split(separator: "\n").first { $0.hasPrefix("Token requests by grant:") }
            .flatMap { $0.split(separator: "refresh_token ").last?.prefix { $0.isNumber } }
            .flatMap { Int($0) }
        #expect((total ?? 0) >= 1, "\(result.stdout)")
        #expect(result.stdout.contains("Hello, alice"))
        #expect(result.stdout.hasSuffix("All 8 steps worked.\n"))
    }

    @Test func withoutADisplayTheSandboxApprovesByItself() async throws {
        // run() passes no DISPLAY, WAYLAND_DISPLAY or BROWSER.
        let result = try await run(cli, ["demo", "--token-lifetime", "1"])
        expectEveryStep(result)
        #expect(!result.stdout.contains("Approve in your browser"))
    }

    @Test func withABrowserAPersonClicksApproveOnTheSandboxPage() async throws {
        let click = Self.root.appendingPathComponent("scripts/sandbox-click.py").path
        let result = try await run(
            cli, ["demo", "--token-lifetime", "1", "--signing-algorithm", "rs256"],
            environment: ["BROWSER": "/usr/bin/python3 '\(click)' %s"])
        expectEveryStep(result)
        #expect(result.stdout.contains("Approve in your browser"))
        #expect(result.stdout.contains("ID tokens RS256"))
    }

    @Test func aDeniedSignInFailsTheDemoWithTheReason() async throws {
        let click = Self.root.appendingPathComponent("scripts/sandbox-click.py").path
        let result = try await run(
            cli, ["demo", "--token-lifetime", "1"], environment: ["BROWSER": "/usr/bin/python3 '\(click)' --deny %s"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("3. sign in (browser + loopback) failed"))
        #expect(result.stderr.contains("error: authorization_failed"), "\(result.stderr)")
    }

    @Test func badOptionsAreUsageErrors() async throws {
        #expect(try await run(cli, ["demo", "--token-lifetime", "0"]).status == 64)
        #expect(try await run(cli, ["demo", "--signing-algorithm", "hs256"]).status == 64)
    }
}
