import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Signed client authentication (RFC 7523 §2.2: `client_secret_jwt`, `private_key_jwt`) and the
/// JWT bearer grant (§2.1) against Authlib's server, a second real server nobody here wrote,
/// which `scripts/test-server start` runs beside django-oauth-toolkit (scripts/authlib-server).
@Suite(.testLogging, .enabled(if: AuthlibServer.isRunning, "scripts/test-server start runs Authlib's server"))
struct AuthlibServerTests {
    let server: AuthlibServer

    init() throws { server = try AuthlibServer.load() }

    func authenticator(_ configuration: ProviderConfiguration, store: MemoryTokenStore) throws -> Authenticator {
        Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: StandardTransport.platformDefault())
    }

    @Test func clientSecretJWTGetsTokensAndRenewsThemWithAFreshAssertion() async throws {
        let store = MemoryTokenStore()
        let auth = try authenticator(
            ProviderConfiguration(
                issuer: server.issuer, clientID: server.secretJWTClientID, clientSecret: server.secretJWTClientSecret,
                scopes: ["api"], clientAuthentication: .clientSecretJWT),
            store: store)
        let tokens = try await auth.login(.clientCredentials)
        #expect(tokens.scopes == ["api"])
        try await auth.expireAccessToken()
        // Authlib refuses a jti it has seen: the renewal signs a new assertion.
        #expect(try await auth.accessToken() != tokens.accessToken)
    }

    @Test func privateKeyJWTGetsTokensAndAnotherKeyIsRefused() async throws {
        let store = MemoryTokenStore()
        var configuration = ProviderConfiguration(
            issuer: server.issuer, clientID: server.privateKeyJWTClientID, scopes: ["read"])
        configuration.clientAssertionKey = try ClientAssertionKey.contentsOf(server.privateKeyJWTKey)
        let tokens = try await authenticator(configuration, store: store).login(.clientCredentials)
        #expect(!tokens.accessToken.isEmpty)
        #expect(tokens.renewableGrant == .clientCredentials)

        let other = try ClientAssertionKey(try SandboxAuthorizationServer.ClientKeyPair(.es256).privateKeyPEM)
        configuration.clientAssertionKey = other
        let refusedStore = MemoryTokenStore()
        let error = try await #require(throws: AuthError.self) {
            try await authenticator(configuration, store: refusedStore).login(.clientCredentials)
        }
        #expect(error.oauthError == "invalid_client", "\(error)")
        #expect(await refusedStore.keys().isEmpty)
    }

    @Test func aJWTBearerGrantFromATrustedIssuer() async throws {
        // Authlib trusts this issuer's key; the issuer signs the grant for a subject.
        let trusted = try SandboxAuthorizationServer.FederatedIssuer(
            issuer: server.assertionIssuer,
            privateKeyPEM: try String(contentsOfFile: server.assertionIssuerKey, encoding: .utf8))
        let assertion = try trusted.token(subject: "report-runner", audience: server.tokenEndpoint, lifetime: 300)
        var configuration = ProviderConfiguration(
            issuer: server.issuer, clientID: server.assertionIssuer, scopes: ["read"])
        configuration.workload = .jwtBearer(.value(assertion))
        let store = MemoryTokenStore()
        let tokens = try await authenticator(configuration, store: store).login(.workload)
        #expect(tokens.renewableGrant == .jwtBearer)
        #expect(!tokens.accessToken.isEmpty)
    }

    /// An authenticator of Authlib's server without a client id yet.
    func unregistered(store: any TokenStore, clock: AuthClock = .system) throws -> Authenticator {
        var configuration = ProviderConfiguration(issuer: server.issuer, clientID: "", scopes: ["api"])
        configuration.registersClient = true
        return Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: StandardTransport.platformDefault(), clock: clock)
    }

    func service(_ name: String) -> ClientMetadata {
        ClientMetadata(
            clientName: name, redirectURIs: [], grantTypes: ["client_credentials"],
            tokenEndpointAuthMethod: "client_secret_basic", scope: "api")
    }

    @Test func dynamicRegistrationThenClientCredentialsAsTheRegisteredClient() async throws {
        let store = MemoryTokenStore()
        let name = "registered-" + UUID().uuidString
        let refused = try await #require(throws: AuthError.self) {
            try await unregistered(store: store).registeringClient(service(name))
        }
        #expect(refused.code == .registrationFailed, "no initial access token: \(refused)")
        #expect(await store.keys().isEmpty)

        // Authlib validates the metadata against its own: a grant it does not serve is refused.
        var unsupported = service(name)
        unsupported.grantTypes = ["implicit"]
        let invalid = try await #require(throws: AuthError.self) {
            try await unregistered(store: store).registeringClient(
                unsupported, initialAccessToken: server.registrationToken)
        }
        #expect(invalid.code == .registrationFailed && invalid.oauthError == "invalid_client_metadata", "\(invalid)")
        #expect(await store.keys().isEmpty)

        let auth = try await unregistered(store: store).registeringClient(
            service(name), initialAccessToken: server.registrationToken)
        #expect(auth.provider.configuration.clientSecret != nil)
        let tokens = try await auth.login(.clientCredentials)
        #expect(tokens.scopes == ["api"])
        let again = try await unregistered(store: store).registeringClient(
            service(name), initialAccessToken: server.registrationToken)
        #expect(again.provider.configuration.clientID == auth.provider.configuration.clientID)
        #expect(try await server.registrations(named: name) == 1)
    }

    @Test func anExpiringRegistrationIsRegisteredAgainAtAuthlib() async throws {
        let store = MemoryTokenStore()
        let time = TestClock()
        let first = try await unregistered(store: store, clock: time.clock).registeringClient(
            service("short-lived"), initialAccessToken: server.registrationToken)
        let kept = try #require(await first.storedRegistration(of: service("short-lived")))
        let expiry = try #require(kept.clientSecretExpiresAt, "Authlib said when the secret expires")
        #expect(abs(expiry.timeIntervalSinceNow - 600) < 60)
        time.advance(by: .seconds(600))
        let renewed = try await unregistered(store: store, clock: time.clock).registeringClient(
            service("short-lived"), initialAccessToken: server.registrationToken)
        #expect(renewed.provider.configuration.clientID != first.provider.configuration.clientID)
        #expect(!(try await renewed.login(.clientCredentials)).accessToken.isEmpty)
    }
}

/// Authlib's server as `scripts/test-server start` describes it in `.test-server/authlib.json`.
struct AuthlibServer: Sendable {
    let issuer: URL
    let tokenEndpoint: String
    let secretJWTClientID: String
    let secretJWTClientSecret: String
    let privateKeyJWTClientID: String
    let privateKeyJWTKey: String
    let assertionIssuer: String
    let assertionIssuerKey: String
    let registrationToken: String

    static var file: URL { TestServer.stateDirectory.appendingPathComponent("authlib.json") }

    static var isRunning: Bool {
        FileManager.default.fileExists(atPath: file.path) || TestServer.isRequired
    }

    static func load() throws -> AuthlibServer {
        let object = try #require(try JSONValue.parse(try Data(contentsOf: file)).objectValue)
        return AuthlibServer(
            issuer: try #require(URL(string: try object.requiredString("issuer"))),
            tokenEndpoint: try object.requiredString("token_endpoint"),
            secretJWTClientID: try object.requiredString("secret_jwt_client_id"),
            secretJWTClientSecret: try object.requiredString("secret_jwt_client_secret"),
            privateKeyJWTClientID: try object.requiredString("private_key_jwt_client_id"),
            privateKeyJWTKey: try object.requiredString("private_key_jwt_key"),
            assertionIssuer: try object.requiredString("assertion_issuer"),
            assertionIssuerKey: try object.requiredString("assertion_issuer_key"),
            registrationToken: try object.requiredString("registration_token"))
    }

    /// How many clients named `name` the server registered so far.
    func registrations(named name: String) async throws -> Int {
        let (_, body) = try await StandardTransport.platformDefault().send(
            HTTPRequest(method: .get, url: issuer.appendingPathComponent("registrations")), body: nil)
        let names = try #require(try JSONValue.parse(body).objectValue?.stringList("client_names"))
        return names.filter { $0 == name }.count
    }
}
