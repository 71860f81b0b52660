import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// DPoP (RFC 9449), pushed authorization requests (RFC 9126), HS256 ID tokens and signed userinfo
/// against idpyoidc's OpenID provider
/// (PyPI, IdentityPython), a server nobody here wrote, with its DPoP and PAR add-ons
/// (scripts/idpyoidc-server/server.py, started here; `scripts/test-server start` installs idpyoidc
/// into .venv).
@Suite(.testLogging, .enabled(if: IdpyOIDC.isInstalled || IdpyOIDC.isRequired, "needs idpyoidc in .venv"))
struct IdpyOIDCServerTests {
    @Test func aSignInIsPushedAndItsTokensAreBoundToTheKeyOfItsProof() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/idpyoidc"
        let server = try RunningCommand(IdpyOIDC.python, [IdpyOIDC.script, state])
        defer { server.stop() }
        let line = try await server.line { $0.hasPrefix("issuer: ") }
        let issuer = try #require(URL(string: String(line.dropFirst("issuer: ".count))))

        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: issuer, clientID: "nativeauth-cli", scopes: ["openid", "profile"])),
            store: store, transport: StandardTransport.platformDefault())
        let tokens = try await auth.login(
            .browser(
                LoopbackPresenter(
                    configuration: .init(timeout: .seconds(30), opener: RedirectFollowingBrowser()))))

        // idpyoidc announced DPoP; the sign-in made a key, and idpyoidc bound its token to it.
        #expect(tokens.tokenType == "DPoP")
        let key = try #require(tokens.dpopKey)
        let claims = try #require(JOSEParsing.parts(ofCompactJWS: tokens.accessToken)?.claims)
        #expect(try claims.object("cnf")?.string("jkt") == key.thumbprint, "the token's cnf.jkt is our key's")
        // Its ID token was validated against its JWKS; the account is its subject.
        #expect(tokens.subject?.isEmpty == false)

        // The browser carried the pushed request's reference; the token request a DPoP proof.
        let log = try String(contentsOfFile: state + "/requests.log", encoding: .utf8)
        let requests = log.split(separator: "\n").filter { !$0.hasPrefix("error") }
        #expect(requests.contains { $0.hasPrefix("POST /par ") }, "\(log)")
        let authorization = try #require(requests.first { $0.hasPrefix("GET /authorization ") })
        #expect(authorization.contains("request_uri") && !authorization.contains("code_challenge"), "\(authorization)")
        #expect(!authorization.contains("state") && !authorization.contains("nonce"), "\(authorization)")
        #expect(requests.contains("POST /token query= dpop=True"), "\(log)")
        #expect(!log.contains("error"), "idpyoidc refused nothing: \(log)")
    }

    /// A confidential client registered for HS256 ID tokens (keyed by its secret, OIDC Core §10.1)
    /// and RS256-signed userinfo (`application/jwt`, §5.3.2), as idpyoidc issues them: the sign-in
    /// verifies the HMAC, and userinfo is verified and read.
    @Test func hmacIDTokensAndSignedUserInfoFromAServerNobodyHereWrote() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/idpyoidc"
        // Without DPoP: idpyoidc 5.0.0 checks `ath` at userinfo as a hex digest (RFC 9449 §4.2: base64url).
        let server = try RunningCommand(IdpyOIDC.python, [IdpyOIDC.script, state, "--without-dpop"])
        defer { server.stop() }
        let line = try await server.line { $0.hasPrefix("issuer: ") }
        let issuer = try #require(URL(string: String(line.dropFirst("issuer: ".count))))

        let configuration = ProviderConfiguration(
            issuer: issuer, clientID: "nativeauth-confidential",
            clientSecret: "idpyoidc-confidential-client-secret-of-the-tests", scopes: ["openid", "profile"],
            clientAuthentication: .clientSecretBasic)
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: StandardTransport.platformDefault())
        let tokens = try await auth.login(
            .browser(
                LoopbackPresenter(
                    configuration: .init(timeout: .seconds(30), opener: RedirectFollowingBrowser()))))
        let idToken = try #require(tokens.idToken)
        #expect(try JOSEParsing.parts(ofCompactJWS: idToken)?.header.string("alg") == "HS256")
        #expect(tokens.subject?.isEmpty == false)

        let info = try await auth.userInfo()
        #expect(info.subject == tokens.subject)
        #expect(info.name == "Diana Prince")
        #expect(try info.claims.string("iss") == issuer.absoluteString, "the signed answer's own iss")
        let log = try String(contentsOfFile: state + "/requests.log", encoding: .utf8)
        #expect(log.contains("GET /userinfo "), "\(log)")
        #expect(!log.contains("error"), "idpyoidc refused nothing: \(log)")

    }
}

/// Where idpyoidc is: the project's virtualenv.
enum IdpyOIDC {
    static let python = repositoryRoot.path + "/.venv/bin/python"
    static let script = repositoryRoot.path + "/scripts/idpyoidc-server/server.py"

    /// Whether .venv holds idpyoidc.
    static var isInstalled: Bool {
        let lib = repositoryRoot.path + "/.venv/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return versions.contains { FileManager.default.fileExists(atPath: "\(lib)/\($0)/site-packages/idpyoidc") }
    }

    /// Whether the run requires the real servers (scripts/test.sh): then a missing idpyoidc fails.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["NATIVEAUTH_REQUIRE_TEST_SERVER"] == "1" }
}
