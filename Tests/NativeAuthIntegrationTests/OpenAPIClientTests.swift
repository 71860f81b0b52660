import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import NativeAuthOpenAPI
import NativeAuthTesting
import NotesAPIFixture
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import TestSupport
import Testing

/// The client swift-openapi-generator made of Samples/NotesClient/openapi.yaml, with
/// `AuthenticationMiddleware`, against the real authorization server (django-oauth-toolkit) and
/// the Notes API as its resource server (scripts/lib/notes_api.py), which takes a token only when
/// django-oauth-toolkit's introspection (RFC 7662) says it is active.
@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"))
struct OpenAPIClientTests {
    let server: TestServer

    init() throws { server = try TestServer.load() }

    /// The Notes API for the test server, and where it listens.
    func startNotesAPI() async throws -> (RunningCommand, URL) {
        let api = try RunningCommand(
            TestServer.root.appendingPathComponent(".venv/bin/python").path,
            [
                TestServer.root.appendingPathComponent("scripts/lib/notes_api.py").path,
                TestServer.stateDirectory.appendingPathComponent("env.json").path,
            ])
        let line = try await api.line { $0.hasPrefix("port: ") }
        let port = try #require(Int(line.dropFirst("port: ".count)))
        return (api, try #require(URL(string: "http://127.0.0.1:\(port)")))
    }

    /// The Notes API's request lines (`METHOD PATH STATUS token=T body=B`) so far.
    func requests(_ api: RunningCommand) -> [[String]] {
        api.stderr.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.filter { $0.count == 5 }
    }

    /// The Notes API's request lines once there are `count` (its stderr is read as it comes).
    func requests(_ api: RunningCommand, count: Int) async throws -> [[String]] {
        for _ in 0..<500 where requests(api).count < count { try await Task.sleep(for: .milliseconds(10)) }
        return requests(api)
    }

    func signedIn(scopes: [String]) async throws -> Authenticator {
        var configuration = server.configuration()
        configuration.scopes = scopes
        let authenticator = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: URLSessionTransport())
        try await authenticator.login(.browser(presenter))
        return authenticator
    }

    var presenter: LoopbackPresenter {
        LoopbackPresenter(
            configuration: .init(
                timeout: .seconds(60), opener: TestServer.scriptedBrowser(), output: ConsoleOutput { _ in }))
    }

    func client(_ api: URL, _ middleware: AuthenticationMiddleware) -> Client {
        Client(serverURL: api, transport: AsyncHTTPClientTransport(), middlewares: [middleware])
    }

    /// 100 operations at once after the access token expired: one refresh (django-oauth-toolkit
    /// rotates refresh tokens, so a second would have been refused), and every operation carries
    /// the one new token; a POST whose token the server refuses (not active, as django-oauth-toolkit
    /// introspects it) is refreshed and sent again, with the same body.
    @Test func aHundredOperationsShareOneRefreshAndARefusedPostIsSentAgainWithItsBody() async throws {
        let (notes, api) = try await startNotesAPI()
        defer { notes.stop() }
        let authenticator = try await signedIn(scopes: ["openid", "notes:write"])
        let client = client(api, AuthenticationMiddleware(authenticator: authenticator, api: api))
        let profile = try await client.getProfile().ok.body.json
        #expect(profile.sub == server.username)
        #expect(profile.scope.split(separator: " ").contains("notes:write"))

        let before = try #require(try await authenticator.currentTokens())
        try await authenticator.expireAccessToken()
        let seen = try await requests(notes, count: 1).count
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await client.getProfile().ok.body.json.sub } }
            for try await subject in group { #expect(subject == server.username) }
        }
        let storm = try await requests(notes, count: seen + 100).dropFirst(seen)
        #expect(storm.count == 100)
        #expect(storm.allSatisfy { $0[2] == "200" })
        #expect(Set(storm.map { $0[3] }).count == 1, "one new token for all")
        let after = try #require(try await authenticator.currentTokens())
        #expect(after.refreshToken != before.refreshToken)

        // The token is one the server refuses (revoking it at django-oauth-toolkit would revoke
        // its refresh token too): the POST gets a 401, one refresh, and goes again as it was.
        try await authenticator.refuseAccessToken()
        let sent = requests(notes).count
        let note = try await client.createNote(body: .json(.init(text: "written once, sent twice"))).created.body.json
        #expect(note.text == "written once, sent twice")
        #expect(note.owner == server.username)
        let post = try await requests(notes, count: sent + 2).dropFirst(sent).map { $0 }
        #expect(post.map { $0[2] } == ["401", "201"])
        #expect(post.count == 2 && post[0][4] == post[1][4] && post[0][4] != "body=-", "the same body, twice")
        #expect(post.count == 2 && post[0][3] != post[1][3], "a new token for the second")
        #expect(try await authenticator.currentTokens()?.refreshToken != after.refreshToken)
    }

    /// A 403 naming the scope the operation lacks (RFC 6750 `insufficient_scope`): without a
    /// presenter an error naming it, and the request is not sent again; with one, a sign-in for
    /// the wider scopes, then the operation once more.
    @Test func aMissingScopeStepsUpOnlyWithAPresenter() async throws {
        let (notes, api) = try await startNotesAPI()
        defer { notes.stop() }
        let authenticator = try await signedIn(scopes: ["openid"])
        let plain = client(api, AuthenticationMiddleware(authenticator: authenticator, api: api))
        let sent = try await requests(notes, count: 0).count
        let error = await #expect(throws: ClientError.self) {
            _ = try await plain.createNote(body: .json(.init(text: "not yet")))
        }
        let refusal = try #require(error?.underlyingError as? AuthError)
        #expect(refusal.code == .insufficientScope)
        #expect(refusal.missingScopes == ["notes:write"])
        #expect(try await requests(notes, count: sent + 1).dropFirst(sent).map { $0[2] } == ["403"])

        let steppingUp = client(
            api, AuthenticationMiddleware(authenticator: authenticator, api: api, stepUpWith: presenter))
        let note = try await steppingUp.createNote(body: .json(.init(text: "now"))).created.body.json
        #expect(note.text == "now")
        #expect(try await authenticator.currentTokens()?.scopes.contains("notes:write") == true)
    }

    /// The sample, as a person runs it: signs in through the browser once, then each run calls the
    /// API with the kept sign-in.
    @Test func theSampleSignsInOnceAndCallsTheAPI() async throws {
        let (notes, api) = try await startNotesAPI()
        defer { notes.stop() }
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", server.issuer.absoluteString, "--client-id", server.publicClientID, "--api",
            api.absoluteString, "--store", directory.path + "/store",
        ]
        let profile = try await run(
            cliPath("notes-client"), connection + ["profile"], environment: ["BROWSER": TestServer.browserCommand()])
        #expect(profile.status == 0, "\(profile.stderr)")
        #expect(profile.stdout.contains("sub: \(server.username)"))
        let note = try await run(cliPath("notes-client"), connection + ["note", "from the sample"])
        #expect(note.status == 0, "\(note.stderr)")
        #expect(note.stdout.contains("by \(server.username): from the sample"), "\(note.stdout)")
    }
}
