import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Several accounts of one provider and client, in memory against the sandbox (alice and bob).
@Suite(.testLogging) struct AccountsTests {
    func accounts(
        _ sandbox: SandboxAuthorizationServer,
        store: any TokenStore = MemoryTokenStore(),
        active: any ActiveAccountStore = MemoryActiveAccountStore(),
        scopes: [String] = ["openid", "profile", "email"]
    ) throws -> Accounts {
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: scopes))
        return Accounts(Authenticator(provider: provider, store: store, transport: sandbox.transport), active: active)
    }

    func signIn(_ accounts: Accounts, _ sandbox: SandboxAuthorizationServer, as user: String, name: String? = nil)
        async throws -> Accounts.SignIn
    {
        sandbox.autoApprovedUser = user
        return try await accounts.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)), name: name)
    }

    @Test func twoSignInsAreTwoAccountsAndTheFirstStaysActive() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let accounts = try accounts(sandbox)
        let alice = try await signIn(accounts, sandbox, as: "alice")
        #expect(alice.account == "alice" && alice.isActive)
        let bob = try await signIn(accounts, sandbox, as: "bob")
        #expect(bob.account == "bob" && !bob.isActive, "the first account stays the active one")
        #expect(try await accounts.names() == ["alice", "bob"])
        #expect(try await accounts.active() == "alice")
        let list = try await accounts.list()
        #expect(list.map(\.name) == ["alice", "bob"])
        #expect(list.map(\.isActive) == [true, false])
        #expect(list.map(\.subject) == ["sandbox-user-alice", "sandbox-user-bob"])

        // Each account's authenticator sends its own token: the userinfo answers say who.
        #expect(try await accounts.authenticator(for: "alice").userInfo().subject == "sandbox-user-alice")
        #expect(try await accounts.authenticator(for: "bob").userInfo().subject == "sandbox-user-bob")

        try await accounts.switchActive(to: "bob")
        #expect(try await accounts.active() == "bob")
        let unknown = await #expect(throws: AuthError.self) { try await accounts.switchActive(to: "carol") }
        #expect(unknown?.code == .configurationInvalid && unknown?.field == "account")
        #expect(unknown?.hint?.contains("alice, bob") == true)
        await sandbox.stop()
    }

    @Test func signingInAgainReplacesThatAccountsTokensOnly() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let accounts = try accounts(sandbox)
        let first = try await signIn(accounts, sandbox, as: "alice")
        let bob = try await signIn(accounts, sandbox, as: "bob")
        let again = try await signIn(accounts, sandbox, as: "alice")
        #expect(again.account == "alice")
        #expect(again.tokens.accessToken != first.tokens.accessToken)
        #expect(try await accounts.names() == ["alice", "bob"])
        #expect(try await accounts.authenticator(for: "bob").currentTokens()?.accessToken == bob.tokens.accessToken)
        #expect(try await accounts.authenticator(for: "alice").currentTokens()?.accessToken == again.tokens.accessToken)
        await sandbox.stop()
    }

    @Test func anAccountIsNamedByTheAppOrAfterEmailOrSubject() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let named = try await signIn(try accounts(sandbox), sandbox, as: "alice", name: "work")
        #expect(named.account == "work")
        let email = try await signIn(try accounts(sandbox, scopes: ["openid", "email"]), sandbox, as: "bob")
        #expect(email.account == "bob@example.test", "without preferred_username, the email")
        let subject = try await signIn(try accounts(sandbox, scopes: ["openid"]), sandbox, as: "bob")
        #expect(subject.account == "sandbox-user-bob", "without either, the subject")
        let refused = await #expect(throws: AuthError.self) {
            try await signIn(try accounts(sandbox), sandbox, as: "alice", name: "bad\nname")
        }
        #expect(refused?.field == "account")
        // Format characters would make one name look like another in `status` (review I3).
        for hostile in ["admin\u{202E}eci", "ali\u{200B}ce", "\u{2066}bob\u{2069}", "a\u{2028}b"] {
            let error = #expect(throws: AuthError.self, "\(hostile.unicodeScalars.map(\.value))") {
                try Accounts.validate(name: hostile)
            }
            #expect(error?.message.contains("\u{202E}") == false && error?.hint?.contains("format") == true)
        }
        try Accounts.validate(name: "zoë@example.test")
        await sandbox.stop()
    }

    /// The account's name comes from the claims of an ID token that was verified, never from a
    /// token read again: an unverified ID token beside client credentials names nobody.
    @Test func anIDTokenBesideClientCredentialsNamesNoAccount() async throws {
        let issuer = try #require(URL(string: "https://issuer.test"))
        let unsigned =
            [#"{"alg":"none"}"#, #"{"iss":"https://issuer.test","sub":"mallory","preferred_username":"mallory"}"#]
            .map { Base64URL.encode(Data($0.utf8)) }.joined(separator: ".") + "."
        let transport = FakeTransport { request, _ in
            let json: String
            switch request.path {
            case "/.well-known/openid-configuration":
                json =
                    #"{"issuer":"https://issuer.test","authorization_endpoint":"https://issuer.test/authorize","token_endpoint":"https://issuer.test/token","jwks_uri":"https://issuer.test/jwks","response_types_supported":["code"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}"#
            case "/token":
                json = #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(unsigned)"}"#
            default:
                return (HTTPResponse(status: .notFound), Data())
            }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data(json.utf8))
        }
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: issuer, clientID: "service", clientSecret: "service-secret-0123456789", scopes: ["api"]))
        let accounts = Accounts(
            Authenticator(provider: provider, store: MemoryTokenStore(), transport: transport),
            active: MemoryActiveAccountStore())
        let signIn = try await accounts.login(.clientCredentials)
        #expect(signIn.account == "service", "the client id, not the unverified token's preferred_username")
    }

    /// A sign-in from before accounts (the account "default") is replaced by the same person's
    /// named account, which takes its place as the active one; another person's leaves it.
    @Test func theSamePersonsSignInFromBeforeAccountsIsReplaced() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let accounts = try accounts(sandbox)
        try await accounts.authenticator.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await accounts.names() == ["default"])
        _ = try await signIn(accounts, sandbox, as: "bob")
        #expect(try await accounts.names() == ["bob", "default"], "another person leaves it")
        #expect(try await accounts.active() == "default")
        let alice = try await signIn(accounts, sandbox, as: "alice")
        #expect(try await accounts.names() == ["alice", "bob"])
        #expect(alice.isActive && alice.account == "alice", "the named account took the old one's place")
        await sandbox.stop()
    }

    @Test func loggingTheActiveAccountOutLeavesTheOtherAndNoChoice() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let accounts = try accounts(sandbox)
        _ = try await signIn(accounts, sandbox, as: "alice")
        _ = try await signIn(accounts, sandbox, as: "bob")
        try await accounts.logout("alice")
        #expect(try await accounts.names() == ["bob"])
        #expect(try await accounts.active() == "bob", "the only account left is the active one")
        #expect(try await accounts.authenticator(for: "bob").userInfo().subject == "sandbox-user-bob")
        await #expect(throws: AuthError.self) { try await accounts.logout("alice") }
        await sandbox.stop()
    }

    /// The active account is a file of its own beside the token files: another process (another
    /// `Accounts`) sees a switch at once, and the token store lists only token sets.
    @Test func theActiveAccountFileIsSharedAndApartFromTheTokens() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let directory = try TemporaryDirectory()
        let path = directory.path + "/store"
        let first = try accounts(
            sandbox, store: FileTokenStore(directory: path), active: FileActiveAccountStore(directory: path))
        _ = try await signIn(first, sandbox, as: "alice")
        _ = try await signIn(first, sandbox, as: "bob")
        let second = try accounts(
            sandbox, store: FileTokenStore(directory: path), active: FileActiveAccountStore(directory: path))
        #expect(try await second.active() == "alice")
        try await first.switchActive(to: "bob")
        #expect(try await second.active() == "bob")
        #expect(try FileTokenStore(directory: path).keys().count == 2)
        let pointer = FileActiveAccountStore(directory: path).path(
            issuer: sandbox.issuer.absoluteString, clientID: SandboxAuthorizationServer.Client.defaultID)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: pointer))
        let damaged = await #expect(throws: AuthError.self) { try await second.active() }
        #expect(damaged?.message.contains("damaged") == true)
        await sandbox.stop()
    }

    /// Refreshing one account never touches another's tokens, even side by side.
    @Test func concurrentRefreshesOfTwoAccountsRefreshEachOnce() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let accounts = try accounts(sandbox)
        _ = try await signIn(accounts, sandbox, as: "alice")
        _ = try await signIn(accounts, sandbox, as: "bob")
        let alice = accounts.authenticator(for: "alice")
        let bob = accounts.authenticator(for: "bob")
        try await alice.expireAccessToken()
        try await bob.expireAccessToken()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { _ = try await alice.accessToken() }
                group.addTask { _ = try await bob.accessToken() }
            }
            try await group.waitForAll()
        }
        #expect(sandbox.refreshCount(subject: "sandbox-user-alice") == 1)
        #expect(sandbox.refreshCount(subject: "sandbox-user-bob") == 1)
        #expect(try await alice.userInfo().subject == "sandbox-user-alice")
        #expect(try await bob.userInfo().subject == "sandbox-user-bob")
        await sandbox.stop()
    }
}

/// `refresh_token_expires_in` (GitHub) and `refresh_expires_in` (Keycloak) become the refresh
/// token's expiry, kept across refreshes that return no new refresh token.
@Suite(.testLogging) struct RefreshTokenExpiryTests {
    let received = Date(timeIntervalSince1970: 1_800_000_000)

    func decode(_ text: String, previous: TokenSet? = nil) throws -> TokenSet {
        let object = try #require(try JSONValue.parse(Data(text.utf8)).objectValue)
        return try TokenResponseDecoder.decode(
            object, context: .init(requestedScopes: [], receivedAt: received, previous: previous))
    }

    @Test func eitherNameSetsTheExpiryAndZeroMeansNone() throws {
        let github = try decode(#"{"access_token":"a","refresh_token":"r","refresh_token_expires_in":15811200}"#)
        #expect(github.refreshExpiresAt == received.addingTimeInterval(15_811_200))
        let keycloak = try decode(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":"1800"}"#)
        #expect(keycloak.refreshExpiresAt == received.addingTimeInterval(1800))
        let offline = try decode(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":0}"#)
        #expect(offline.refreshExpiresAt == nil)
    }

    @Test func aRefreshWithoutANewRefreshTokenKeepsItsExpiry() throws {
        let first = try decode(#"{"access_token":"a","refresh_token":"r","refresh_token_expires_in":600}"#)
        let kept = try decode(#"{"access_token":"b"}"#, previous: first)
        #expect(kept.refreshToken == "r" && kept.refreshExpiresAt == first.refreshExpiresAt)
        let rotated = try decode(#"{"access_token":"c","refresh_token":"r2"}"#, previous: first)
        #expect(rotated.refreshExpiresAt == nil, "a new refresh token without an expiry has none known")
    }

    @Test func theExpiryIsStoredAndLoadsBack() throws {
        let tokens = try decode(#"{"access_token":"a","refresh_token":"r","refresh_token_expires_in":600}"#)
        let object = try #require(tokens.storageJSON.objectValue)
        #expect(object["refresh_expires_at_ms"] != nil)
        #expect(try TokenSet(storageJSON: object) == tokens)
        #expect(!"\(tokens)".contains("\"r\""))
    }

    @Test func theSandboxSaysHowLongItsRefreshTokensLive() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(autoApprove: true, refreshTokenLifetime: .seconds(7200)), mode: .inMemory)
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID))
        let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: sandbox.transport)
        let tokens = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let lifetime = try #require(tokens.refreshExpiresAt).timeIntervalSince(tokens.issuedAt)
        #expect(abs(lifetime - 7200) < 2)
        await sandbox.stop()
    }
}
