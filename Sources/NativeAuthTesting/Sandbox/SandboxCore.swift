import Crypto
import Foundation
import LenientJSON
import NativeAuth

/// The sandbox's state and its answers; `SandboxAuthorizationServer` is the public face.
final class SandboxCore: Sendable {
    typealias Endpoint = SandboxAuthorizationServer.Endpoint
    typealias Grant = SandboxAuthorizationServer.Grant
    typealias Failure = SandboxAuthorizationServer.Failure

    /// What a sign-in grants, shared by the tokens it produces.
    struct Authorization: Sendable {
        var clientID: String
        var subject: String
        var scopes: [String]
        var authTime: Date
        var nonce: String?
        /// Tokens of one sign-in share a family: revoking its refresh token revokes them all.
        var family: String
        /// The client certificate its access tokens are bound to (RFC 8705 §3), if any.
        var certificateThumbprint: String?
        /// The protected resources the grant covers (RFC 8707 `resource` on the authorization
        /// request); empty: any the sandbox serves.
        var resources: [String] = []
        /// The `acr` the sign-in met: the first asked `acr_values` the sandbox supports.
        var acr: String?
        /// The `claims` request of the sign-in (OIDC Core §5.5), as sent.
        var claims: String?
        /// The thumbprint of the DPoP key its tokens are bound to (RFC 9449 `cnf.jkt`), if any.
        var dpopThumbprint: String?
    }

    /// An authorization request waiting on the approval page.
    struct PendingRequest: Sendable {
        var clientID: String
        var redirectURI: String
        var scopes: [String]
        var state: String?
        var nonce: String?
        var codeChallenge: String
        var resources: [String] = []
        var acrValues: [String] = []
        var claims: String?
        /// `dpop_jkt` (RFC 9449 §10): the code is redeemed only with a proof of that key.
        var dpopJKT: String?
    }

    struct IssuedCode: Sendable {
        var request: PendingRequest
        var authorization: Authorization
        var expiresAt: Date
    }

    struct AccessToken: Sendable {
        var authorization: Authorization
        var expiresAt: Date
        /// The resources it is for (RFC 8707); empty: the sandbox's own endpoints only.
        var audience: [String] = []
    }

    struct RefreshToken: Sendable {
        var authorization: Authorization
        var expiresAt: Date?
    }

    struct DeviceCode: Sendable {
        enum Status: Sendable {
            case pending
            case approved(subject: String)
            case denied
            case redeemed
        }

        var clientID: String
        var scopes: [String]
        var userCode: String
        var expiresAt: Date
        var interval: TimeInterval
        var lastPoll: Date?
        var status: Status
        /// The resources (RFC 8707) the device authorization request named.
        var resources: [String] = []
    }

    struct State: Sendable {
        /// `http://127.0.0.1:PORT`, set when the server has its port.
        var host = ""
        var autoApprove: Bool
        /// The username automatic approvals sign in as; `nil`: the first user.
        var autoApprovedUser: String?
        var rotateRefreshTokens: Bool
        var signer: SandboxSigner
        var pending: [String: PendingRequest] = [:]
        var codes: [String: IssuedCode] = [:]
        var accessTokens: [String: AccessToken] = [:]
        var refreshTokens: [String: RefreshToken] = [:]
        var deviceCodes: [String: DeviceCode] = [:]
        var userCodes: [String: String] = [:]
        var requestCounts: [Endpoint: Int] = [:]
        var aliasRequestCounts: [Endpoint: Int] = [:]
        var grantCounts: [Grant: Int] = [:]
        var refreshesBySubject: [String: Int] = [:]
        var errorCounts: [String: Int] = [:]
        var failures: [Endpoint: [Failure]] = [:]
        /// `iss` and `jti` of every client assertion accepted: each counts once.
        var usedAssertionIDs: Set<String> = []
        /// The `aud` of every client assertion accepted, in order.
        var clientAssertionAudiences: [String] = []
        /// The subjects of the federated tokens accepted (token exchange, JWT bearer), in order.
        var federatedSubjects: [String] = []
        /// The `resource` values of each token response, in order (RFC 8707).
        var issuedAudiences: [[String]] = []
        /// The query of the last authorization request.
        var lastAuthorizationQuery: [FormField] = []
        /// The clients registered at `/register`, by id.
        var registeredClients: [String: RegisteredClient] = [:]
        /// The pushed authorization requests (RFC 9126), by `request_uri`.
        var pushedRequests: [String: PushedRequest] = [:]
        /// The query the authorization endpoint itself received last.
        var lastBrowserQuery: [FormField] = []
        /// The DPoP nonce proofs must carry when ``SandboxAuthorizationServer/Configuration/requiresDPoPNonce``.
        var dpopNonce = SecureRandom.token(bytes: 16)
        /// The `jti` of every DPoP proof accepted.
        var usedDPoPIDs: Set<String> = []
        /// Refusals injected into the next proofs.
        var dpopInjections: [SandboxAuthorizationServer.DPoPInjection] = []
        /// Every DPoP proof accepted, in order.
        var dpopProofs: [String] = []
        /// Why each refused DPoP proof was refused, in order.
        var dpopRefusals: [String] = []
        /// Alterations of the next ID tokens and userinfo answers.
        var idTokenAlterations: [SandboxAuthorizationServer.JWTAlteration] = []
        var userInfoAlterations: [SandboxAuthorizationServer.JWTAlteration] = []
        /// Rotated-away refresh tokens and their sign-in, for reuse detection.
        var spentRefreshTokens: [String: String] = [:]
        var reuseDetections = 0
        /// The refresh tokens of sign-ins an administrator ended, with their scopes.
        var endedSignIns: [String: [String]] = [:]
        /// Every request, in order.
        var requestLog: [SandboxAuthorizationServer.LoggedRequest] = []
    }

    let configuration: SandboxAuthorizationServer.Configuration
    let state: Locked<State>
    /// The endpoint whose request is being answered.
    @TaskLocal static var endpoint: Endpoint?

    /// The endpoints by the path the dialect serves them at.
    let routes: [String: Endpoint]
    var dialect: SandboxAuthorizationServer.Dialect { configuration.dialect }

    init(configuration: SandboxAuthorizationServer.Configuration) throws {
        guard !configuration.users.isEmpty else { throw SandboxError(description: "the sandbox needs a user") }
        guard !configuration.clients.isEmpty else { throw SandboxError(description: "the sandbox needs a client") }
        self.configuration = configuration
        let dialect = configuration.dialect
        var routes: [String: Endpoint] = [:]
        for endpoint in Endpoint.allCases
        where ![.protectedResource, .protectedResourceMetadata, .clientMetadataDocument].contains(endpoint) {
            routes[dialect.path(endpoint)] = endpoint
        }
        routes["/.well-known/oauth-authorization-server" + dialect.issuerPath] = .discovery
        routes["/mtls" + dialect.path(.token)] = .token
        routes["/mtls" + dialect.path(.userInfo)] = .userInfo
        routes["/mtls" + dialect.path(.revocation)] = .revocation
        self.routes = routes
        IssuedSecrets.record(configuration.clients.compactMap(\.secret))
        state = Locked(
            State(
                autoApprove: configuration.autoApprove,
                rotateRefreshTokens: configuration.rotateRefreshTokens,
                signer: try SandboxSigner(algorithm: configuration.signingAlgorithm)
            ))
    }

    var now: Date { configuration.clock.now() }

    /// The user an automatic approval signs in as.
    var autoApprovedUser: SandboxAuthorizationServer.User {
        let name = state.withLock { $0.autoApprovedUser }
        return user(name) ?? configuration.users[0]
    }

    func client(_ id: String?) -> SandboxAuthorizationServer.Client? {
        knownClient(id)
    }

    func user(_ username: String?) -> SandboxAuthorizationServer.User? {
        guard let username else { return configuration.users.first }
        return configuration.users.first { $0.username == username }
    }

    // MARK: Dispatch

    /// Whether this sandbox answers at `path`.
    func serves(_ path: String) -> Bool { dialect.apis[path] != nil || endpoint(at: path) != nil }

    /// The endpoint served at `path`: the dialect's routes (a `/mtls/` alias only when served
    /// with a client CA), then the path prefixes of the protected resources and metadata documents.
    func endpoint(at path: String) -> Endpoint? {
        if let endpoint = routes[path] { return !path.hasPrefix("/mtls/") || servesMutualTLS ? endpoint : nil }
        let prefixed: [Endpoint] = [.protectedResource, .protectedResourceMetadata, .clientMetadataDocument]
        return prefixed.first { path.hasPrefix($0.rawValue) }
    }

    /// Whether `request` carries an access token this sandbox issued.
    func issued(_ request: TestRequest) -> Bool {
        guard let header = request.header("Authorization"), let space = header.firstIndex(of: " ") else { return false }
        let token = String(header[header.index(after: space)...]).trimmingCharacters(in: .whitespaces)
        return state.withLock { $0.accessTokens[token] != nil }
    }

    /// The answer to `request`, or `nil` when this sandbox serves nothing at its path (another
    /// sandbox on the host may).
    func handle(_ request: TestRequest) async -> TestResponse? {
        let path = request.path
        if let api = dialect.apis[path] {
            log(request)
            return api(request, tokenGrant(request))
        }
        let alias = path.hasPrefix("/mtls/") && servesMutualTLS
        guard let endpoint = self.endpoint(at: path) else { return nil }
        log(request)
        let failure: Failure? = state.withLock { state in
            state.requestCounts[endpoint, default: 0] += 1
            if alias { state.aliasRequestCounts[endpoint, default: 0] += 1 }
            if endpoint == .token, let grant = Grant(rawValue: request.form.first(named: "grant_type") ?? "") {
                state.grantCounts[grant, default: 0] += 1
            }
            guard var queue = state.failures[endpoint], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            state.failures[endpoint] = queue
            return first
        }
        var delay = Duration.zero
        var added: [(String, String)] = []
        switch failure {
        case .oauthError(let code, let status, let description):
            return dialect.refusal(
                dialect.words(.init(error: code, description: description, status: status, endpoint: endpoint)))
        case .response(let status, let contentType, let body):
            return .text(body, status: status, contentType: contentType)
        case .delay(let duration):
            delay = duration
        case .addingHeaders(let headers):
            added = headers
        case nil:
            break
        }
        var response = Self.$endpoint.withValue(endpoint) { answer(endpoint, request) }
        response.delay = delay
        response.headers += added
        if response.status >= 400, let code = try? JSONValue.parse(response.body).objectValue?["error"]?.stringValue {
            state.withLock { $0.errorCounts[code, default: 0] += 1 }
        }
        return response
    }

    private func answer(_ endpoint: Endpoint, _ request: TestRequest) -> TestResponse {
        switch (endpoint, request.method) {
        case (.discovery, "GET"): return json(discovery(request.serverURL.absoluteString))
        case (.jwks, "GET"):
            do {
                return json(try state.withLock { try $0.signer.jwks() })
            } catch {
                return .text("cannot publish the keys", status: 500)
            }
        case (.authorization, "GET"): return authorize(request)
        case (.authorization, "POST"): return decide(request)
        case (.token, "POST"): return token(request)
        case (.userInfo, "GET"), (.userInfo, "POST"): return userInfo(request)
        case (.resource, _): return resource(request)
        case (.protectedResource, _): return protectedResource(request)
        case (.protectedResourceMetadata, "GET"): return protectedResourceMetadata(request)
        case (.registration, "POST"): return register(request)
        case (.pushedAuthorization, "POST"):
            guard configuration.pushedAuthorizationRequests else { return .text("not found", status: 404) }
            return pushAuthorizationRequest(request)
        case (.clientMetadataDocument, "GET"): return clientMetadataDocument(request)
        case (.revocation, "POST"): return revoke(request)
        case (.endSession, "POST") where configuration.endSessionTakesGETOnly:
            return .text("<html><body>Not Found</body></html>", status: 404, contentType: "text/html")
        case (.endSession, "GET"), (.endSession, "POST"): return endSession(request)
        case (.deviceAuthorization, "POST"): return deviceAuthorization(request)
        case (.deviceVerification, "GET"): return devicePage(request)
        case (.deviceVerification, "POST"): return deviceDecision(request)
        default: return .text("method not allowed", status: 405)
        }
    }

    // MARK: Answers

    func json(_ object: JSONObject, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
        let text = (try? JSONValue.object(object).encodedString()) ?? "{}"
        return .json(text, status: status, headers: [("Cache-Control", "no-store")] + headers)
    }

    func oauthError(_ code: String, _ description: String, status: Int = 400, scopes: [String] = []) -> TestResponse {
        let words = dialect.words(
            .init(
                error: code, description: description, status: status, endpoint: Self.endpoint ?? .token,
                scopes: scopes))
        var answer = dialect.refusal(words)
        answer.headers.append(("Cache-Control", "no-store"))
        if status == 401 { answer.headers.append(("WWW-Authenticate", #"Basic realm="sandbox""#)) }
        return answer
    }

    func log(_ request: TestRequest) {
        let entry = SandboxAuthorizationServer.LoggedRequest(
            method: request.method, path: request.path, fields: request.query + request.form)
        state.withLock { $0.requestLog.append(entry) }
    }

    /// What the access token of `request` was issued for, for a dialect's API.
    func tokenGrant(_ request: TestRequest) -> SandboxAuthorizationServer.Dialect.TokenGrant? {
        guard case .success(let presented) = presentedToken(request) else { return nil }
        let authorization = presented.1.authorization
        return .init(
            subject: authorization.subject, clientID: authorization.clientID, scopes: authorization.scopes,
            issuer: issuer, resources: presented.1.audience,
            claims: claims(of: authorization.subject, scopes: authorization.scopes))
    }

    /// Whether the sandbox asks for client certificates (RFC 8705): served with a client CA.
    var servesMutualTLS: Bool { configuration.tls?.clientCAFile != nil }

    func discovery(_ host: String) -> JSONObject {
        let issuer = issuer(servedAt: host)
        func url(_ endpoint: Endpoint) -> JSONValue {
            dialect.unannounced.contains(endpoint) ? .null : .string(host + dialect.path(endpoint))
        }
        var authMethods: JSONValue = [
            "none", "client_secret_basic", "client_secret_post", "private_key_jwt", "client_secret_jwt",
        ]
        var mutualTLS: JSONObject = [:]
        if servesMutualTLS {
            authMethods = [
                "none", "client_secret_basic", "client_secret_post", "private_key_jwt", "client_secret_jwt",
                "tls_client_auth",
            ]
            mutualTLS["tls_client_certificate_bound_access_tokens"] = true
            mutualTLS["mtls_endpoint_aliases"] = [
                "token_endpoint": .string(host + "/mtls" + dialect.path(.token)),
                "userinfo_endpoint": .string(host + "/mtls" + dialect.path(.userInfo)),
                "revocation_endpoint": .string(host + "/mtls" + dialect.path(.revocation)),
            ]
        }
        var document: JSONObject = [
            "issuer": .string(issuer),
            "authorization_endpoint": url(.authorization),
            "token_endpoint": url(.token),
            "userinfo_endpoint": url(.userInfo),
            "jwks_uri": url(.jwks),
            "end_session_endpoint": url(.endSession),
            "revocation_endpoint": url(.revocation),
            "device_authorization_endpoint": url(.deviceAuthorization),
            "registration_endpoint": url(.registration),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": .array(Grant.allCases.map { .string($0.rawValue) }),
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": .array([
                .string(state.withLock { $0.signer.algorithm.rawValue })
            ]),
            "userinfo_signing_alg_values_supported": configuration.signsUserInfo
                ? .array([.string(state.withLock { $0.signer.algorithm.rawValue })]) : nil,
            "scopes_supported": .array(configuration.scopesSupported.map { .string($0) }),
            "claims_supported": [
                "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "name", "given_name",
                "preferred_username", "email", "email_verified",
            ],
            "token_endpoint_auth_methods_supported": authMethods,
            "revocation_endpoint_auth_methods_supported": configuration.revocationAuthMethods.map { methods in
                .array(methods.map(JSONValue.string))
            } ?? authMethods,
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "EdDSA", "HS256"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": dialect.issuerInRedirect ? true : nil,
        ]
        for member in mutualTLS { document[member.key] = member.value }
        if configuration.acceptsClientMetadataDocuments { document["client_id_metadata_document_supported"] = true }
        if configuration.pushedAuthorizationRequests {
            document["pushed_authorization_request_endpoint"] = url(.pushedAuthorization)
            if configuration.requiresPushedAuthorizationRequests {
                document["require_pushed_authorization_requests"] = true
            }
        }
        if !configuration.dpopSigningAlgorithms.isEmpty {
            document["dpop_signing_alg_values_supported"] = .array(
                configuration.dpopSigningAlgorithms.map(JSONValue.string))
        }
        if !configuration.acrValuesSupported.isEmpty {
            document["acr_values_supported"] = .array(configuration.acrValuesSupported.map(JSONValue.string))
        }
        for member in dialect.discovery(.init(host: host, issuer: issuer, scopes: [])) {
            document[member.key] = member.value
        }
        for key in document.compactMap({ $0.value == .null ? $0.key : nil }) { document[key] = nil }
        return document
    }

    /// Whether `uri` is one of `registered`: exactly, or on any port for a loopback address (unless
    /// ``SandboxAuthorizationServer/Configuration/matchesRedirectURIsExactly``).
    func matches(_ uri: String, _ registered: [String]) -> Bool {
        if registered.contains(uri) { return true }
        guard !configuration.matchesRedirectURIsExactly else { return false }
        guard let given = URLComponents(string: uri), given.scheme == "http", given.fragment == nil,
            ["127.0.0.1", "[::1]", "::1", "localhost"].contains(given.host ?? "")
        else { return false }
        return registered.contains { entry in
            guard let allowed = URLComponents(string: entry) else { return false }
            return allowed.scheme == given.scheme && allowed.host == given.host && allowed.path == given.path
                && allowed.port == nil && given.query == nil
        }
    }

    /// Runs `body` with the client a token, revocation or device request authenticates as
    /// (`client_secret_basic`, `client_secret_post`, or `client_id` alone for a public client), or
    /// answers `invalid_client` without running it.
    func authenticated(
        _ request: TestRequest,
        _ body: (SandboxAuthorizationServer.Client) -> TestResponse
    ) -> TestResponse {
        let form = request.form
        var id = form.first(named: "client_id")
        if let assertion = form.first(named: "client_assertion") {
            switch client(fromAssertion: assertion, type: form.first(named: "client_assertion_type"), clientID: id) {
            case .success(let client): return body(client)
            case .failure(let failure): return oauthError("invalid_client", failure.reason, status: 401)
            }
        }
        var secret = form.first(named: "client_secret")
        if let header = request.header("Authorization"), header.lowercased().hasPrefix("basic ") {
            guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                let pair = String(data: data, encoding: .utf8), let colon = pair.firstIndex(of: ":")
            else { return oauthError("invalid_client", "malformed Basic credentials", status: 401) }
            // RFC 6749 §2.3.1: both parts are form-urlencoded.
            id = String(pair[..<colon]).removingPercentEncoding
            secret = String(pair[pair.index(after: colon)...]).removingPercentEncoding
        }
        guard let client = client(id) else { return oauthError("invalid_client", "unknown client", status: 401) }
        if let expected = client.certificateThumbprint {
            guard let presented = request.clientCertificateThumbprint, presented == expected else {
                return oauthError(
                    "invalid_client", "the client must authenticate with its registered TLS client certificate",
                    status: 401)
            }
        }
        if client.assertionKeyPEM != nil, client.secret == nil {
            return oauthError(
                "invalid_client", "this client must authenticate with a signed assertion (private_key_jwt)",
                status: 401)
        }
        if let expected = client.secret {
            guard let secret, ConstantTime.equals(secret, expected) else {
                return oauthError("invalid_client", "wrong or missing client secret", status: 401)
            }
        }
        return body(client)
    }

    /// RFC 9470's challenge (or a claims challenge, as Microsoft Entra's) when the sign-in behind
    /// a token is weaker or older than ``SandboxAuthorizationServer/Configuration/resourceACR``,
    /// ``SandboxAuthorizationServer/Configuration/resourceMaxAge`` or
    /// ``SandboxAuthorizationServer/Configuration/resourceClaimsChallenge`` ask.
    func stepUpChallenge(_ authorization: Authorization) -> TestResponse? {
        var parameters: [String] = []
        var error = "insufficient_user_authentication"
        if let required = configuration.resourceACR, authorization.acr != required {
            parameters.append("acr_values=\"\(required)\"")
        }
        if let maxAge = configuration.resourceMaxAge,
            now.timeIntervalSince(authorization.authTime) > maxAge.timeInterval
        {
            parameters.append("max_age=\"\(Int(maxAge.timeInterval))\"")
        }
        if parameters.isEmpty, let claims = configuration.resourceClaimsChallenge, authorization.claims == nil,
            let text = try? JSONValue.object(claims).encodedString()
        {
            error = "insufficient_claims"
            parameters.append("claims=\"\(Data(text.utf8).base64EncodedString())\"")
        }
        guard !parameters.isEmpty else { return nil }
        let header =
            #"Bearer realm="sandbox", error=""# + error + #"", error_description="a stronger sign-in is needed", "#
            + parameters.joined(separator: ", ")
        return json(["error": .string(error)], status: 401, headers: [("WWW-Authenticate", header)])
    }

    func invalidToken(_ description: String) -> TestResponse {
        json(
            ["error": "invalid_token", "error_description": .string(description)], status: 401,
            headers: [("WWW-Authenticate", #"Bearer realm="sandbox", error="invalid_token""#)]
        )
    }

    func claims(of subject: String, scopes: [String]) -> JSONObject {
        var claims: JSONObject = ["sub": .string(subject)]
        guard let user = configuration.users.first(where: { $0.subject == subject }) else { return claims }
        if scopes.contains("profile") { claims["preferred_username"] = .string(user.username) }
        for member in user.claims where member.key != "sub" {
            let scope = member.key.hasPrefix("email") ? "email" : "profile"
            if scopes.contains(scope) { claims[member.key] = member.value }
        }
        return claims
    }

    func userInfo(_ request: TestRequest) -> TestResponse {
        let record: AccessToken
        switch presentedToken(request) {
        case .success(let presented): record = presented.1
        case .failure(let refusal): return refusal.response
        }
        guard record.authorization.scopes.contains("openid") else {
            return json(
                ["error": "insufficient_scope"], status: 403,
                headers: [("WWW-Authenticate", #"Bearer realm="sandbox", error="insufficient_scope", scope="openid""#)]
            )
        }
        var claims = claims(of: record.authorization.subject, scopes: record.authorization.scopes)
        let alteration = state.withLock { state in
            state.userInfoAlterations.isEmpty ? nil : state.userInfoAlterations.removeFirst()
        }
        guard configuration.signsUserInfo else {
            if case .claims(let changed) = alteration {
                for member in changed { claims[member.key] = member.value == .null ? nil : member.value }
            }
            return json(claims)
        }
        claims["iss"] = .string(issuer)
        claims["aud"] = .string(record.authorization.clientID)
        let secret = signingSecret(of: record.authorization.clientID)
        guard
            let jwt = try? state.withLock({ try $0.signer.sign(claims, secret: secret, alteration: alteration) })
        else { return oauthError("server_error", "the userinfo answer could not be signed", status: 500) }
        return TestResponse(status: 200, headers: [("Content-Type", "application/jwt")], body: Data(jwt.utf8))
    }

    /// The HMAC key of HS256–HS512 tokens for `clientID`: its secret, or (a public client's, which a
    /// client must refuse) its id.
    func signingSecret(of clientID: String) -> String {
        client(clientID)?.secret ?? clientID
    }

    func resource(_ request: TestRequest) -> TestResponse {
        let record: AccessToken
        switch presentedToken(request) {
        case .success(let presented): record = presented.1
        case .failure(let refusal): return refusal.response
        }
        if let challenge = stepUpChallenge(record.authorization) { return challenge }
        if configuration.resourceScopes.contains(where: { !record.authorization.scopes.contains($0) }) {
            let named = (configuration.resourceNamedScopes ?? configuration.resourceScopes).joined(separator: " ")
            return json(
                ["error": "insufficient_scope"], status: 403,
                headers: [
                    ("WWW-Authenticate", #"Bearer realm="sandbox", error="insufficient_scope", scope=""# + named + "\"")
                ])
        }
        let name = configuration.users.first { $0.subject == record.authorization.subject }?.username ?? "someone"
        return json([
            "message": .string("Hello, \(name), from the sandbox's protected resource."),
            "sub": .string(record.authorization.subject),
            "scope": .string(record.authorization.scopes.joined(separator: " ")),
        ])
    }
}
