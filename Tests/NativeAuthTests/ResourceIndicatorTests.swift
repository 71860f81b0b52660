import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Resource indicators (RFC 8707): `resource` on the sign-in and every token request, and access
/// tokens per resource and scope set under one refresh token, against the in-process sandbox,
/// whose protected resources take only tokens issued for them.
@Suite(.testLogging) struct ResourceIndicatorTests {
    static let resources = ["mail", "calendar", "files", "search"]

    func sandbox(rotate: Bool = true, clock: AuthClock = .system) async throws -> SandboxAuthorizationServer {
        var configuration = SandboxAuthorizationServer.Configuration(
            autoApprove: true, rotateRefreshTokens: rotate, clock: clock)
        configuration.protectedResources = Self.resources
        return try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
    }

    func signedIn(
        _ sandbox: SandboxAuthorizationServer,
        store: any TokenStore = MemoryTokenStore(),
        resources: [URL] = [],
        clock: AuthClock = .system
    ) async throws -> Authenticator {
        var configuration = ProviderConfiguration(
            issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
            scopes: ["openid", "profile", "api"])
        configuration.resources = resources
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: sandbox.transport, clock: clock)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        return auth
    }

    func get(_ url: URL, token: String, _ sandbox: SandboxAuthorizationServer) async throws -> Int {
        var request = HTTPRequest(method: .get, url: url)
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await sandbox.transport.send(request, body: nil).0.status.code
    }

    @Test func aSignInForAResourceSendsItEverywhereAndItsTokensAreForIt() async throws {
        let sandbox = try await sandbox()
        let mail = sandbox.resourceURL("mail")
        let auth = try await signedIn(sandbox, resources: [mail])
        #expect(sandbox.issuedAudiences == [[mail.absoluteString]], "the code exchange asked for it")
        let token = try await auth.accessToken()
        #expect(try await get(mail, token: token, sandbox) == 200)
        #expect(try await get(sandbox.resourceURL("files"), token: token, sandbox) == 401)
        try await auth.refresh()
        #expect(sandbox.issuedAudiences.last == [mail.absoluteString], "the refresh asked for it too")
        await sandbox.stop()
    }

    @Test func eachResourceGetsItsOwnTokenUnderTheOneRefreshToken() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let auth = try await signedIn(sandbox, store: store)
        let main = try await auth.accessToken()
        let mail = sandbox.resourceURL("mail")
        let files = sandbox.resourceURL("files")
        let mailToken = try await auth.accessToken(for: mail)
        let filesToken = try await auth.accessToken(for: files, scopes: ["api"])
        #expect(Set([main, mailToken, filesToken]).count == 3)
        #expect(try await get(mail, token: mailToken, sandbox) == 200)
        #expect(try await get(mail, token: main, sandbox) == 401, "the sign-in's own token is not for mail")
        #expect(try await get(mail, token: filesToken, sandbox) == 401)
        #expect(try await get(files, token: filesToken, sandbox) == 200)
        #expect(sandbox.grantCount(.refreshToken) == 2)

        // Kept, not asked again; and the rotated refresh token serves the next refresh.
        #expect(try await auth.accessToken(for: mail) == mailToken)
        #expect(sandbox.grantCount(.refreshToken) == 2)
        let stored = try #require(await store.load(auth.key))
        #expect(stored.resourceTokens.count == 2)
        #expect(stored.accessToken == main, "the sign-in's own access token is untouched")
        let refreshed = try await auth.refresh()
        #expect(refreshed.resourceTokens.count == 2, "a refresh keeps the resource tokens")
        #expect(
            refreshed.scopes.sorted() == ["api", "openid", "profile"], "a narrowed refresh did not narrow the grant")
        #expect(sandbox.errorCount("invalid_grant") == 0)
        await sandbox.stop()
    }

    @Test func aThousandCallersAcrossFourResourcesCauseFourTokenRequests() async throws {
        let time = TestClock()
        let sandbox = try await sandbox(clock: time.clock)
        let auth = try await signedIn(sandbox, clock: time.clock)
        let urls = Self.resources.map { sandbox.resourceURL($0) }
        for url in urls { _ = try await auth.accessToken(for: url) }
        #expect(sandbox.grantCount(.refreshToken) == 4)
        time.advance(by: .seconds(7200))
        let tokens = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<1000 {
                group.addTask { (index % 4, try await auth.accessToken(for: urls[index % 4])) }
            }
            return try await group.reduce(into: [Int: Set<String>]()) { $0[$1.0, default: []].insert($1.1) }
        }
        #expect(sandbox.grantCount(.refreshToken) == 8, "one request per resource after expiry")
        #expect(tokens.values.allSatisfy { $0.count == 1 }, "every caller of a resource got the same token")
        #expect(Set(tokens.values.flatMap { $0 }).count == 4)
        await sandbox.stop()
    }

    @Test func processesSharingAStoreAskOnceForAResource() async throws {
        let sandbox = try await sandbox()
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.path + "/store")
        let first = try await signedIn(sandbox, store: store)
        let second = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                    scopes: ["openid", "profile", "api"])),
            store: FileTokenStore(directory: directory.path + "/store"), transport: sandbox.transport)
        let mail = sandbox.resourceURL("mail")
        let token = try await first.accessToken(for: mail)
        #expect(try await second.accessToken(for: mail) == token, "read from the store")
        // The first process's rotation reached the store: the second refreshes with the new token.
        try await second.refresh()
        #expect(sandbox.errorCount("invalid_grant") == 0)
        #expect(sandbox.grantCount(.refreshToken) == 2)
        await sandbox.stop()
    }

    /// A refresh whose save failed left the live refresh token in memory only: a resource token
    /// asked for next refreshes with that one, not with the spent one still in the store.
    @Test func aResourceTokenAfterAFailedSaveUsesTheRefreshTokenKeptInMemory() async throws {
        let sandbox = try await sandbox()
        let store = SandboxRefreshTests.FailingSaves()
        let auth = try await signedIn(sandbox, store: store)
        store.failing.update { $0 = true }
        await #expect(throws: AuthError.self) { try await auth.refresh() }
        store.failing.update { $0 = false }
        let mail = sandbox.resourceURL("mail")
        let token = try await auth.accessToken(for: mail)
        #expect(try await get(mail, token: token, sandbox) == 200)
        #expect(sandbox.errorCount("invalid_grant") == 0)
        #expect(try await store.load(auth.key)?.refreshToken != nil)
        await sandbox.stop()
    }

    @Test func aResourceTheServerRefusesIsAClearErrorAndNothingIsLost() async throws {
        let sandbox = try await sandbox()
        let store = MemoryTokenStore()
        let auth = try await signedIn(sandbox, store: store, resources: [sandbox.resourceURL("mail")])
        let before = try #require(await store.load(auth.key))
        // Not covered by the grant, and unknown to the server.
        for url in [sandbox.resourceURL("files"), URL(string: "https://elsewhere.example/api")!] {
            let error = try await #require(throws: AuthError.self) { try await auth.accessToken(for: url) }
            #expect(error.oauthError == "invalid_target", "\(error)")
            #expect(error.hint?.contains("`resource`") == true)
            #expect(!error.isLoginRequired)
        }
        #expect(await store.load(auth.key) == before, "the refresh token and everything else kept")
        _ = try await auth.refresh()
        await sandbox.stop()
    }

    @Test func aNonExpiringSignInWithoutARefreshTokenSaysToSignInForTheResource() async throws {
        let store = MemoryTokenStore()
        let issuer = try #require(URL(string: "https://github.example"))
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: ProviderConfiguration(issuer: issuer, clientID: "c")),
            store: store, transport: FakeTransport { _, _ in throw AuthError(.requestFailed, "no request expected") })
        await store.save(TokenSet(accessToken: "gho_x", issuedAt: Date()), for: auth.key)
        let error = try await #require(throws: AuthError.self) {
            try await auth.accessToken(for: URL(string: "https://api.example.com/")!)
        }
        #expect(error.code == .loginRequired)
        #expect(error.hint?.contains("`resource` https://api.example.com/") == true, "\(error)")
    }

    @Test func clientCredentialsAskForTheResourceAndRenewItOnce() async throws {
        let time = TestClock()
        var configuration = SandboxAuthorizationServer.Configuration(
            clients: [.init(id: "svc", secret: "svc-secret-0123456789abcdef")], clock: time.clock)
        configuration.protectedResources = Self.resources
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .inMemory)
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: "svc", clientSecret: "svc-secret-0123456789abcdef",
                    scopes: ["api"])),
            store: MemoryTokenStore(), transport: sandbox.transport, clock: time.clock)
        try await auth.login(.clientCredentials)
        let search = sandbox.resourceURL("search")
        let (response, body) = try await auth.send(HTTPRequest(method: .get, url: search), for: .resource(search))
        #expect(response.status.code == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(sandbox.issuedAudiences == [[], [search.absoluteString]])
        time.advance(by: .seconds(7200))
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await auth.accessToken(for: search) } }
            try await group.waitForAll()
        }
        #expect(sandbox.grantCount(.clientCredentials) == 3, "the sign-in, the first token, one renewal")
        await sandbox.stop()
    }

    @Test func aRefusedResourceTokenIsReplacedOnceBySend() async throws {
        let sandbox = try await sandbox()
        let auth = try await signedIn(sandbox)
        let mail = sandbox.resourceURL("mail")
        let stale = try await auth.accessToken(for: mail)
        sandbox.revokeAccessTokens()
        let (response, _) = try await auth.send(HTTPRequest(method: .get, url: mail), for: .resource(mail))
        #expect(response.status.code == 200)
        #expect(try await auth.accessToken(for: mail) != stale)
        #expect(sandbox.grantCount(.refreshToken) == 2)
        await sandbox.stop()
    }

    @Test func resourceIndicatorsAreAbsoluteURLsWithoutFragments() throws {
        for bad in ["api", "https://api.example.com/#x", "http://api.example.com/"] {
            let error = try #require(throws: AuthError.self) {
                try ProviderConfiguration(json: ["client_id": "c", "resource": .string(bad)])
            }
            #expect(error.field == "resource", "\(bad): \(error)")
        }
        let configuration = try ProviderConfiguration(
            json: ["client_id": "c", "resource": "https://a.example/ https://b.example/v1"])
        #expect(configuration.resources.map(\.absoluteString) == ["https://a.example/", "https://b.example/v1"])
    }

    @Test func resourceTokensSurviveTheStoredFormAndNeverPrint() throws {
        var tokens = TokenSet(accessToken: "main-secret", refreshToken: "r-secret", issuedAt: Date())
        var answer = TokenSet(
            accessToken: "resource-secret", scopes: ["api"], expiresAt: Date().addingTimeInterval(60), issuedAt: Date())
        answer.certificateThumbprint = "thumb"
        tokens.resourceTokens = [
            ResourceToken(resource: URL(string: "https://api.example/")!, requestedScopes: ["b", "a"], tokens: answer)
        ]
        let object = try #require(tokens.storageJSON.objectValue)
        let loaded = try TokenSet(storageJSON: object)
        #expect(loaded == tokens)
        #expect(loaded.resourceTokens.first?.requestedScopes == ["a", "b"])
        for text in ["\(tokens)", "\(tokens.resourceTokens)", String(reflecting: tokens.resourceTokens[0])] {
            #expect(!text.contains("secret"), "\(text)")
        }
        var dumped = ""
        dump(tokens, to: &dumped)
        #expect(!dumped.contains("resource-secret"))
    }
}
