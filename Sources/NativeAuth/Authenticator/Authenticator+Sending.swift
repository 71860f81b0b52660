public import Foundation
public import HTTPTypes
internal import Logging

// Requests with the tokens: the one send verb, the sender under it, and what the sender asks of
// the authenticator (the resources found by their metadata, a step-up's sign-in).
extension Authenticator {
    /// Sends `request` with the access token of `target`, and acts on the answer as the
    /// ``TokenSender`` does: on a 401 one refresh (single-flight, and none when the token already
    /// changed since the request was sent) and one retry; a new DPoP proof when the server asks for
    /// a nonce; with `presenter`, a step-up when the API asks for a stronger or more recent sign-in
    /// (RFC 9470 `insufficient_user_authentication`, a claims challenge) or for a scope the token
    /// lacks (403 `insufficient_scope` naming it, as the MCP authorization spec has it): one sign-in
    /// through `presenter` for every caller that meets it at once (see ``StepUpPlan``), then the
    /// request once more. Other statuses are returned as they are.
    ///
    /// With `sink`, the body of a successful answer (2xx) is not collected: each piece goes to
    /// `sink` as it arrives (a server-sent event stream line after line, a download of any size),
    /// and the body returned is empty. Other answers come back whole, so that a 401 is still
    /// refreshed and retried; a success is never sent again, so nothing reaches `sink` twice.
    ///
    /// ```swift
    /// var request = HTTPRequest(method: .post, url: mcpEndpoint)
    /// request.headerFields[.accept] = "application/json, text/event-stream"
    /// let (response, _) = try await authenticator.send(request, body: call) { piece in
    ///     FileHandle.standardOutput.write(piece)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request; its `Authorization` header is set here.
    ///   - body: The request's body, sent again as it is on a retry.
    ///   - target: Whose token the request carries: the sign-in's (the default), or a resource's
    ///     (``TokenTarget/resource(_:scopes:)``).
    ///   - presenter: Where a step-up's sign-in is shown; `nil` (the default): such an answer is an
    ///     error.
    ///   - sink: Where a successful answer's body goes as it arrives; `nil` (the default) to get
    ///     it whole.
    /// - Throws: ``AuthError``: ``AuthError/Code/invalidToken`` when the retry gets a 401 too,
    ///   ``AuthError/Code/stepUpRequired`` or ``AuthError/Code/insufficientScope`` when the API asks
    ///   for a stronger sign-in or a scope (without a presenter, or again after the step-up),
    ///   ``AuthError/Code/loginRequired`` when no token can be had, transport errors as they are.
    public func send(
        _ request: HTTPRequest, body: Data? = nil, for target: TokenTarget = .signIn,
        stepUpWith presenter: (any UserAgentPresenter)? = nil, streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        let client = client
        return try await sender(for: target, stepUpWith: presenter).send(request, body: body) {
            $0
        } next: {
            authorized, body async throws(AuthError) in
            try await client.send(authorized, body: body, operation: .apiRequest, streamingTo: sink)
        }
    }

    /// The sender of requests with the access token of `target`, for a stack that sends them itself
    /// (an OpenAPI client's transport, a WebSocket's upgrade, a gRPC channel): see ``TokenSender``.
    ///
    /// - Parameters:
    ///   - target: Whose token the requests carry, and where they may go.
    ///   - presenter: Where a step-up's sign-in is shown; `nil` for none.
    public func sender(for target: TokenTarget = .signIn, stepUpWith presenter: (any UserAgentPresenter)? = nil)
        -> TokenSender
    {
        TokenSender(authenticator: self, target: target, stepUpPresenter: presenter)
    }

    /// Sends `request` with the access token for `resource`.
    @available(*, deprecated, message: "use send(_:body:for: .resource(resource, scopes:), streamingTo:)")
    public func send(
        _ request: HTTPRequest, body: Data? = nil, for resource: URL, scopes: [String]? = nil,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        try await send(request, body: body, for: .resource(resource, scopes: scopes), streamingTo: sink)
    }

    // MARK: - What the sender asks

    /// `target`, or, for the sign-in's token and a URL under a resource found by its metadata, that
    /// resource's.
    func discovered(_ target: TokenTarget, for url: URL?) -> TokenTarget {
        guard target.resource == nil, let url,
            let resource = discoveredResources.withLock({ $0.first { ProtectedResourceMetadata.covers($0, url) } })
        else { return target }
        return target.carrying(resource)
    }

    /// The resource a 401 points to (RFC 9728), when its metadata names this issuer.
    ///
    /// - Throws: ``AuthError`` when the metadata cannot be had or is refused, or names another issuer.
    func follow(_ request: HTTPRequest, _ answer: ResourceAnswer) async throws -> URL {
        guard let url = request.url else { throw AuthError(.configurationInvalid, "the request has no URL") }
        let metadata = try await ProtectedResourceMetadata.discover(
            for: url, challenge: answer.challenge, transport: client.transport)
        guard let issuer = provider.configuration.issuer.map(IssuerIdentifier.init),
            metadata.authorizationServers.contains(where: { IssuerIdentifier($0) == issuer })
        else {
            let servers = metadata.authorizationServers.map { Redaction.scrubURL($0.absoluteString) }
            throw AuthError(
                .invalidToken,
                "the API's tokens come from \(servers.isEmpty ? "no authorization server it names" : servers.joined(separator: ", ")),"
                    + " not from this configuration's issuer; no token was sent there",
                hint: "sign in at the authorization server the API names (RFC 9728 protected resource metadata)",
                operation: .apiRequest,
                status: 401)
        }
        discoveredResources.withLock { if !$0.contains(metadata.resource) { $0.append(metadata.resource) } }
        client.logger.debug(
            "following the API's protected resource metadata",
            metadata: ["resource": "\(Redaction.scrubURL(metadata.resource.absoluteString))"])
        return metadata.resource
    }

    /// A step-up's sign-in through `presenter` with `scopes` and `options`, once for every caller
    /// that met an API's challenge at the same time, unless the tokens changed since the request was
    /// sent with `sentWith` (another caller's step-up came first): the caller then retries with
    /// those.
    func signInAgain(
        since sentWith: String?, reason: AuthError.Code, presenter: any UserAgentPresenter, scopes: [String],
        options: LoginOptions
    ) async throws {
        let instruments = client.instruments
        try await instruments.span("nativeauth.step_up") { span in
            span.set(TraceSpan.Attribute.reason, reason.rawValue)
            let (_, started) = try await stepUps.valueReportingStart {
                if let current = try await self.currentTokens(), current.accessToken != sentWith { return current }
                instruments.count(Instruments.Metric.stepUps, [("reason", reason.rawValue)])
                if reason == .stepUpRequired {
                    self.client.logger.info("the API asks for a stronger sign-in; signing in again")
                } else {
                    self.client.logger.info(
                        "the API needs another scope; signing in again for it",
                        metadata: ["scopes": "\(TerminalText.sanitized(scopes.joined(separator: " ")))"])
                }
                return try await self.login(
                    .browser(presenter, options: options), scopes: scopes.isEmpty ? nil : scopes)
            }
            // A caller that met the challenge while another's sign-in ran retries with its tokens.
            span.set(TraceSpan.Attribute.waited, !started)
        }
    }

    // MARK: - Userinfo

    /// The userinfo claims of the signed-in account (OIDC Core §5.3), through
    /// ``send(_:body:for:stepUpWith:streamingTo:)``.
    ///
    /// When the sign-in had a validated ID token, the answer's `sub` must be its subject (OIDC Core
    /// §5.3.4): claims about someone else are not returned. A signed answer (`application/jwt`,
    /// OIDC Core §5.3.2) is verified as an ID token is (the provider's keys and algorithms, `iss`
    /// and `aud` when present) before it is read; an encrypted one is refused.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` when the provider has no
    ///   userinfo endpoint, ``AuthError/Code/responseMalformed`` when the answer is not a JSON object
    ///   or a signed JWT that verifies,
    ///   ``AuthError/Code/requestFailed`` when its `sub` is not the signed-in subject.
    public func userInfo() async throws -> UserInfo {
        guard let endpoint = try await metadata().userInfoEndpoint else {
            throw AuthError(.configurationInvalid, "the provider has no userinfo endpoint", operation: .userInfo)
        }
        let signedIn = try await holder.current()
        try signedIn?.checkIssued(for: "userinfo_endpoint", at: endpoint, operation: .userInfo)
        var request = HTTPRequest(method: .get, url: endpoint)
        request.headerFields[.accept] = "application/json, application/jwt;q=0.9"
        let (response, body) = try await send(request)
        let info: UserInfo
        let contentType = response.headerFields[.contentType]?.lowercased() ?? ""
        if response.status.kind == .successful, contentType.hasPrefix("application/jwt") {
            // OIDC Core §5.3.2: signed (perhaps encrypted) userinfo; verified like an ID token.
            let jwt = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let claims = try await IDTokenValidator.verifiedUserInfo(
                jwt, metadata: try await metadata(), client: client)
            do {
                info = try UserInfo(claims: claims)
            } catch {
                throw AuthError(
                    .responseMalformed, "the signed userinfo answer lacks what the protocol requires: \(error)",
                    operation: .userInfo, underlying: error)
            }
        } else {
            info = try client.userInfo(from: response, body: body)
        }
        if let subject = signedIn?.subject, info.subject != subject {
            throw AuthError(
                .requestFailed,
                "the userinfo answer is about subject \"\(info.subject)\", not the signed-in \"\(subject)\";"
                    + " its claims were not used (OIDC Core 5.3.4)",
                hint: "sign in again; if this persists, the provider's userinfo endpoint is misconfigured",
                operation: .userInfo
            )
        }
        return info
    }
}
