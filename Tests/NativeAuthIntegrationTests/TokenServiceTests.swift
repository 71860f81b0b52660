import Foundation
import HTTPTypes
import NativeAuth
import TestSupport
import Testing

/// The sample service (Samples/TokenService) as a service manager runs it: a ServiceGroup with
/// its transport, TokenRenewal, a worker calling the Notes API with client-credentials tokens from
/// django-oauth-toolkit, and an HTTP endpoint answering with the API's answer; SIGTERM stops it
/// gracefully.
@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"))
struct TokenServiceTests {
    @Test func theServiceCallsTheAPIAndStopsGracefullyOnSIGTERM() async throws {
        let server = try TestServer.load()
        let notesTests = try OpenAPIClientTests()
        let (notes, api) = try await notesTests.startNotesAPI()
        defer { notes.stop() }
        let profile = api.appendingPathComponent("profile")
        let service = try RunningCommand(
            cliPath("token-service"),
            [
                "--issuer", server.issuer.absoluteString, "--client-id", server.serviceClientID, "--api",
                profile.absoluteString, "--every", "100", "--listen", "0",
            ],
            environment: ["NATIVEAUTH_CLIENT_SECRET": server.serviceClientSecret])
        let calls = try await notesTests.requests(notes, count: 3)
        #expect(calls.count >= 3 && calls.allSatisfy { $0[2] == "200" }, "\(calls)")

        // The endpoint: the API's answer (the service client's profile), with the token kept inside.
        let listening = try await service.line { $0.hasPrefix("listening on ") }
        let endpoint = try #require(URL(string: String(listening.dropFirst("listening on ".count))))
        let client = URLSessionTransport()
        let (response, body) = try await client.send(HTTPRequest(method: .get, url: endpoint), body: nil)
        #expect(response.status.code == 200)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("\"scope\"") && text.contains("read"), "\(text)")
        let elsewhere = try await client.send(
            HTTPRequest(method: .get, url: endpoint.appendingPathComponent("token")), body: nil)
        #expect(elsewhere.0.status.code == 404)

        let start = ContinuousClock.now
        service.terminate()
        let result = await service.finish(closeInput: true)
        // Alone it stops in a few milliseconds; the bound is for a test machine running every suite
        // at once. What it proves: nothing waits out the renewal's next wait (minutes away).
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        // Within a second of the signal, as the service measures it (from the group's graceful
        // shutdown to the end of its run), whatever the load on the test machine.
        let stopped = result.stderr.split(separator: "\n").first { $0.hasPrefix("stopped in ") }
        let milliseconds = stopped.flatMap { Int($0.dropFirst("stopped in ".count).dropLast(" ms".count)) }
        #expect(milliseconds.map { $0 < 1000 } == true, "\(result.stderr)")
        #expect(result.stdout.contains("GET \(profile.absoluteString): 200"))
        #expect(!result.stderr.contains("not shut down"), "\(result.stderr)")
        #expect(!result.stderr.contains(server.serviceClientSecret))
        // Stopped means stopped: the endpoint no longer answers.
        await #expect(throws: (any Error).self) {
            _ = try await client.send(HTTPRequest(method: .get, url: endpoint), body: nil)
        }
    }
}
