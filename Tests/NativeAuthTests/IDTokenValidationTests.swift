import Crypto
import Foundation
import JWTKit
import LenientJSON
import NIOConcurrencyHelpers
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// A JSON value for hand-made claims.
enum Claim: Encodable, Sendable {
    case string(String)
    case strings([String])
    case int(Int)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        }
    }
}

/// Claims to sign with jwt-kit.
struct Claims: JWTPayload {
    var values: [String: Claim]

    init(_ values: [String: Claim]) { self.values = values }
    init(from decoder: any Decoder) throws { values = [:] }
    func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

private func base64URL(_ data: some Sequence<UInt8>) -> String {
    Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// An OpenID provider in memory that signs its own ID tokens: discovery, a JWKS that can rotate,
/// and a token endpoint whose ID token the test builds from the sign-in's nonce.
private final class SigningServer: Sendable {
    let server: TestHTTPServer
    let issuer: String
    private let state = NIOLockedValueBox(State())

    struct State {
        var jwks: [String] = []
        var jwksRequests = 0
        var makeIDToken: @Sendable (_ nonce: String?) async -> String = { _ in "" }
        var accessToken = "access-token-value"
    }

    private init(server: TestHTTPServer, issuer: String) {
        self.server = server
        self.issuer = issuer
    }

    static func start() async throws -> SigningServer {
        let box = IssuerBox()
        let holder = StateHolder()
        let server = try await TestHTTPServer.start(.inMemory) { request in
            let path = request.uri.split(separator: "?").first.map(String.init) ?? ""
            switch path {
            case "/o/.well-known/openid-configuration":
                return .json(
                    discoveryDocument(
                        issuer: box.value,
                        extra: #""id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"], "#
                            + #""authorization_response_iss_parameter_supported": true"#))
            case "/o/jwks":
                let keys = holder.server?.state.withLockedValue { state in
                    state.jwksRequests += 1
                    return state.jwks
                }
                return .json(#"{"keys": ["# + (keys ?? []).joined(separator: ", ") + "]}")
            case "/o/token/":
                guard let signing = holder.server else { return .text("no", status: 500) }
                let (make, access) = signing.state.withLockedValue { ($0.makeIDToken, $0.accessToken) }
                // The approving presenter passes the sign-in's nonce as the code; a refresh has none.
                let code = FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self)).first(named: "code")
                let idToken = await make(code.flatMap { $0.hasPrefix("nonce:") ? String($0.dropFirst(6)) : nil })
                return .json(
                    #"{"access_token": "\#(access)", "token_type": "Bearer", "expires_in": 3600, "#
                        + #""refresh_token": "refresh-\#(UUID().uuidString)", "id_token": "\#(idToken)"}"#)
            default:
                return .text("not found", status: 404)
            }
        }
        box.value = server.url("/o").absoluteString
        let signing = SigningServer(server: server, issuer: box.value)
        holder.server = signing
        return signing
    }

    var jwksRequests: Int { state.withLockedValue { $0.jwksRequests } }
    func setKeys(_ keys: [String]) { state.withLockedValue { $0.jwks = keys } }
    func issue(_ make: @escaping @Sendable (_ nonce: String?) async -> String) {
        state.withLockedValue { $0.makeIDToken = make }
    }

    /// Standard valid claims for `nonce`, with changes.
    func claims(nonce: String?, _ changes: [String: Claim?] = [:]) -> Claims {
        let now = Int(Date().timeIntervalSince1970)
        var values: [String: Claim] = [
            "iss": .string(issuer), "sub": .string("user-1"), "aud": .string("test-client"),
            "exp": .int(now + 300), "iat": .int(now), "email": .string("user@example.test"),
        ]
        if let nonce { values["nonce"] = .string(nonce) }
        for (key, value) in changes { values[key] = value }
        return Claims(values)
    }
}

private final class StateHolder: @unchecked Sendable {
    // Set once, before the first request can arrive.
    var server: SigningServer?
}

/// Approves at once, with a code that carries the request's nonce to the test server.
private func approving(_ server: SigningServer) -> AutoApprovingPresenter {
    AutoApprovingPresenter(issuer: server.issuer) { fields in "nonce:" + (fields.first(named: "nonce") ?? "") }
}

/// A provider with ID-token opt-outs.
private struct LaxProvider: AuthProvider {
    static let id = "lax"
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
    var idTokenValidation: IDTokenValidationOptions { IDTokenValidationOptions(insecureSkipSignatureCheck: true) }
}

/// A provider whose ID tokens may also name the audience `other-api`.
private struct TrustingProvider: AuthProvider {
    static let id = "trusting"
    let configuration: ProviderConfiguration
    init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
    var idTokenValidation: IDTokenValidationOptions { IDTokenValidationOptions(trustedAudiences: ["other-api"]) }
}

/// Signs with jwt-kit.
private func sign(
    _ claims: Claims, es256 key: ES256PrivateKey, kid: String?, crit: [String]? = nil
) async throws -> String {
    let keys = JWTKeyCollection()
    await keys.add(ecdsa: key, kid: kid.map { JWKIdentifier(string: $0) })
    var header = JWTHeader()
    header.alg = "ES256"
    if let kid { header.kid = kid }
    if let crit { header.crit = crit }
    return try await keys.sign(claims, header: header)
}

private func publicJWK(_ key: ES256PrivateKey, kid: String?) throws -> String {
    let parameters = try #require(key.publicKey.parameters)
    let kidMember = kid.map { #""kid": "\#($0)", "# } ?? ""
    return
        #"{"kty": "EC", \#(kidMember)"crv": "P-256", "use": "sig", "x": "\#(parameters.x)", "y": "\#(parameters.y)"}"#
}

/// A compact JWS with a hand-made header and signature.
private func handMade(header: String, claims: Claims, sign: (Data) -> [UInt8]) throws -> String {
    let payload = try JSONEncoder().encode(claims)
    let input = base64URL(Data(header.utf8)) + "." + base64URL(payload)
    return input + "." + base64URL(sign(Data(input.utf8)))
}

@Suite(.testLogging) struct IDTokenValidationTests {
    private func login(
        _ server: SigningServer,
        store: any TokenStore = MemoryTokenStore(),
        provider: (any AuthProvider)? = nil
    ) async throws -> (Authenticator, TokenSet) {
        let configuration = testConfiguration(issuer: try #require(URL(string: server.issuer)))
        let auth = Authenticator(
            provider: try provider ?? GenericOIDCProvider(configuration: configuration), store: store,
            transport: server.server.transport)
        return (auth, try await auth.login(.browser(approving(server))))
    }

    /// Signs in and expects `id_token_invalid` with `reason` in the message, and an empty store.
    private func expectRefusal(_ server: SigningServer, _ reason: String) async throws {
        let store = MemoryTokenStore()
        let configuration = testConfiguration(issuer: try #require(URL(string: server.issuer)))
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: store,
            transport: server.server.transport)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(approving(server)))
        }
        #expect(error?.code == .idTokenInvalid)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "no error")")
        #expect(await store.load(auth.key) == nil, "nothing is stored")
    }

    @Test func aValidES256TokenSignsIn() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        let (auth, tokens) = try await login(server)
        #expect(tokens.subject == "user-1")
        #expect(try await auth.currentTokens() != nil)
        await server.server.stop()
    }

    @Test func anEdDSATokenSignsIn() async throws {
        let server = try await SigningServer.start()
        let key = try EdDSA.PrivateKey(curve: .ed25519)
        let x = base64URL(key.publicKey.rawRepresentation)
        server.setKeys([#"{"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "\#(x)"}"#])
        server.issue { nonce in
            let keys = JWTKeyCollection()
            await keys.add(eddsa: key, kid: "ed")
            var header = JWTHeader()
            header.alg = "EdDSA"
            header.kid = "ed"
            return (try? await keys.sign(server.claims(nonce: nonce), header: header)) ?? ""
        }
        #expect(try await login(server).1.subject == "user-1")
        await server.server.stop()
    }

    @Test func keyRotationFetchesTheJWKSOnceMore() async throws {
        let server = try await SigningServer.start()
        let old = ES256PrivateKey()
        let new = ES256PrivateKey()
        server.setKeys([try publicJWK(old, kid: "old")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: old, kid: "old")) ?? "" }
        let (auth, _) = try await login(server)
        #expect(server.jwksRequests == 1)

        server.setKeys([try publicJWK(new, kid: "new")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: new, kid: "new")) ?? "" }
        _ = try await auth.login(.browser(approving(server)))
        #expect(server.jwksRequests == 2, "one refetch for the new kid")
        _ = try await auth.login(.browser(approving(server)))
        #expect(server.jwksRequests == 2, "the new key is cached")
        await server.server.stop()
    }

    @Test func concurrentSignInsShareOneJWKSRequest() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        let configuration = testConfiguration(issuer: try #require(URL(string: server.issuer)))
        let auth = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: server.server.transport)
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        let signedIn = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (try? await auth.login(.browser(approving(server)))) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(signedIn == 8)
        #expect(server.jwksRequests == 1, "eight validations shared one JWKS request")
        await server.server.stop()
    }

    @Test func aTokenSignedByAnUnknownKeyIsRefusedAfterOneRefetch() async throws {
        let server = try await SigningServer.start()
        server.setKeys([try publicJWK(ES256PrivateKey(), kid: "k1")])
        let stranger = ES256PrivateKey()
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: stranger, kid: "k9")) ?? "" }
        try await expectRefusal(server, #"no key with kid "k9" in the JWKS"#)
        #expect(server.jwksRequests == 2)
        await server.server.stop()
    }

    @Test func aForgedSignatureWithAKnownKidIsRefused() async throws {
        let server = try await SigningServer.start()
        server.setKeys([try publicJWK(ES256PrivateKey(), kid: "k1")])
        let forger = ES256PrivateKey()
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: forger, kid: "k1")) ?? "" }
        try await expectRefusal(server, #"the signature does not verify with the JWKS key kid "k1" (ES256)"#)
        await server.server.stop()
    }

    @Test func algNoneIsRefused() async throws {
        let server = try await SigningServer.start()
        server.setKeys([try publicJWK(ES256PrivateKey(), kid: "k1")])
        server.issue { nonce in
            (try? handMade(header: #"{"alg":"none","typ":"JWT"}"#, claims: server.claims(nonce: nonce)) { _ in [] })
                ?? ""
        }
        try await expectRefusal(server, #"alg is "none""#)
        await server.server.stop()
    }

    @Test func hs256SignedWithTheClientIDIsRefusedForAPublicClient() async throws {
        let server = try await SigningServer.start()
        server.setKeys([try publicJWK(ES256PrivateKey(), kid: "k1")])
        server.issue { nonce in
            (try? handMade(header: #"{"alg":"HS256","typ":"JWT"}"#, claims: server.claims(nonce: nonce)) { input in
                Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data("test-client".utf8))))
            }) ?? ""
        }
        try await expectRefusal(server, "alg is HS256, a shared-secret signature, which a public client")
        await server.server.stop()
    }

    @Test(
        arguments: [
            ("expired", ["exp": Claim.int(Int(Date().timeIntervalSince1970) - 3600)], "is in the past"),
            ("future", ["iat": .int(Int(Date().timeIntervalSince1970) + 600)], "is in the future"),
            (
                "wrong aud", ["aud": .string("someone-else")],
                #"aud [someone-else] does not contain the client id "test-client""#
            ),
            (
                "extra aud", ["aud": .strings(["test-client", "other-api"])],
                "that are not trusted (other-api)"
            ),
            ("wrong azp", ["azp": .string("other")], #"azp "other" is not the client id"#),
            ("wrong nonce", ["nonce": .string("not-the-nonce")], "nonce does not match"),
            ("wrong at_hash", ["at_hash": .string("AAAAAAAAAAAAAAAAAAAAAA")], "at_hash does not match"),
            ("wrong iss", ["iss": .string("https://evil.example")], #"iss "https://evil.example" is not the issuer"#),
            ("no sub", ["sub": .string("")], "sub is missing"),
        ] as [(String, [String: Claim], String)])
    func aBadClaimIsRefusedWithItsReason(name: String, changes: [String: Claim], reason: String) async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce, changes), es256: key, kid: "k1")) ?? "" }
        try await expectRefusal(server, reason)
        await server.server.stop()
    }

    /// An extra audience is refused even with `azp` naming the client (OIDC Core §3.1.3.7: reject
    /// audiences the client does not trust), and accepted once the provider lists it as trusted.
    @Test func extraAudiencesAreAcceptedOnlyWhenTrusted() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        let digest = Array(SHA256.hash(data: Data("access-token-value".utf8)))
        let atHash = base64URL(digest.prefix(16))
        server.issue { nonce in
            let claims = server.claims(
                nonce: nonce,
                [
                    "aud": .strings(["test-client", "other-api"]), "azp": .string("test-client"),
                    "at_hash": .string(atHash),
                ])
            return (try? await sign(claims, es256: key, kid: "k1")) ?? ""
        }
        try await expectRefusal(server, "that are not trusted (other-api)")
        let configuration = testConfiguration(issuer: try #require(URL(string: server.issuer)))
        let trusting = try TrustingProvider(configuration: configuration)
        #expect(try await login(server, provider: trusting).1.subject == "user-1")
        await server.server.stop()
    }

    @Test func withoutKidTheOnlyKeyOfTheTypeIsUsedAndSeveralAreAmbiguous() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: nil)])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: nil)) ?? "" }
        #expect(try await login(server).1.subject == "user-1")

        let second = try await SigningServer.start()
        second.setKeys([try publicJWK(key, kid: nil), try publicJWK(ES256PrivateKey(), kid: nil)])
        second.issue { nonce in (try? await sign(second.claims(nonce: nonce), es256: key, kid: nil)) ?? "" }
        try await expectRefusal(second, "it has no kid, and the JWKS has 2 keys for ES256")
        await server.server.stop()
        await second.server.stop()
    }

    @Test func theSignatureOptOutIsNamedAndOnlySkipsTheSignature() async throws {
        let server = try await SigningServer.start()
        server.setKeys([])
        let stranger = ES256PrivateKey()
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: stranger, kid: "zz")) ?? "" }
        let configuration = testConfiguration(issuer: try #require(URL(string: server.issuer)))
        let (_, tokens) = try await login(server, provider: try LaxProvider(configuration: configuration))
        #expect(tokens.subject == "user-1")

        server.issue { nonce in
            (try? await sign(server.claims(nonce: nonce, ["aud": .string("x")]), es256: stranger, kid: "zz")) ?? ""
        }
        let auth = Authenticator(
            provider: try LaxProvider(configuration: configuration), store: MemoryTokenStore(),
            transport: server.server.transport)
        let error = await #expect(throws: AuthError.self) {
            try await auth.login(.browser(approving(server)))
        }
        #expect(error?.code == .idTokenInvalid, "the claims are still checked")
        await server.server.stop()
    }

    @Test func anInvalidIDTokenAtRefreshKeepsTheOldOneAndIsReported() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        let store = MemoryTokenStore()
        let (auth, first) = try await login(server, store: store)

        // The refreshed ID token expired an hour ago (a clock that is off, say): not an identity
        // change, so the new access and refresh tokens are kept with the old ID token.
        let hourAgo = Int(Date().timeIntervalSince1970) - 3600
        server.issue { _ in
            (try? await sign(
                server.claims(nonce: nil, ["exp": .int(hourAgo), "iat": .int(hourAgo - 60)]), es256: key, kid: "k1"))
                ?? ""
        }
        let refreshed = try await auth.refresh()
        #expect(refreshed.idToken == first.idToken, "the old ID token is kept")
        #expect(refreshed.refreshToken != first.refreshToken, "the new refresh token is stored")
        #expect(await store.load(auth.key) == refreshed)
        let reported = await auth.lastRefreshIDTokenError
        #expect(reported?.code == .idTokenInvalid)
        #expect(reported?.message.contains("is in the past") == true)

        // A valid one replaces it, and clears the report.
        server.issue { _ in
            (try? await sign(server.claims(nonce: nil, ["sub": .string("user-1")]), es256: key, kid: "k1")) ?? ""
        }
        let again = try await auth.refresh()
        #expect(again.idToken != first.idToken)
        #expect(await auth.lastRefreshIDTokenError == nil)
        await server.server.stop()
    }

    /// A refreshed ID token for another subject, issuer or audience means the answer is about
    /// someone else: it is discarded, the refresh token removed, and a sign-in required.
    @Test(arguments: [
        ("sub", "user-2", #"sub "user-2" is not the signed-in subject "user-1""#),
        ("aud", "x", "does not contain the client id"),
        ("iss", "https://other.example", "is not the issuer"),
    ])
    func aRefreshedIDTokenForSomeoneElseIsDiscarded(claim: String, value: String, reason: String) async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        let store = MemoryTokenStore()
        let (auth, first) = try await login(server, store: store)
        server.issue { _ in
            (try? await sign(server.claims(nonce: nil, [claim: .string(value)]), es256: key, kid: "k1")) ?? ""
        }
        let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
        #expect(error?.code == .loginRequired)
        #expect(error?.message.contains(reason) == true)
        let kept = await store.load(auth.key)
        #expect(kept?.accessToken == first.accessToken && kept?.idToken == first.idToken)
        #expect(kept?.refreshToken == nil)
        #expect(await auth.lastRefreshIDTokenError?.message.contains(reason) == true)
        await server.server.stop()
    }

    /// The key a `kid` names must fit the token's algorithm (RFC 8725 §3.1): an RSA key under the
    /// ES256 token's `kid` is refused as such, before any signature check.
    @Test func aKeyOfAnotherTypeUnderTheKidIsRefused() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([
            #"{"kty": "RSA", "kid": "k1", "use": "sig", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB"}"#
        ])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        try await expectRefusal(server, #"the JWKS key with kid "k1" (RSA) does not fit alg ES256"#)
        await server.server.stop()
    }

    /// A key published for encryption never checks a signature, even under the right `kid`.
    @Test(arguments: [#""use": "enc""#, #""key_ops": ["encrypt"]"#])
    func aKeyForEncryptionIsNotUsed(member: String) async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        let jwk = try publicJWK(key, kid: "k1").replacingOccurrences(of: #""use": "sig""#, with: member)
        server.setKeys([jwk])
        server.issue { nonce in (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1")) ?? "" }
        try await expectRefusal(server, #"no key with kid "k1""#)
        await server.server.stop()
    }

    /// A header with critical extensions NativeAuth does not understand is refused (RFC 7515 §4.1.11).
    @Test func criticalHeaderExtensionsAreRefused() async throws {
        let server = try await SigningServer.start()
        let key = ES256PrivateKey()
        server.setKeys([try publicJWK(key, kid: "k1")])
        server.issue { nonce in
            (try? await sign(server.claims(nonce: nonce), es256: key, kid: "k1", crit: ["exp"])) ?? ""
        }
        try await expectRefusal(server, "critical extensions")
        await server.server.stop()
    }
}
