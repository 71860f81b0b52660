import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// `ResourceClient`'s own decisions, in process against the sandbox (the official MCP SDK's server
/// runs in NativeAuthMCPTests): what it keeps, where a token goes, and what a refused server is sent.
@Suite(.testLogging) struct ResourceClientSandboxTests {
    /// The sandbox's transport, keeping each request it sends.
    struct Recording: HTTPTransport {
        let inner: any HTTPTransport
        let sent = NIOLockedValueBox([HTTPRequest]())

        func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
            sent.withLockedValue { $0.append(request) }
            return try await inner.send(request, body: body)
        }
    }

    func sandbox() async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp", "other"]
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func client(
        _ sandbox: SandboxAuthorizationServer, transport: any HTTPTransport, store: MemoryTokenStore,
        records: MemoryKnownResourceStore, configure: (inout ResourceClient.Options) -> Void = { _ in }
    ) -> ResourceClient {
        var options = ResourceClient.Options(
            clientName: "sandbox-resource-tests", transport: transport, store: store, knownResources: records)
        configure(&options)
        return ResourceClient(options: options) { signIn in
            RedirectFollowingPresenter(transport: sandbox.transport, port: signIn.redirectPort)
        }
    }

    @Test func theURLAloneSignsInOnceAndALaterClientUsesWhatWasKept() async throws {
        let sandbox = try await sandbox()
        let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
        let mcp = sandbox.resourceURL("mcp")
        let (first, body) = try await client(sandbox, transport: sandbox.transport, store: store, records: records)
            .send(HTTPRequest(method: .get, url: mcp))
        #expect(first.status.code == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(sandbox.requestCount(.registration) == 1 && sandbox.requestCount(.authorization) == 1)
        #expect(sandbox.issuedAudiences.last == [mcp.absoluteString])
        let kept = try #require(await records.knownResources().first)
        #expect(kept.resource == mcp && kept.issuer.absoluteString == sandbox.issuer.absoluteString)

        // Another client on the same stores (another process): under the resource, no 401 first.
        let recording = Recording(inner: sandbox.transport)
        let later = client(sandbox, transport: recording, store: store, records: records)
        let (second, _) = try await later.send(HTTPRequest(method: .get, url: mcp.appendingPathComponent("tools")))
        #expect(second.status.code == 200)
        #expect(sandbox.requestCount(.registration) == 1 && sandbox.requestCount(.authorization) == 1)
        #expect(sandbox.requestCount(.protectedResourceMetadata) == 1, "the metadata was read once")
    }

    @Test func callersAtOnceShareOneRegistrationAndOneSignIn() async throws {
        let sandbox = try await sandbox()
        let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
        let resources = client(sandbox, transport: sandbox.transport, store: store, records: records)
        let mcp = sandbox.resourceURL("mcp")
        let codes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask { try await resources.send(HTTPRequest(method: .get, url: mcp)).0.status.code }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes == Array(repeating: 200, count: 6))
        #expect(sandbox.requestCount(.registration) == 1, "\(sandbox.requestCounts)")
        #expect(sandbox.requestCount(.authorization) == 1, "one sign-in for six callers: \(sandbox.requestCounts)")
    }

    @Test func aURLTheResourceDoesNotCoverGetsNoneOfItsTokens() async throws {
        let sandbox = try await sandbox()
        let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
        let recording = Recording(inner: sandbox.transport)
        let resources = client(sandbox, transport: recording, store: store, records: records)
        let (first, _) = try await resources.send(HTTPRequest(method: .get, url: sandbox.resourceURL("mcp")))
        #expect(first.status.code == 200)
        let sentToMCP = try #require(try await records.knownResources().first?.account)
        #expect(!sentToMCP.isEmpty)

        // Another resource of the same server: asked first without a token, then with its own.
        let other = sandbox.resourceURL("other")
        let (second, _) = try await resources.send(HTTPRequest(method: .get, url: other))
        #expect(second.status.code == 200)
        let toOther = recording.sent.withLockedValue { $0 }.filter {
            $0.url?.path.hasSuffix("/resources/other") == true
        }
        #expect(toOther.first?.headerFields[.authorization] == nil, "the first request carries no token")
        #expect(sandbox.issuedAudiences.last == [other.absoluteString], "a token issued for it")
        // The sandbox binds a sign-in to the resources it was asked for (as django-oauth-toolkit
        // does): the first sign-in was tried, refused, and left as it was; the second is in an
        // account of the resource's own.
        #expect(sandbox.requestCount(.authorization) == 2)
        let accounts = try await records.knownResources().map(\.account)
        #expect(accounts.count == 2 && accounts.contains(sentToMCP) && Set(accounts).count == 2, "\(accounts)")
        #expect(accounts.contains { $0.hasSuffix("/resources/other") }, "\(accounts)")
    }

    /// Review M1: a resource not known yet gets no token from a sign-in made for another resource
    /// of its server unless ``ResourceClient/Options/sharesSignIn`` lends it: without the option
    /// (the default) it gets a sign-in of its own, with no token request under the other's
    /// sign-in; a refusal stops the request before anything is asked; a yes tries the lent sign-in.
    @Test func aSignInMadeForAnotherResourceIsLentOnlyWhenTheAppSaysSo() async throws {
        let sandbox = try await sandbox()
        let (mcp, other) = (sandbox.resourceURL("mcp"), sandbox.resourceURL("other"))
        func signedInForMCP(configure: (inout ResourceClient.Options) -> Void = { _ in }) async throws
            -> (ResourceClient, MemoryKnownResourceStore)
        {
            let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
            let resources = client(
                sandbox, transport: sandbox.transport, store: store, records: records, configure: configure)
            #expect(try await resources.send(HTTPRequest(method: .get, url: mcp)).0.status.code == 200)
            return (resources, records)
        }

        // By default: never lent. The other resource's token comes from a sign-in of its own.
        let (alone, aloneRecords) = try await signedInForMCP()
        sandbox.resetCounts()
        #expect(try await alone.send(HTTPRequest(method: .get, url: other)).0.status.code == 200)
        #expect(
            sandbox.requestCount(.authorization) == 1 && sandbox.requestCount(.token) == 1, "\(sandbox.requestCounts)")
        #expect(sandbox.issuedAudiences.last == [other.absoluteString])
        #expect(Set(try await aloneRecords.knownResources().map(\.account)).count == 2)

        // Refused by the app: nothing is asked of the server for the other resource.
        let (refusing, _) = try await signedInForMCP {
            $0.sharesSignIn = { shared in
                throw AuthError(.configurationInvalid, "not lent to \(shared.resource.absoluteString)")
            }
        }
        sandbox.resetCounts()
        let refused = await #expect(throws: AuthError.self) {
            try await refusing.send(HTTPRequest(method: .get, url: other))
        }
        #expect(refused?.message == "not lent to \(other.absoluteString)")
        #expect(
            sandbox.requestCount(.token) == 0 && sandbox.requestCount(.authorization) == 0, "\(sandbox.requestCounts)")

        // Lent: the app is asked once, with what the sign-in was made for, and the lent sign-in is
        // tried (the sandbox binds a sign-in to its resources, refuses it, and the resource gets its own).
        let asked = NIOLockedValueBox([SharedSignIn]())
        let (lending, _) = try await signedInForMCP {
            $0.sharesSignIn = { shared in
                asked.withLockedValue { $0.append(shared) }
                return true
            }
        }
        sandbox.resetCounts()
        #expect(try await lending.send(HTTPRequest(method: .get, url: other)).0.status.code == 200)
        let question = try #require(asked.withLockedValue { $0 }.first)
        #expect(asked.withLockedValue { $0.count } == 1)
        #expect(question.resource == other && question.madeFor == [mcp], "\(question)")
        #expect(sandbox.requestCount(.token) == 2, "the lent refresh, then the own sign-in's: \(sandbox.requestCounts)")
    }

    @Test func aServerTheAppRefusesIsSentNothing() async throws {
        let sandbox = try await sandbox()
        let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
        let refusing = client(sandbox, transport: sandbox.transport, store: store, records: records) {
            $0.approvesServer = { issuer, _ in
                throw AuthError(.configurationInvalid, "not this server: \(issuer.absoluteString)")
            }
        }
        let refused = await #expect(throws: AuthError.self) {
            try await refusing.send(HTTPRequest(method: .get, url: sandbox.resourceURL("mcp")))
        }
        #expect(refused?.message.hasPrefix("not this server") == true)
        #expect(sandbox.requestCount(.discovery) == 0 && sandbox.requestCount(.registration) == 0)
        #expect(sandbox.requestCount(.authorization) == 0 && sandbox.requestCount(.token) == 0)
        #expect(try await records.knownResources().isEmpty)
    }

    @Test func aScopeChallengeStepsUpOnlyWhenAgreedAndOnce() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        configuration.scopesSupported += ["tools:admin"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
        let (store, records) = (MemoryTokenStore(), MemoryKnownResourceStore())
        let mcp = sandbox.resourceURL("mcp")
        let asked = NIOLockedValueBox([[String]]())
        let resources = client(sandbox, transport: sandbox.transport, store: store, records: records) {
            // Fewer than the metadata lists, as a challenge's scope would be.
            $0.scopes = ["openid"]
            $0.stepsUp = { signIn in
                asked.withLockedValue { $0.append(signIn.scopes) }
                return asked.withLockedValue { $0.count } > 1
            }
        }
        _ = try await resources.send(HTTPRequest(method: .get, url: mcp))
        /// A new operation's 403 for want of `scope`, as the step-up plan reads it.
        @Sendable func steppingUp(_ scope: String) async throws -> ResourceToken? {
            var refusal = HTTPResponse(status: .forbidden)
            refusal.headerFields[.wwwAuthenticate] = #"Bearer error="insufficient_scope", scope=""# + scope + "\""
            var plan = StepUpPlan()
            return try await resources.steppingUp(for: mcp, answering: refusal, plan: &plan)
        }
        let authorizations = sandbox.requestCount(.authorization)
        // Not agreed: no sign-in, nothing more asked.
        #expect(try await steppingUp("tools:admin") == nil)
        #expect(sandbox.requestCount(.authorization) == authorizations)
        // Agreed: one sign-in for the union.
        let token = try #require(try await steppingUp("tools:admin"))
        #expect(token.scopes.contains("tools:admin"), "\(token.scopes)")
        #expect(sandbox.requestCount(.authorization) == authorizations + 1)
        #expect(sandbox.requestCount(.registration) == 2, "registered again: the first was for openid alone")
        #expect(sandbox.lastAuthorizationQuery.first(named: "scope")?.contains("tools:admin") == true)
        // Four callers refused at once for another scope: one step-up, which the others use.
        let before = sandbox.requestCount(.authorization)
        let tokens = try await withThrowingTaskGroup(of: ResourceToken?.self) { group in
            for _ in 0..<4 { group.addTask { try await steppingUp("email") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tokens.allSatisfy { $0?.scopes.contains("email") == true }, "\(tokens)")
        #expect(sandbox.requestCount(.authorization) == before + 1, "one step-up for four callers")
        // The sign-in holds it now: nothing is missing, nothing is asked.
        #expect(try await steppingUp("tools:admin") == nil)
        #expect(asked.withLockedValue { $0.count } == 3, "asked once for tools:admin after a no, once for email")
        #expect(try await records.knownResources().first?.scopes.contains("tools:admin") == true)
    }
}
