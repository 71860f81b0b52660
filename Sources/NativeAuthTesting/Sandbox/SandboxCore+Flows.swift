import Crypto
import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth

extension SandboxCore {
    // MARK: Authorization

    /// Redirects back to the client with `fields`, `state` and `iss` (RFC 9207).
    func redirect(_ request: PendingRequest, _ fields: [FormField], issuer: String) -> TestResponse {
        var answer = fields
        if let error = fields.first(named: "error") {
            let words = dialect.words(
                .init(
                    error: error, description: fields.first(named: "error_description") ?? "", status: 400,
                    endpoint: .authorization))
            answer = [FormField("error", words.error), FormField("error_description", words.description)]
        }
        if let state = request.state { answer.append(FormField("state", state)) }
        if dialect.issuerInRedirect { answer.append(FormField("iss", issuer)) }
        let location = FormURLEncoding.url(request.redirectURI, adding: answer)?.absoluteString ?? request.redirectURI
        return TestResponse(
            status: 303,
            headers: [
                ("Location", location),
                ("Cache-Control", "no-store"),
            ]
        )
    }

    func authorize(_ request: TestRequest) -> TestResponse {
        let issuer = issuer(servedAt: request.serverURL.absoluteString)
        state.withLock { $0.lastBrowserQuery = request.query }
        let query: [FormField]
        switch authorizationParameters(request, issuer: issuer) {
        case .success(let parameters): query = parameters
        case .failure(let refusal): return refusal.response
        }
        state.withLock { $0.lastAuthorizationQuery = query }
        // Without a known client and a registered redirect URI, nothing may be redirected (RFC 6749 §4.1.2.1).
        guard let client = client(query.first(named: "client_id")) else {
            return page(status: 400, title: "Unknown client", body: "<p>The client_id is not registered here.</p>")
        }
        guard let redirectURI = query.first(named: "redirect_uri"), matches(redirectURI, client.redirectURIs)
        else {
            return page(
                status: 400, title: "Wrong redirect URI",
                body: "<p>The redirect_uri is not registered for \(html(client.id)).</p>")
        }
        let scopes = (query.first(named: "scope") ?? "").split(separator: " ").map(String.init)
        var pending = PendingRequest(
            clientID: client.id, redirectURI: redirectURI, scopes: scopes, state: query.first(named: "state"),
            nonce: query.first(named: "nonce"), codeChallenge: query.first(named: "code_challenge") ?? ""
        )
        guard query.first(named: "response_type") == "code" else {
            return redirect(pending, [FormField("error", "unsupported_response_type")], issuer: issuer)
        }
        guard !pending.codeChallenge.isEmpty, query.first(named: "code_challenge_method") == "S256" else {
            return redirect(
                pending,
                [FormField("error", "invalid_request"), FormField("error_description", "PKCE with S256 is required")],
                issuer: issuer)
        }
        if let unknown = scopes.first(where: { !configuration.scopesSupported.contains($0) }) {
            return redirect(
                pending,
                [FormField("error", "invalid_scope"), FormField("error_description", "unknown scope \(unknown)")],
                issuer: issuer)
        }
        pending.resources = query.filter { $0.name == dialect.resourceParameter }.map(\.value)
        pending.acrValues = (query.first(named: "acr_values") ?? "").split(separator: " ").map(String.init)
        pending.claims = query.first(named: "claims")
        pending.dpopJKT = query.first(named: "dpop_jkt")
        if let unknown = pending.resources.first(where: { !knownResources.contains($0) }) {
            return redirect(
                pending,
                [FormField("error", "invalid_target"), FormField("error_description", "unknown resource \(unknown)")],
                issuer: issuer)
        }
        if pending.scopes.isEmpty { pending.scopes = ["openid"] }
        if state.withLock({ $0.autoApprove }) {
            // A login_hint naming a user signs that user in.
            let hinted = query.first(named: "login_hint").flatMap { hint in
                configuration.users.first { $0.username == hint }
            }
            return approve(pending, user: hinted ?? autoApprovedUser, issuer: issuer)
        }
        let transaction = SecureRandom.token()
        state.withLock { $0.pending[transaction] = pending }
        return approvalPage(pending, transaction: transaction)
    }

    func approve(_ pending: PendingRequest, user: SandboxAuthorizationServer.User, issuer: String) -> TestResponse {
        let code = SecureRandom.token()
        IssuedSecrets.record(code)
        let now = now
        let authorization = Authorization(
            clientID: pending.clientID, subject: user.subject, scopes: pending.scopes, authTime: now,
            nonce: pending.nonce, family: SecureRandom.token(bytes: 12), resources: pending.resources,
            acr: pending.acrValues.first(where: configuration.acrValuesSupported.contains), claims: pending.claims
        )
        let expiry = now.addingTimeInterval(configuration.authorizationCodeLifetime.timeInterval)
        state.withLock {
            $0.codes[code] = IssuedCode(request: pending, authorization: authorization, expiresAt: expiry)
        }
        return redirect(pending, [FormField("code", code)], issuer: issuer)
    }

    /// The approval page's form: `transaction`, `decision` (`approve` or `deny`), `user`.
    func decide(_ request: TestRequest) -> TestResponse {
        let form = request.form
        let pending = state.withLock { $0.pending.removeValue(forKey: form.first(named: "transaction") ?? "") }
        guard let pending else {
            return page(
                status: 400, title: "This request has expired",
                body: "<p>Start the sign-in again from the application.</p>")
        }
        let issuer = issuer(servedAt: request.serverURL.absoluteString)
        guard form.first(named: "decision") == "approve" else {
            return redirect(
                pending,
                [FormField("error", "access_denied"), FormField("error_description", "the person denied the request")],
                issuer: issuer)
        }
        guard let user = user(form.first(named: "user")) else {
            return page(status: 400, title: "Unknown user", body: "<p>Choose one of the listed users.</p>")
        }
        return approve(pending, user: user, issuer: issuer)
    }

    // MARK: Token

    func token(_ request: TestRequest) -> TestResponse {
        authenticated(request) { client in
            // A mutual-TLS client's access tokens are bound to its certificate (RFC 8705 §3).
            let binding = client.certificateThumbprint == nil ? nil : request.clientCertificateThumbprint
            // A valid DPoP proof binds the tokens to its key (RFC 9449 §5); an invalid one is refused
            // before the grant is looked at, so that a retry with a nonce finds the code unspent.
            let thumbprint: String?
            switch dpopProof(request, site: .authorizationServer) {
            case .success(let value): thumbprint = value
            case .failure(let refusal): return refusal.response
            }
            if thumbprint == nil, configuration.requiresDPoP {
                return dpopError(
                    "invalid_dpop_proof", "this server issues DPoP-bound tokens only", site: .authorizationServer)
            }
            return Self.$proofThumbprint.withValue(thumbprint) {
                grant(request.form, client: client, binding: binding)
            }
        }
    }

    func grant(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String? = nil) -> TestResponse {
        switch form.first(named: "grant_type") {
        case SandboxAuthorizationServer.Grant.authorizationCode.rawValue:
            return exchangeCode(form, client: client, binding: binding)
        case SandboxAuthorizationServer.Grant.refreshToken.rawValue:
            return refresh(form, client: client, binding: binding)
        case SandboxAuthorizationServer.Grant.deviceCode.rawValue:
            return redeemDeviceCode(form, client: client, binding: binding)
        case SandboxAuthorizationServer.Grant.clientCredentials.rawValue:
            return clientCredentials(form, client: client, binding: binding)
        case SandboxAuthorizationServer.Grant.tokenExchange.rawValue:
            return tokenExchange(form, client: client, binding: binding)
        case SandboxAuthorizationServer.Grant.jwtBearer.rawValue:
            return jwtBearer(form, client: client, binding: binding)
        case nil: return oauthError("invalid_request", "grant_type is missing")
        default: return oauthError("unsupported_grant_type", "this grant type is not supported")
        }
    }

    func exchangeCode(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?) -> TestResponse
    {
        // A code is used at most once, whatever happens next.
        let issued = state.withLock { $0.codes.removeValue(forKey: form.first(named: "code") ?? "") }
        guard let issued, issued.expiresAt > now else {
            return oauthError("invalid_grant", "the authorization code is unknown, expired or already used")
        }
        guard issued.request.clientID == client.id else {
            return oauthError("invalid_grant", "the code was issued to another client")
        }
        guard form.first(named: "redirect_uri") == issued.request.redirectURI else {
            return oauthError("invalid_grant", "redirect_uri differs from the authorization request's")
        }
        guard let verifier = form.first(named: "code_verifier") else {
            return oauthError("invalid_request", "code_verifier is missing")
        }
        guard let pkce = try? PKCE(verifier: verifier),
            ConstantTime.equals(pkce.challenge, issued.request.codeChallenge)
        else {
            return oauthError("invalid_grant", "the code_verifier does not match the code_challenge")
        }
        if let jkt = issued.request.dpopJKT, jkt != Self.proofThumbprint {
            return oauthError("invalid_grant", "the DPoP proof's key is not the dpop_jkt of the authorization request")
        }
        var authorization = issued.authorization
        authorization.certificateThumbprint = binding
        return issueTokens(authorization, includeNonce: true, newRefreshToken: true, form: form)
    }

    func refresh(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?) -> TestResponse {
        let token = form.first(named: "refresh_token") ?? ""
        let now = now
        let (record, rotate) = state.withLock { state in (state.refreshTokens[token], state.rotateRefreshTokens)
        }
        guard var record, record.expiresAt.map({ $0 > now }) ?? true else {
            if configuration.detectsRefreshTokenReuse {
                // Reuse detection: a rotated-away token sent again revokes its whole sign-in.
                state.withLock { state in
                    guard let family = state.spentRefreshTokens[token] else { return }
                    state.refreshTokens = state.refreshTokens.filter { $0.value.authorization.family != family }
                    state.accessTokens = state.accessTokens.filter { $0.value.authorization.family != family }
                    state.reuseDetections += 1
                }
            }
            if let scopes = state.withLock({ $0.endedSignIns[token] }) {
                return oauthError("invalid_grant", "the sign-in was ended", scopes: scopes)
            }
            return oauthError("invalid_grant", "the refresh token is unknown, expired, revoked or already rotated")
        }
        guard record.authorization.clientID == client.id else {
            return oauthError("invalid_grant", "the refresh token was issued to another client")
        }
        // A DPoP-bound refresh token is spent only with a proof of its key (RFC 9449 §5).
        if let bound = record.authorization.dpopThumbprint, bound != Self.proofThumbprint {
            return dpopError(
                "invalid_dpop_proof", "the refresh token is bound to another DPoP key", site: .authorizationServer)
        }
        var narrowed: [String]?
        if let scope = form.first(named: "scope") {
            let asked = scope.split(separator: " ").map(String.init)
            guard asked.allSatisfy(record.authorization.scopes.contains) else {
                return oauthError("invalid_scope", "a refresh cannot widen the scope")
            }
            narrowed = asked
        }
        // A refused request spends nothing: the target is checked before the token rotates.
        if case .failure(let refusal) = audience(
            asked: form.filter { $0.name == dialect.resourceParameter }.map(\.value),
            granted: record.authorization.resources)
        {
            return refusal.response
        }
        if rotate {
            // Retire the old token; a second refresh with it is refused.
            let removed = state.withLock { state in
                let removed = state.refreshTokens.removeValue(forKey: token)
                if removed != nil { state.spentRefreshTokens[token] = record.authorization.family }
                return removed
            }
            guard removed != nil else {
                return oauthError("invalid_grant", "the refresh token was already rotated")
            }
        }
        state.withLock { $0.refreshesBySubject[record.authorization.subject, default: 0] += 1 }
        record.authorization.certificateThumbprint = binding
        // A rotated refresh token keeps the grant's whole scope (RFC 6749 §6); the access token has
        // the narrowed one.
        return issueTokens(
            record.authorization, includeNonce: false, newRefreshToken: rotate, form: form, accessScopes: narrowed,
            idToken: configuration.issuesIDTokensOnRefresh)
    }

    func issueTokens(
        _ authorization: Authorization,
        includeNonce: Bool,
        newRefreshToken: Bool,
        form: [FormField],
        accessScopes: [String]? = nil,
        extra: JSONObject = [:],
        idToken: Bool = true
    ) -> TestResponse {
        let audience: [String]
        switch self.audience(
            asked: form.filter { $0.name == dialect.resourceParameter }.map(\.value), granted: authorization.resources)
        {
        case .success(let value): audience = value
        case .failure(let refusal): return refusal.response
        }
        var access = authorization
        if let accessScopes { access.scopes = accessScopes }
        return issueTokens(
            authorization, access: access, audience: audience, includeNonce: includeNonce,
            newRefreshToken: newRefreshToken, extra: extra, idToken: idToken)
    }

    private func issueTokens(
        _ authorization: Authorization,
        access accessAuthorization: Authorization,
        audience: [String],
        includeNonce: Bool,
        newRefreshToken: Bool,
        extra: JSONObject,
        idToken issuesIDToken: Bool
    ) -> TestResponse {
        var authorization = authorization
        var accessAuthorization = accessAuthorization
        var tokenType = "Bearer"
        if let thumbprint = Self.proofThumbprint, !configuration.answersBearerToDPoP {
            authorization.dpopThumbprint = thumbprint
            accessAuthorization.dpopThumbprint = thumbprint
            tokenType = "DPoP"
        }
        let now = now
        let access = dialect.accessTokenPrefix + SecureRandom.token()
        let lifetime = configuration.accessTokenLifetime.timeInterval
        var answer: JSONObject = [
            "access_token": .string(access),
            "token_type": .string(tokenType),
            "expires_in": .integer(Int64(lifetime.rounded())),
            "scope": .string(accessAuthorization.scopes.joined(separator: " ")),
        ]
        for member in extra { answer[member.key] = member.value }
        let context = SandboxAuthorizationServer.Dialect.Context(
            host: host, issuer: issuer, scopes: authorization.scopes)
        for member in dialect.tokenResponse(context) { answer[member.key] = member.value }
        var refresh: String?
        if newRefreshToken {
            refresh = dialect.refreshTokenPrefix + SecureRandom.token()
            answer["refresh_token"] = refresh.map(JSONValue.string)
            // As GitHub says it: how long the new refresh token lives, when it does not live for ever.
            if let lifetime = configuration.refreshTokenLifetime {
                answer["refresh_token_expires_in"] = .integer(Int64(lifetime.timeInterval.rounded()))
            }
        }
        if issuesIDToken, authorization.scopes.contains("openid") {
            var claims = claims(of: authorization.subject, scopes: authorization.scopes)
            let issued = Int64(now.timeIntervalSince1970)
            claims["iss"] = .string(issuer)
            claims["aud"] = .string(authorization.clientID)
            claims["iat"] = .integer(issued)
            claims["exp"] = .integer(issued + Int64(configuration.idTokenLifetime.timeInterval.rounded()))
            claims["auth_time"] = .integer(Int64(authorization.authTime.timeIntervalSince1970))
            if let acr = authorization.acr { claims["acr"] = .string(acr) }
            if includeNonce, let nonce = authorization.nonce { claims["nonce"] = .string(nonce) }
            for member in dialect.idTokenClaims(context) { claims[member.key] = member.value }
            let secret = signingSecret(of: authorization.clientID)
            let idToken = try? state.withLock { state in
                claims["at_hash"] = .string(state.signer.leftHalfHash(access))
                let alteration = state.idTokenAlterations.isEmpty ? nil : state.idTokenAlterations.removeFirst()
                return try state.signer.sign(claims, secret: secret, alteration: alteration)
            }
            guard let idToken else {
                return oauthError("server_error", "the ID token could not be signed", status: 500)
            }
            answer["id_token"] = .string(idToken)
        }
        IssuedSecrets.record([access, refresh, answer["id_token"]?.stringValue].compactMap { $0 })
        let refreshExpiry = configuration.refreshTokenLifetime.map { now.addingTimeInterval($0.timeInterval) }
        state.withLock { state in
            state.accessTokens[access] = AccessToken(
                authorization: accessAuthorization, expiresAt: now.addingTimeInterval(lifetime), audience: audience)
            state.issuedAudiences.append(audience)
            if let refresh {
                state.refreshTokens[refresh] = RefreshToken(authorization: authorization, expiresAt: refreshExpiry)
            }
        }
        guard dialect.formEncodedTokenResponses else { return json(answer) }
        let fields = answer.compactMap { member -> FormField? in
            switch member.value {
            case .string(let text): FormField(member.key, text)
            case .integer(let number): FormField(member.key, String(number))
            default: nil
            }
        }
        return TestResponse(
            status: 200,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cache-Control", "no-store")],
            body: Data(FormURLEncoding.encode(fields).utf8))
    }

    /// The issuer, for ID tokens (known when the server has its port).
    var issuer: String { issuer(servedAt: host) }

    /// `http://127.0.0.1:PORT`.
    var host: String { state.withLock { $0.host } }

    /// The issuer as a request to `host` names it.
    func issuer(servedAt host: String) -> String {
        host + dialect.issuerPath + (dialect.issuerEndsWithSlash ? "/" : "")
    }

    /// The URL of `endpoint` on the sandbox's host.
    func url(_ endpoint: Endpoint) -> String { host + dialect.path(endpoint) }

    // MARK: Revocation and logout

    func revoke(_ request: TestRequest) -> TestResponse {
        if let methods = configuration.revocationAuthMethods {
            let form = request.form
            let method: String
            if form.first(named: "client_assertion") != nil {
                method = form.first(named: "client_secret") == nil ? "private_key_jwt" : "client_secret_jwt"
            } else if request.header("Authorization")?.lowercased().hasPrefix("basic ") == true {
                method = "client_secret_basic"
            } else {
                method = form.first(named: "client_secret") == nil ? "none" : "client_secret_post"
            }
            guard methods.contains(method) else {
                return oauthError(
                    "invalid_client", "the revocation endpoint takes \(methods.joined(separator: ", ")) only",
                    status: 401)
            }
        }
        return authenticated(request) { client in revoke(request.form.first(named: "token") ?? "", client: client) }
    }

    func revoke(_ token: String, client: SandboxAuthorizationServer.Client) -> TestResponse {
        state.withLock { state in
            if let record = state.refreshTokens[token], record.authorization.clientID == client.id {
                // Revoking a refresh token ends its whole sign-in (RFC 7009 §2.1 allows it).
                let family = record.authorization.family
                state.refreshTokens = state.refreshTokens.filter { $0.value.authorization.family != family }
                state.accessTokens = state.accessTokens.filter { $0.value.authorization.family != family }
            } else if let record = state.accessTokens[token], record.authorization.clientID == client.id {
                state.accessTokens[token] = nil
            }
        }
        // RFC 7009 §2.2: an unknown or already invalid token is not an error.
        return TestResponse(status: 200, headers: [("Cache-Control", "no-store")])
    }

    func endSession(_ request: TestRequest) -> TestResponse {
        let fields = request.method == "POST" ? request.form : request.query
        if dialect.endSessionRequiresIDTokenHint, fields.first(named: "id_token_hint") == nil {
            return page(
                status: 400, title: "Bad request", body: "<p>The id_token_hint parameter is required.</p>")
        }
        guard let target = fields.first(named: "post_logout_redirect_uri") else {
            return page(
                title: "Signed out", body: "<p>You are signed out of the sandbox. You can close this window.</p>")
        }
        let clientID = fields.first(named: "client_id") ?? audience(ofIDToken: fields.first(named: "id_token_hint"))
        guard let client = client(clientID), matches(target, client.postLogoutRedirectURIs) else {
            return page(
                status: 400, title: "Wrong post-logout redirect URI",
                body: "<p>The post_logout_redirect_uri is not registered for this client.</p>")
        }
        var back: [FormField] = []
        if let state = fields.first(named: "state") { back.append(FormField("state", state)) }
        let location = back.isEmpty ? target : FormURLEncoding.url(target, adding: back)?.absoluteString ?? target
        return TestResponse(status: 303, headers: [("Location", location)])
    }

    /// The `aud` of an ID token the sandbox signed (not verified: only to find the client).
    func audience(ofIDToken token: String?) -> String? {
        guard let token, case let parts = token.split(separator: "."), parts.count == 3,
            let payload = Base64URL.decode(parts[1]), let object = try? JSONValue.parse(payload).objectValue
        else { return nil }
        return (try? object.string("aud")) ?? nil
    }

    // MARK: Device flow

    func deviceAuthorization(_ request: TestRequest) -> TestResponse {
        authenticated(request) { client in deviceAuthorization(request, client: client) }
    }

    func deviceAuthorization(_ request: TestRequest, client: SandboxAuthorizationServer.Client) -> TestResponse {
        var scopes = (request.form.first(named: "scope") ?? "openid").split(separator: " ").map(String.init)
        if let unknown = scopes.first(where: { !configuration.scopesSupported.contains($0) }) {
            return oauthError("invalid_scope", "unknown scope \(unknown)")
        }
        if scopes.isEmpty { scopes = ["openid"] }
        let resources = request.form.filter { $0.name == dialect.resourceParameter }.map(\.value)
        if let unknown = resources.first(where: { !knownResources.contains($0) }) {
            return oauthError("invalid_target", "unknown resource \(unknown)")
        }
        let deviceCode = SecureRandom.token()
        IssuedSecrets.record(deviceCode)
        let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
        let letters = SecureRandom.bytes(8).map { alphabet[Int($0) % alphabet.count] }
        let userCode = String(letters[0..<4]) + "-" + String(letters[4..<8])
        let lifetime = configuration.deviceCodeLifetime.timeInterval
        let interval = configuration.devicePollingInterval.timeInterval
        let autoApprove = state.withLock { $0.autoApprove }
        let record = DeviceCode(
            clientID: client.id, scopes: scopes, userCode: userCode, expiresAt: now.addingTimeInterval(lifetime),
            interval: interval, lastPoll: nil,
            status: autoApprove ? .approved(subject: autoApprovedUser.subject) : .pending, resources: resources
        )
        state.withLock { state in
            state.deviceCodes[deviceCode] = record
            state.userCodes[Self.normalize(userCode)] = deviceCode
        }
        let verification =
            request.serverURL.absoluteString + dialect.path(.deviceVerification)
        return json([
            "device_code": .string(deviceCode),
            "user_code": .string(userCode),
            "verification_uri": .string(verification),
            "verification_uri_complete": .string(
                verification + "?" + FormURLEncoding.encode([FormField("user_code", userCode)])),
            "expires_in": .integer(Int64(lifetime.rounded())),
            "interval": .integer(Int64(interval.rounded(.up))),
        ])
    }

    static func normalize(_ userCode: String) -> String {
        userCode.uppercased().filter { $0.isLetter || $0.isNumber }
    }

    func redeemDeviceCode(_ form: [FormField], client: SandboxAuthorizationServer.Client, binding: String?)
        -> TestResponse
    {
        let deviceCode = form.first(named: "device_code") ?? ""
        let now = now
        enum Outcome {
            case error(String, String)
            case approved(DeviceCode, subject: String)
        }
        let outcome: Outcome = state.withLock { state in
            guard var record = state.deviceCodes[deviceCode], record.clientID == client.id else {
                return .error("invalid_grant", "the device code is unknown")
            }
            defer { state.deviceCodes[deviceCode] = record }
            guard record.expiresAt > now else { return .error("expired_token", "the device code has expired") }
            let tooSoon =
                record.interval > 0 && record.lastPoll.map { now.timeIntervalSince($0) < record.interval } == true
            record.lastPoll = now
            switch record.status {
            case .pending:
                if tooSoon {
                    record.interval += 5
                    return .error("slow_down", "polling faster than the interval")
                }
                return .error("authorization_pending", "the person has not approved yet")
            case .denied: return .error("access_denied", "the person denied the request")
            case .redeemed: return .error("invalid_grant", "the device code was already used")
            case .approved(let subject):
                record.status = .redeemed
                return .approved(record, subject: subject)
            }
        }
        switch outcome {
        case .error(let code, let description): return oauthError(code, description)
        case .approved(let record, let subject):
            let authorization = Authorization(
                clientID: record.clientID, subject: subject, scopes: record.scopes, authTime: now, nonce: nil,
                family: SecureRandom.token(bytes: 12), certificateThumbprint: binding, resources: record.resources)
            return issueTokens(authorization, includeNonce: false, newRefreshToken: true, form: form)
        }
    }

    func decideDevice(userCode: String, approve: Bool, username: String?) throws {
        guard let user = user(username) else { throw SandboxError(description: "no user named \(username ?? "")") }
        let now = now
        try state.withLock { state in
            guard let deviceCode = state.userCodes[Self.normalize(userCode)],
                var record = state.deviceCodes[deviceCode],
                record.expiresAt > now
            else { throw SandboxError(description: "the user code \(userCode) is unknown or expired") }
            guard case .pending = record.status else {
                throw SandboxError(description: "the user code \(userCode) was already used")
            }
            record.status = approve ? .approved(subject: user.subject) : .denied
            state.deviceCodes[deviceCode] = record
        }
    }

    func deviceDecision(_ request: TestRequest) -> TestResponse {
        let form = request.form
        let userCode = form.first(named: "user_code") ?? ""
        let approve = form.first(named: "decision") == "approve"
        do {
            try decideDevice(userCode: userCode, approve: approve, username: form.first(named: "user"))
        } catch {
            return devicePage(request, userCode: userCode, problem: "\(error)")
        }
        return page(
            title: approve ? "Device approved" : "Device denied",
            body: approve
                ? "<p>You can return to your device: it is signed in.</p>"
                : "<p>The device was not signed in.</p>")
    }
}
