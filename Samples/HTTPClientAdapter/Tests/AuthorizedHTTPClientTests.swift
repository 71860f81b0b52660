import AsyncHTTPClient
import Foundation
import HTTPClientAdapter
import HTTPTypes
import NIOHTTP1
import NativeAuth
import NativeAuthTesting
import Testing

/// The adapter against NativeAuthTesting's sandbox, live on 127.0.0.1: what the public sender does
/// for a stack it does not know.
@Suite struct AuthorizedHTTPClientTests {
    func signedIn(_ change: (inout SandboxAuthorizationServer.Configuration) -> Void = { _ in }) async throws
        -> (SandboxAuthorizationServer, Authenticator)
    {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        change(&configuration)
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let authenticator = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "profile"])),
            store: MemoryTokenStore(), transport: sandbox.transport)
        try await authenticator.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        return (sandbox, authenticator)
    }

    @Test func callersAfterExpiryShareOneRefreshAndARefusedTokenIsReplacedOnce() async throws {
        let (sandbox, authenticator) = try await signedIn()
        let client = AuthorizedHTTPClient(authenticator: authenticator)
        let resource = sandbox.url(.resource)
        #expect(try await client.execute(HTTPRequest(method: .get, url: resource)).status.code == 200)

        try await authenticator.expireAccessToken()
        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for _ in 0..<8 {
                group.addTask { try await client.execute(HTTPRequest(method: .get, url: resource)).status.code }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(sandbox.grantCount(.refreshToken) == 1, "one refresh for eight callers")

        // The resource refuses the token held: one refresh, the request again.
        try await authenticator.refuseAccessToken()
        #expect(try await client.execute(HTTPRequest(method: .get, url: resource)).status.code == 200)
        #expect(sandbox.grantCount(.refreshToken) == 2)
        await sandbox.stop()
    }

    @Test func aDPoPBoundTokenGoesWithAProofOfEachRequestAndTheServersNonce() async throws {
        let (sandbox, authenticator) = try await signedIn {
            $0.dpopSigningAlgorithms = ["ES256"]
            $0.requiresDPoP = true
            $0.requiresDPoPNonce = true
        }
        let client = AuthorizedHTTPClient(authenticator: authenticator)
        let resource = sandbox.url(.resource)
        let proofs = sandbox.dpopProofs.count
        #expect(try await client.execute(HTTPRequest(method: .get, url: resource)).status.code == 200)
        #expect(try await client.execute(HTTPRequest(method: .post, url: resource)).status.code == 200)
        #expect(sandbox.dpopProofs.count > proofs + 1, "a proof of each request")
        #expect(Set(sandbox.dpopProofs).count == sandbox.dpopProofs.count, "never the same proof twice")
        await sandbox.stop()
    }

    @Test func aTokenConfinedToItsAPIIsNotSentElsewhere() async throws {
        let (sandbox, authenticator) = try await signedIn()
        let api = sandbox.url(.resource)
        let client = AuthorizedHTTPClient(authenticator: authenticator, target: TokenTarget.signIn.confined(to: api))
        let requestsBefore = sandbox.requestCount(.userInfo)
        let elsewhere = sandbox.url(.userInfo)
        let error = await #expect(throws: AuthError.self) {
            try await client.execute(HTTPRequest(method: .get, url: elsewhere))
        }
        #expect(error?.code == .configurationInvalid && error?.message.contains("was not sent") == true)
        #expect(sandbox.requestCount(.userInfo) == requestsBefore, "nothing was sent")
        await sandbox.stop()
    }
}
