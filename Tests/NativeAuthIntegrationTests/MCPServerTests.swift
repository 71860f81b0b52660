import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

/// An MCP server built from the official MCP Python SDK (scripts/mcp-server: the SDK's own server,
/// authorization server routes and protected resource metadata; only its in-memory glue is ours),
/// and the CLI given nothing but the server's URL: the 401, the metadata, the SDK's authorization
/// server (which matches redirect URIs exactly and registers only the scopes it lists), a
/// registration, one sign-in, the JSON-RPC calls.
@Suite(.testLogging, .enabled(if: MCPSDK.available, "needs the MCP Python SDK (mcp) in .venv"))
struct MCPServerTests {
    let cli = cliPath("oidc-login")
    let accept = ["-H", "Accept: application/json, text/event-stream"]

    /// The SDK's server, and its MCP endpoint.
    func start(_ arguments: [String] = []) async throws -> (RunningCommand, String) {
        try await MCPSDK.start(arguments)
    }

    /// Expires the sign-in's access token and each resource's, in the one sign-in `tokens` holds.
    static func expireEveryToken(in tokens: FileTokenStore) throws {
        let key = try #require(try tokens.keys().first { $0.clientID != ClientRegistration.storeClientID })
        var held = try #require(try tokens.load(key))
        held.expiresAt = Date(timeIntervalSinceNow: -30)
        for index in held.resourceTokens.indices {
            held.resourceTokens[index].expiresAt = Date(timeIntervalSinceNow: -30)
        }
        // A sign-in made for the resource alone holds its token itself (issue 60 A).
        try #require(!held.resourceTokens.isEmpty || held.resources.count == 1)
        try tokens.save(held, for: key)
    }

    static func call(_ id: Int, _ method: String, _ params: String) -> String {
        MCPSDK.call(id, method, params)
    }

    /// The `initialize` request every test's first call sends.
    static let initialize = call(
        1, "initialize",
        #"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oidc-login","version":"1"}}"#)

    @Test func fromTheServersURLAloneToAuthorizedCallsWithOneSignInAndOneRefresh() async throws {
        let (server, url) = try await start()
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let initialize = Self.initialize
        // Nothing configured but the URL: no --discover, no --issuer.
        let first = try await run(
            cli, ["api", url, "-X", "POST"] + accept + ["-d", initialize] + store,
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""serverInfo""#) && first.stdout.contains("nativeauth-test"), "\(first.stdout)")

        // Another process, the URL alone: the stored registration and sign-in, no browser.
        let echo = Self.call(2, "tools/call", #"{"name":"echo","arguments":{"text":"hello from oidc-login"}}"#)
        let second = try await run(cli, ["api", url, "-X", "POST"] + accept + ["-d", echo] + store)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("hello from oidc-login"), "\(second.stdout)")

        // The URL alone gives its token (`token --resource`), and `status` lists it.
        let token = try await run(cli, ["token", "--resource", url] + store)
        #expect(token.status == 0 && token.stdout.hasPrefix("mcp-at-"), "\(token.stderr)")
        let status = try await run(cli, ["status"] + store)
        #expect(status.stdout.contains("\(url): from \(url.dropLast(4))"), "\(status.stdout)")

        // The access tokens expired (the sign-in's and the resource's): 8 processes at once, one refresh.
        let tokens = FileTokenStore(directory: directory.path + "/store")
        try Self.expireEveryToken(in: tokens)
        let list = Self.call(3, "tools/list", "{}")
        let cli = cli
        let arguments = ["api", url, "-X", "POST"] + accept + ["-d", list] + store
        let parallel = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<8 { group.addTask { try await run(cli, arguments) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(parallel.allSatisfy { $0.status == 0 && $0.stdout.contains(#""echo""#) }, "\(parallel.map(\.stderr))")

        // `logout --resource` forgets it and signs out the sign-in made for it.
        let forgotten = try await run(cli, ["logout", "--resource", url] + store)
        #expect(forgotten.status == 0 && forgotten.stdout.contains("Forgot \(url)"), "\(forgotten.stderr)")
        #expect(try tokens.keys().allSatisfy { $0.clientID == ClientRegistration.storeClientID }, "signed out")
        #expect(try FileKnownResourceStore(directory: directory.path + "/store").knownResources().isEmpty)

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        let registrations = log.filter { $0.hasPrefix("register ") }
        #expect(registrations.count == 1, "\(log)")
        #expect(registrations.first?.contains("redirect_uris=http://127.0.0.1:") == true, "an exact port: \(log)")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "one sign-in: \(log)")
        #expect(log.first { $0.hasPrefix("authorize ") }?.contains("scope=mcp:tools resource=\(url)") == true, "\(log)")
        // Issue 60 A: no refresh for the resource's token after the sign-in, which was made for it
        // (its access token is the resource's); one for the 8 processes once it expired.
        #expect(log.filter { $0.hasPrefix("token refresh_token ") }.count == 1, "one refresh for 8 processes: \(log)")
        #expect(log.filter { $0 == "tool echo" }.count == 1, "\(log)")
    }

    /// A stateful server (the SDK's sessions): `api -i` prints the status line and headers before
    /// the body, so that a script reads `Mcp-Session-Id` from `initialize` and sends it back with
    /// `-H`; without it the server refuses the next request.
    @Test func aStatefulServersSessionIDIsPrintedWithIncludeAndEchoedWithAHeader() async throws {
        let (server, url) = try await start(["--stateful"])
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let initialize = Self.initialize
        let first = try await run(
            cli, ["api", url, "-i", "-X", "POST"] + accept + ["-d", initialize] + store,
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("HTTP 200 OK\r\n"), "\(first.stdout)")
        let (head, body) = try #require(
            first.stdout.range(of: "\r\n\r\n").map { (first.stdout[..<$0.lowerBound], first.stdout[$0.upperBound...]) })
        #expect(body.contains(#""serverInfo""#), "\(first.stdout)")
        let session = try #require(
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("mcp-session-id:") }?
                .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces),
            "\(head)")
        #expect(!head.lowercased().contains("authorization"), "\(head)")

        let initialized = #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        let sessionHeader = ["-H", "Mcp-Session-Id: \(session)", "-H", "Mcp-Protocol-Version: 2025-06-18"]
        let notified = try await run(
            cli, ["api", url, "-X", "POST"] + accept + sessionHeader + ["-d", initialized] + store)
        #expect(notified.status == 0, "\(notified.stderr)")
        let list = Self.call(2, "tools/list", "{}")
        let listed = try await run(cli, ["api", url, "-X", "POST"] + accept + sessionHeader + ["-d", list] + store)
        #expect(listed.status == 0 && listed.stdout.contains(#""echo""#), "\(listed.stderr)")
        let without = try await run(cli, ["api", url, "-X", "POST"] + accept + ["-d", list] + store)
        #expect(without.status == 1, "the server needs its session id: \(without.stdout)")
        server.stop()
        _ = await server.finish()
    }

    /// `token --resource URL` with nothing configured and nothing known: the URL's 401 names the
    /// server, the tool registers and signs in, and prints the resource's token; `api URL` in
    /// another process then needs no browser and no registration. A URL that answers without a
    /// 401 names no server, and says so.
    @Test func theTokenOfAURLAloneSignsInOnceAndOtherCommandsUseIt() async throws {
        let (server, url) = try await start()
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let token = try await run(
            cli, ["token", "--resource", url] + store, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(token.status == 0 && token.stdout.hasPrefix("mcp-at-"), "\(token.stderr)")
        let list = Self.call(1, "tools/list", "{}")
        let api = try await run(cli, ["api", url, "-X", "POST"] + accept + ["-d", list] + store)
        #expect(api.status == 0 && api.stdout.contains(#""echo""#), "\(api.stderr)")
        // The sign-in was made for the resource alone: its access token is the resource's, and no
        // refresh is asked for while it is valid (issue 60 A: many servers issue no refresh token).
        let refreshes = { (log: [Substring]) in log.filter { $0.hasPrefix("token refresh_token ") }.count }
        let again = try await run(cli, ["token", "--resource", url] + store)
        #expect(again.stdout == token.stdout, "the kept token: \(again.stderr)")
        #expect(refreshes(server.stderr.split(separator: "\n")) == 0, "no refresh while the token is valid")
        let open = url.replacingOccurrences(of: "/mcp", with: "/.well-known/oauth-protected-resource/mcp")
        let none = try await run(cli, ["token", "--resource", open] + store)
        #expect(none.status == 1 && none.stderr.contains("names no authorization server"), "\(none.stderr)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("register ") }.count == 1, "\(log)")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "\(log)")
    }

    /// A second MCP server (the SDK's resource-server mode, resource_servers.py) behind the first
    /// one's authorization server, which is the SDK's: its token endpoint reads `resource` on a
    /// refresh but does not pass it on, so every token had under the first server's sign-in is for
    /// the first server, and would work there. Review M1: without the person's word (no terminal,
    /// no `--share-sign-in`), the second gets nothing from the first sign-in, and the tool says how
    /// to agree. With it, the first sign-in is tried (no browser), its tokens refused twice, then
    /// the person signs in once for the second server, in an account of its own; both servers then
    /// work from their URL alone, with no browser.
    @Test func aServerWhoseAuthorizationServerIgnoresTheResourceOnRefreshGetsASignInOfItsOwn() async throws {
        let directory = try TemporaryDirectory()
        let secret = directory.path + "/introspection-secret"
        try Data("introspection-\(UUID().uuidString)".utf8).write(to: URL(fileURLWithPath: secret))
        let (server, first) = try await start(["--introspection-secret-file", secret])
        let issuer = String(first.dropLast("/mcp".count))
        let resources = try RunningCommand(
            CloudTools.python,
            [
                repositoryRoot.path + "/scripts/mcp-server/resource_servers.py", "--issuer", issuer,
                "--introspection", issuer + "/introspect", "--client", "introspector", "--secret-file", secret,
                "--count", "1", "--scope", "mcp:tools",
            ])
        let port = try await resources.line { $0.hasPrefix("ports: ") }.dropFirst("ports: ".count)
        let second = "http://127.0.0.1:\(port)/mcp"
        let store = ["--store", directory.path + "/store"]
        let list = Self.call(1, "tools/list", "{}")
        let browser = ["BROWSER": redirectFollowingBrowser]
        func call(_ url: String, _ extra: [String] = [], environment: [String: String] = [:]) async throws
            -> CommandResult
        {
            try await run(
                cli, ["api", url, "-X", "POST"] + accept + ["-d", list] + extra + store, environment: environment)
        }

        let one = try await call(first, environment: browser)
        #expect(one.status == 0 && one.stdout.contains(#""echo""#), "\(one.stderr)")
        let unasked = try await call(second, environment: browser)
        #expect(unasked.status == 1, "\(unasked.stderr)")
        #expect(unasked.stderr.contains("is not lent to another API without your yes"), "\(unasked.stderr)")
        #expect(unasked.stderr.contains("--share-sign-in \(second)"), "\(unasked.stderr)")
        let two = try await call(second, ["--share-sign-in", second], environment: browser)
        #expect(two.status == 0 && two.stdout.contains(#""echo""#), "\(two.stderr)")
        #expect(two.stderr.contains("the sign-in tried does not cover \(second)"), "\(two.stderr)")
        for url in [first, second, first] {
            let again = try await call(url)
            #expect(again.status == 0 && again.stdout.contains(#""echo""#), "\(url): \(again.stderr)")
        }
        let records = try FileKnownResourceStore(directory: directory.path + "/store").knownResources()
        #expect(Set(records.map(\.account)).count == 2, "two accounts: \(records)")

        resources.stop()
        let verified = await resources.finish().stderr.split(separator: "\n").filter { $0.hasPrefix("verify ") }
        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        let authorizations = log.filter { $0.hasPrefix("authorize ") }
        #expect(authorizations.count == 2, "one sign-in per server: \(log)")
        #expect(authorizations.last?.hasSuffix("resource=\(second)") == true, "\(log)")
        #expect(log.filter { $0.hasPrefix("register ") }.count == 1, "one client for both: \(log)")
        #expect(verified.contains { $0.hasSuffix("aud=\(first)") }, "the first sign-in's token was tried: \(verified)")
        #expect(verified.last?.hasSuffix("aud=\(second)") == true, "\(verified)")
    }

    /// Four processes at once, from nothing but the URL: one registration and one sign-in, under
    /// the store's lock; the processes that waited use it.
    @Test func processesAtOnceFromTheURLAloneShareOneSignIn() async throws {
        let (server, url) = try await start()
        let directory = try TemporaryDirectory()
        let list = Self.call(1, "tools/list", "{}")
        let cli = cli
        let arguments = ["api", url, "-X", "POST"] + accept + ["-d", list, "--store", directory.path + "/store"]
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<4 {
                group.addTask { try await run(cli, arguments, environment: ["BROWSER": redirectFollowingBrowser]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 && $0.stdout.contains(#""echo""#) }, "\(results.map(\.stderr))")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("register ") }.count == 1, "\(log)")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "one sign-in for four processes: \(log)")
    }

    /// The SDK's server answering with a server-sent event stream (its default): `api` prints each
    /// event as it arrives. The tool reports progress and then waits for a file the test creates
    /// only once the progress event is on the CLI's standard output; a CLI that printed the answer
    /// only at its end would never get there. Then a resource token the server refuses: its 401 is
    /// read whole, another token is had with the refresh token, and only the stream of the request
    /// sent again is printed.
    @Test func anEventStreamIsPrintedAsItArrives() async throws {
        let (server, url) = try await start(["--sse"])
        let directory = try TemporaryDirectory()
        let gate = directory.path + "/gate"
        let output = directory.path + "/answer"
        let call = Self.call(
            1, "tools/call", #"{"name":"wait_for","arguments":{"path":"\#(gate)"},"_meta":{"progressToken":7}}"#)
        try Data(call.utf8).write(to: URL(fileURLWithPath: directory.path + "/call.json"))
        let arguments =
            ["api", url, "-X", "POST"] + accept
            + ["-H", "Content-Type: application/json", "-d", "@" + directory.path + "/call.json"]
            + ["--store", directory.path + "/store"]
        // Standard output to a file the test reads while the command runs.
        let streaming = try RunningCommand(
            "/bin/sh", ["-c", #"exec "$0" "$@" > "$ANSWER""#, cli] + arguments,
            environment: ["BROWSER": redirectFollowingBrowser, "ANSWER": output])
        var printed = ""
        for _ in 0..<600 where !printed.contains("notifications/progress") {
            try await Task.sleep(for: .milliseconds(100))
            printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        #expect(printed.contains(#""method":"notifications/progress""#), "\(streaming.stderr)")
        #expect(!printed.contains("done waiting"), "\(printed)")
        FileManager.default.createFile(atPath: gate, contents: nil)
        let finished = await streaming.finish()
        #expect(finished.status == 0, "\(finished.stderr)")
        let answer = try String(contentsOfFile: output, encoding: .utf8)
        #expect(answer.hasPrefix("event: message\r\n"), "byte for byte, as the SDK writes it: \(answer)")
        #expect(answer.contains(#""result":"done waiting""#), "\(answer)")

        // The resource's token (the sign-in's own: it was made for the resource alone) unknown to
        // the server (revoked there, say), still valid by its expiry.
        let tokens = FileTokenStore(directory: directory.path + "/store")
        let key = try #require(try tokens.keys().first { $0.clientID != ClientRegistration.storeClientID })
        var held = try #require(try tokens.load(key))
        try #require(held.resourceTokens.isEmpty && held.resources == [url])
        held.accessToken = "mcp-at-unknown-to-the-server"
        try tokens.save(held, for: key)
        let again = try await run(cli, arguments)
        #expect(again.status == 0 && again.stdout.contains(#""result":"done waiting""#), "\(again.stderr)")
        #expect(again.stdout.contains("notifications/progress"), "\(again.stdout)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "\(log)")
        // None for the resource's first token (the sign-in's own), one for the token after the refusal.
        #expect(log.filter { $0.hasPrefix("token refresh_token") }.count == 1, "\(log)")
        #expect(again.stdout.components(separatedBy: "notifications/progress").count == 2, "\(again.stdout)")
    }

    /// A server whose every request needs two scopes, and a sign-in that asked for one (`--scope`):
    /// its 403 `insufficient_scope` names no scope (the SDK's way). Without a terminal the refusal
    /// is the answer; on a terminal the tool asks, and no leaves it at that; yes signs in once more
    /// for the scopes its metadata lists, with the registration made for all of them: the call goes
    /// through, and later calls need no browser.
    @Test func aNarrowerSignInStepsUpToTheScopesTheMetadataListsWhenThePersonSaysYes() async throws {
        let (server, url) = try await start(["--scopes", "mcp:tools mcp:admin"])
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let list = Self.call(1, "tools/list", "{}")
        let browser = ["BROWSER": redirectFollowingBrowser]
        let arguments = ["api", url, "-X", "POST"] + accept + ["-d", list] + store
        let narrow = try await run(cli, arguments + ["--scope", "mcp:tools"], environment: browser)
        #expect(narrow.status == 1 && narrow.stderr.contains("HTTP 403"), "\(narrow.stderr)")
        let pty = repositoryRoot.path + "/scripts/lib/pty_run.py"
        let no = try await run("/usr/bin/python3", [pty, "[y/N]", "n", cli] + arguments, environment: browser)
        #expect(no.status == 1 && no.stdout.contains("Sign in again in the browser? [y/N]"), "\(no.stdout)")
        #expect(no.stdout.contains("no new sign-in") && no.stdout.contains("--step-up"), "\(no.stdout)")
        let yes = try await run("/usr/bin/python3", [pty, "[y/N]", "y", cli] + arguments, environment: browser)
        #expect(yes.status == 0 && yes.stdout.contains(#""echo""#), "\(yes.stdout)")
        #expect(yes.stdout.contains("wants the scope mcp:admin"), "\(yes.stdout)")
        let later = try await run(cli, arguments)
        #expect(later.status == 0 && later.stdout.contains(#""echo""#), "\(later.stderr)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("register ") }.count == 1, "registered once, for both scopes: \(log)")
        let signIns = log.filter { $0.hasPrefix("authorize ") }
        #expect(signIns.count == 2, "the sign-in and one step-up (none after no): \(log)")
        #expect(signIns.last?.contains("scope=mcp:tools mcp:admin resource=\(url)") == true, "\(log)")
    }

    /// A server that keeps refusing (its authorization server grants less than asked, as RFC 6749
    /// §3.3 allows): `--step-up` signs in once more, without a question, and then stops with a clear
    /// error instead of asking again.
    @Test func aServerThatKeepsRefusingGetsOneStepUpThenAClearError() async throws {
        let (server, url) = try await start(["--scopes", "mcp:tools mcp:admin", "--grants", "mcp:tools"])
        let directory = try TemporaryDirectory()
        let list = Self.call(1, "tools/list", "{}")
        let refused = try await run(
            cli,
            ["api", url, "--step-up", "-X", "POST"] + accept + ["-d", list, "--store", directory.path + "/store"],
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("still refused after a sign-in for mcp:tools mcp:admin, not asking again"),
            "\(refused.stderr)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 2, "the sign-in and one step-up: \(log)")
    }

    /// A tool that needs a scope the server's metadata does not list (`--tool-scope`: its 403 names
    /// the scopes, as the MCP spec's scope challenge does). The client registered for the listed
    /// scope, and the SDK's authorization server refuses to authorize a client for a scope it was
    /// not registered with: the step-up registers the client again for the union first, signs in
    /// with it, and signs out the narrower client's sign-in (removed here; the server revokes only
    /// for clients with a secret). A later process calls the tool with no
    /// browser and no registration.
    @Test func aScopeTheRegistrationLacksRegistersTheClientAgainBeforeTheStepUp() async throws {
        let (server, url) = try await start(["--tool-scope", "admin_echo=mcp:admin"])
        let directory = try TemporaryDirectory()
        let store = ["--store", directory.path + "/store"]
        let admin = Self.call(1, "tools/call", #"{"name":"admin_echo","arguments":{"text":"wider"}}"#)
        let arguments = ["api", url, "-X", "POST"] + accept + ["-d", admin] + store
        let first = try await run(
            cli, arguments + ["--step-up"], environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0 && first.stdout.contains("wider"), "\(first.stderr)")
        #expect(first.stderr.contains("wants the scope mcp:admin"), "\(first.stderr)")
        let later = try await run(cli, arguments)
        #expect(later.status == 0 && later.stdout.contains("wider"), "\(later.stderr)")
        let tokens = FileTokenStore(directory: directory.path + "/store")
        let signIns = try tokens.keys().filter { $0.clientID != ClientRegistration.storeClientID }
        #expect(signIns.count == 1, "the narrower client's sign-in is gone: \(signIns)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        let registrations = log.filter { $0.hasPrefix("register ") }
        #expect(registrations.count == 2, "registered, then once more for the union: \(log)")
        #expect(registrations.last?.hasSuffix("scope=mcp:tools mcp:admin") == true, "\(log)")
        let authorizations = log.filter { $0.hasPrefix("authorize ") }
        #expect(authorizations.count == 2, "the sign-in and one step-up: \(log)")
        #expect(authorizations.last?.contains("scope=mcp:tools mcp:admin") == true, "\(log)")
        // The SDK's server revokes only for clients with a secret, and these are public: nothing is
        // sent to its revocation endpoint, and the narrower sign-in is removed here (above).
        #expect(log.filter { $0.hasPrefix("revoke ") }.isEmpty, "\(log)")
        #expect(log.filter { $0 == "refuse admin_echo" }.count == 1, "\(log)")
        #expect(log.filter { $0 == "tool admin_echo" }.count == 2, "\(log)")
    }

    /// The MCP Swift SDK's own client and HTTP transport (Samples/MCPClient), authorized by
    /// NativeAuthMCP, against the Python SDK's server: one sign-in, then other processes reuse it,
    /// and 4 processes after the token expired make one refresh.
    @Test func theSwiftSDKsClientIsAuthorizedByNativeAuthMCP() async throws {
        let (server, url) = try await start()
        let directory = try TemporaryDirectory()
        let sample = cliPath("mcp-client-sample")
        let store = ["--store", directory.path + "/store"]
        let first = try await run(
            sample, [url, "--call", "echo", "--text", "hello from Swift"] + store,
            environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout.contains("server: nativeauth-test") && first.stdout.contains("tool: echo"), "\(first.stdout)")
        #expect(first.stdout.contains("result: hello from Swift"), "\(first.stdout)")

        let tokens = FileTokenStore(directory: directory.path + "/store")
        try Self.expireEveryToken(in: tokens)
        let arguments = [url] + store
        let parallel = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for _ in 0..<4 { group.addTask { try await run(sample, arguments) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(parallel.allSatisfy { $0.status == 0 && $0.stdout.contains("tool: echo") }, "\(parallel.map(\.stderr))")
        let records = try FileKnownResourceStore(directory: directory.path + "/store").knownResources()
        #expect(records.map(\.resource.absoluteString) == [url], "\(records)")

        server.stop()
        let log = await server.finish().stderr.split(separator: "\n")
        #expect(log.filter { $0.hasPrefix("register ") }.count == 1, "\(log)")
        #expect(log.filter { $0.hasPrefix("authorize ") }.count == 1, "one sign-in: \(log)")
        #expect(log.first { $0.hasPrefix("authorize ") }?.contains("scope=mcp:tools resource=\(url)") == true, "\(log)")
        // No refresh after the sign-in (its token is the resource's, issue 60 A), one for the 4 processes.
        #expect(log.filter { $0.hasPrefix("token refresh_token ") }.count == 1, "\(log)")
        #expect(log.filter { $0 == "tool echo" }.count == 1, "\(log)")
    }
}

/// Two MCP servers built from the official MCP Python SDK in its resource-server mode
/// (scripts/mcp-server/resource_servers.py: each checks that a token was issued for it, asking the
/// server by RFC 7662 introspection) behind one real authorization server with RFC 8707 resource
/// indicators, django-oauth-toolkit, where the client is registered by its administrator.
///
/// django-oauth-toolkit binds a sign-in to the resources it was asked for, and refuses a refresh
/// for another (`invalid_target`): the second server's token needs a sign-in of its own, which
/// must leave the first one's as it was.
@Suite(.testLogging, .enabled(if: MCPSDK.available && TestServer.isRunning, "needs the MCP SDK and test-server"))
struct MCPResourceServersTests {
    let cli = cliPath("oidc-login")
    let accept = ["-H", "Accept: application/json, text/event-stream"]

    @Test func twoServersBehindOneAuthorizationServerEachGetTheirOwnTokenAndAreRemembered() async throws {
        let server = try TestServer.load()
        let directory = try TemporaryDirectory()
        let secret = directory.path + "/introspection-secret"
        try Data(server.serviceClientSecret.utf8).write(to: URL(fileURLWithPath: secret))
        let resources = try RunningCommand(
            CloudTools.python,
            [
                repositoryRoot.path + "/scripts/mcp-server/resource_servers.py", "--issuer",
                server.issuer.absoluteString,
                "--introspection", server.issuer.absoluteString + "/introspect/", "--client", server.serviceClientID,
                "--secret-file", secret,
            ])
        let ports = try await resources.line { $0.hasPrefix("ports: ") }.dropFirst("ports: ".count)
            .split(separator: " ")
        try #require(ports.count == 2)
        let (first, second) = ("http://127.0.0.1:\(ports[0])/mcp", "http://127.0.0.1:\(ports[1])/mcp")
        let store = ["--store", directory.path + "/store"]
        // The client its administrator registered, configured (as a profile or the environment would).
        let configured = [
            "NATIVEAUTH_ISSUER": server.issuer.absoluteString, "NATIVEAUTH_CLIENT_ID": server.publicClientID,
        ]
        let browser = ["BROWSER": TestServer.browserCommand()]
        let list = MCPServerTests.call(1, "tools/list", "{}")
        func call(_ url: String, _ extra: [String] = [], environment: [String: String] = [:]) async throws
            -> CommandResult
        {
            try await run(
                cli, ["api", url, "-X", "POST"] + accept + ["-d", list] + extra + store, environment: environment)
        }

        let one = try await call(first, ["--discover"], environment: configured.merging(browser) { $1 })
        #expect(one.status == 0 && one.stdout.contains(#""echo""#), "\(one.stderr)")
        let two = try await call(
            second, ["--discover", "--share-sign-in", second], environment: configured.merging(browser) { $1 })
        #expect(two.status == 0 && two.stdout.contains(#""echo""#), "\(two.stderr)")
        #expect(two.stderr.contains("invalid_target"), "the first sign-in was tried first: \(two.stderr)")

        // Later, with nothing configured and no browser: the URL alone, for each, and the first
        // server's sign-in was left as it was by the second's.
        for url in [first, second, first] {
            let again = try await call(url)
            #expect(again.status == 0 && again.stdout.contains(#""echo""#), "\(url): \(again.stderr)")
        }
        let records = try FileKnownResourceStore(directory: directory.path + "/store").knownResources()
        #expect(Set(records.map(\.resource.absoluteString)) == [first, second])
        #expect(records.allSatisfy { $0.clientID == server.publicClientID && $0.scopes == ["read"] })
        #expect(Set(records.map(\.account)).count == 2, "a sign-in each: \(records)")
        let status = try await run(cli, ["status"] + store)
        #expect(status.stdout.contains("No server configured."), "\(status.stdout)")
        #expect(status.stdout.contains("\(second): from \(server.issuer.absoluteString)"), "\(status.stdout)")

        let forgotten = try await run(cli, ["logout", "--resource", second] + store)
        #expect(forgotten.status == 0, "\(forgotten.stderr)")
        let stillFirst = try await call(first)
        #expect(stillFirst.status == 0 && stillFirst.stdout.contains(#""echo""#), "\(stillFirst.stderr)")

        resources.stop()
        let log = await resources.finish().stderr.split(separator: "\n")
        // Every token each server accepted was issued for it (RFC 8707 audience), and none for the other.
        let verified = log.filter { $0.hasPrefix("verify ") }
        #expect(
            !verified.isEmpty
                && verified.allSatisfy { $0.hasSuffix("aud=http://127.0.0.1:\($0.split(separator: " ")[1])/mcp") },
            "\(log)")
        #expect(log.filter { $0.hasPrefix("tool ") }.isEmpty, "tools/list calls no tool: \(log)")
    }
}
