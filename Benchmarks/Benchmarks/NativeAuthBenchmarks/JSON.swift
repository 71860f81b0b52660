import Benchmark
import Foundation
import LenientJSON

// LenientJSON (jansson underneath) against Foundation, on the three documents NativeAuth parses
// most: a token response, a discovery document and a JWK Set of 50 RSA keys.
//
// Like is compared with like: a parse into a tree (`JSONValue` against JSONSerialization's
// `[String: Any]`), and a decode into the same struct (LenientJSON's field readers against
// JSONDecoder and `Codable`).

let jsonNanoseconds = BenchmarkMetric.custom("ns per document", useScalingFactor: false)

func jsonBenchmarks() {
    let documents:
        [(
            name: String, data: Data, decodeLenient: @Sendable (JSONObject) throws -> Any,
            decodeFoundation: @Sendable (Data) throws -> Any
        )] = [
            (
                "token response (\(SampleDocuments.tokenResponse.count) B)", SampleDocuments.tokenResponse,
                { try TokenResponse($0) },
                { try JSONDecoder().decode(TokenResponse.self, from: $0) }
            ),
            (
                "discovery document (\(SampleDocuments.discovery.count) B)", SampleDocuments.discovery,
                { try Discovery($0) },
                { try JSONDecoder().decode(Discovery.self, from: $0) }
            ),
            (
                "JWKS of 50 keys (\(SampleDocuments.jwks(keys: 50).count) B)", SampleDocuments.jwks(keys: 50),
                { try JWKS($0) },
                { try JSONDecoder().decode(JWKS.self, from: $0) }
            ),
        ]
    for document in documents {
        let data = document.data
        let decodeLenient = document.decodeLenient
        let decodeFoundation = document.decodeFoundation
        let parsers: [(String, @Sendable () throws -> Any)] = [
            ("LenientJSON parse", { try JSONValue.parse(data) }),
            ("JSONSerialization", { try JSONSerialization.jsonObject(with: data) }),
            (
                "LenientJSON decode",
                {
                    guard let object = try JSONValue.parse(data).objectValue else {
                        throw BenchmarkFailure("not an object")
                    }
                    return try decodeLenient(object)
                }
            ),
            ("JSONDecoder", { try decodeFoundation(data) }),
        ]
        for (parser, parse) in parsers {
            Benchmark(
                "JSON \(document.name): \(parser)",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .mallocCountTotal, jsonNanoseconds],
                    scalingFactor: .kilo, maxDuration: .seconds(3))
            ) { benchmark in
                let clock = ContinuousClock()
                let start = clock.now
                for _ in benchmark.scaledIterations {
                    blackHole(try parse())
                }
                let elapsed = clock.now - start
                benchmark.measurement(jsonNanoseconds, elapsed.nanoseconds / benchmark.scaledIterations.count)
            }
        }
    }
}

// MARK: The decoded shapes, the same for both decoders

struct TokenResponse: Decodable {
    var accessToken: String
    var tokenType: String
    var expiresIn: Int64?
    var refreshToken: String?
    var idToken: String?
    var scope: String?

    // Explicit keys rather than `.convertFromSnakeCase`, which would slow JSONDecoder down.
    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }

    init(_ object: JSONObject) throws {
        accessToken = try object.requiredString("access_token")
        tokenType = try object.requiredString("token_type")
        expiresIn = try object.integer("expires_in")
        refreshToken = try object.string("refresh_token")
        idToken = try object.string("id_token")
        scope = try object.string("scope")
    }
}

struct Discovery: Decodable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var userinfoEndpoint: String?
    var jwksUri: String?
    var endSessionEndpoint: String?
    var revocationEndpoint: String?
    var deviceAuthorizationEndpoint: String?
    var scopesSupported: [String]?
    var responseTypesSupported: [String]?
    var grantTypesSupported: [String]?
    var idTokenSigningAlgValuesSupported: [String]?
    var tokenEndpointAuthMethodsSupported: [String]?
    var codeChallengeMethodsSupported: [String]?
    var claimsSupported: [String]?

    // Explicit keys rather than `.convertFromSnakeCase`, which would slow JSONDecoder down.
    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksUri = "jwks_uri"
        case endSessionEndpoint = "end_session_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case scopesSupported = "scopes_supported"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case claimsSupported = "claims_supported"
    }

    init(_ object: JSONObject) throws {
        issuer = try object.requiredString("issuer")
        authorizationEndpoint = try object.requiredString("authorization_endpoint")
        tokenEndpoint = try object.requiredString("token_endpoint")
        userinfoEndpoint = try object.string("userinfo_endpoint")
        jwksUri = try object.string("jwks_uri")
        endSessionEndpoint = try object.string("end_session_endpoint")
        revocationEndpoint = try object.string("revocation_endpoint")
        deviceAuthorizationEndpoint = try object.string("device_authorization_endpoint")
        scopesSupported = try object.stringList("scopes_supported")
        responseTypesSupported = try object.stringList("response_types_supported")
        grantTypesSupported = try object.stringList("grant_types_supported")
        idTokenSigningAlgValuesSupported = try object.stringList("id_token_signing_alg_values_supported")
        tokenEndpointAuthMethodsSupported = try object.stringList("token_endpoint_auth_methods_supported")
        codeChallengeMethodsSupported = try object.stringList("code_challenge_methods_supported")
        claimsSupported = try object.stringList("claims_supported")
    }
}

struct JWKS: Decodable {
    struct Key: Decodable {
        var kty: String
        var kid: String?
        var use: String?
        var alg: String?
        var n: String?
        var e: String?
    }

    var keys: [Key]

    init(_ object: JSONObject) throws {
        keys = try (object.array("keys") ?? []).map { value in
            guard let key = value.objectValue else { throw BenchmarkFailure("a key is not an object") }
            return Key(
                kty: try key.requiredString("kty"), kid: try key.string("kid"), use: try key.string("use"),
                alg: try key.string("alg"), n: try key.string("n"), e: try key.string("e"))
        }
    }
}

// MARK: The documents

enum SampleDocuments {
    /// Deterministic base64url text of `count` characters.
    static func base64URL(_ count: Int, seed: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var state = UInt64(truncatingIfNeeded: seed) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return String(
            (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return alphabet[Int(state >> 58)]
            })
    }

    static func jwt(seed: Int) -> String {
        base64URL(36, seed: seed) + "." + base64URL(420, seed: seed + 1) + "." + base64URL(342, seed: seed + 2)
    }

    /// What a token endpoint answers an authorization code with (about 2 KiB).
    static let tokenResponse = Data(
        """
        {"access_token":"\(jwt(seed: 1))","token_type":"Bearer","expires_in":3599,\
        "refresh_token":"\(base64URL(64, seed: 7))","scope":"openid profile email offline_access",\
        "id_token":"\(jwt(seed: 11))"}
        """.utf8)

    /// An OpenID Provider's discovery document, shaped like a large provider's (about 2.5 KiB).
    static let discovery: Data = {
        let issuer = "https://login.example.com/realms/acme"
        func list(_ items: [String]) -> String { "[" + items.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        let claims = [
            "aud", "sub", "iss", "auth_time", "name", "given_name", "family_name", "preferred_username",
            "email", "email_verified", "locale", "picture", "zoneinfo", "updated_at", "acr", "amr",
        ]
        return Data(
            """
            {"issuer":"\(issuer)","authorization_endpoint":"\(issuer)/protocol/openid-connect/auth",\
            "token_endpoint":"\(issuer)/protocol/openid-connect/token",\
            "introspection_endpoint":"\(issuer)/protocol/openid-connect/token/introspect",\
            "userinfo_endpoint":"\(issuer)/protocol/openid-connect/userinfo",\
            "end_session_endpoint":"\(issuer)/protocol/openid-connect/logout",\
            "jwks_uri":"\(issuer)/protocol/openid-connect/certs",\
            "check_session_iframe":"\(issuer)/protocol/openid-connect/login-status-iframe.html",\
            "revocation_endpoint":"\(issuer)/protocol/openid-connect/revoke",\
            "device_authorization_endpoint":"\(issuer)/protocol/openid-connect/auth/device",\
            "frontchannel_logout_supported":true,"backchannel_logout_supported":true,\
            "grant_types_supported":\(list(["authorization_code", "implicit", "refresh_token", "password", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"])),\
            "response_types_supported":\(list(["code", "none", "id_token", "token", "id_token token", "code id_token", "code token", "code id_token token"])),\
            "subject_types_supported":\(list(["public", "pairwise"])),\
            "id_token_signing_alg_values_supported":\(list(["PS384", "ES384", "RS384", "HS256", "HS512", "ES256", "RS256", "HS384", "ES512", "PS256", "PS512", "RS512", "EdDSA"])),\
            "userinfo_signing_alg_values_supported":\(list(["PS384", "ES384", "RS384", "ES256", "RS256", "none"])),\
            "response_modes_supported":\(list(["query", "fragment", "form_post", "query.jwt", "fragment.jwt"])),\
            "token_endpoint_auth_methods_supported":\(list(["private_key_jwt", "client_secret_basic", "client_secret_post", "tls_client_auth", "client_secret_jwt"])),\
            "claims_supported":\(list(claims)),"claims_parameter_supported":true,\
            "scopes_supported":\(list(["openid", "profile", "email", "address", "phone", "offline_access", "roles", "web-origins"])),\
            "request_parameter_supported":true,"request_uri_parameter_supported":true,\
            "require_request_uri_registration":true,"code_challenge_methods_supported":\(list(["plain", "S256"])),\
            "tls_client_certificate_bound_access_tokens":true,\
            "authorization_response_iss_parameter_supported":true}
            """.utf8)
    }()

    /// A JWK Set of `keys` RSA-2048 public keys (about 410 bytes each).
    static func jwks(keys: Int) -> Data {
        let members = (0..<keys).map { index in
            """
            {"kty":"RSA","kid":"key-\(index)-\(base64URL(16, seed: index))","use":"sig","alg":"RS256",\
            "n":"\(base64URL(342, seed: 100 + index))","e":"AQAB"}
            """
        }
        return Data(("{\"keys\":[" + members.joined(separator: ",") + "]}").utf8)
    }
}
