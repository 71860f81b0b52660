package import Foundation
package import HTTPTypes

// The requests of an ExchangeClient that are not OAuth endpoints' own: documents (discovery,
// JWKS), an app's requests with an access token, and userinfo.
extension ExchangeClient {
    /// Fetches a JSON document (discovery, JWKS): the response whatever its status, for callers
    /// that judge it themselves.
    package func fetchDocument(_ url: URL, operation: AuthOperation) async throws(AuthError) -> (HTTPResponse, Data) {
        var request = HTTPRequest(method: .get, url: url)
        request.headerFields[.accept] = "application/json"
        return try await send(request, body: nil, operation: operation)
    }

    /// Sends an app's request with its access token, once: ``authorized(_:credential:operation:)``,
    /// the transport, then ``answer(to:of:credential:operation:)``, for the caller to act on
    /// (``ResourceRetry``).
    package func sendAuthorized(
        _ request: HTTPRequest,
        body: Data?,
        credential: AccessCredential,
        operation: AuthOperation = .apiRequest,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws(AuthError) -> (response: HTTPResponse, body: Data, answer: ResourceAnswer) {
        let authorized = try authorized(request, credential: credential, operation: operation)
        let (response, data) = try await send(authorized, body: body, operation: operation, streamingTo: sink)
        return (response, data, try answer(to: response, of: request, credential: credential, operation: operation))
    }

    /// `request` with its access token: the one place the `Authorization` header of a resource
    /// request is made.
    ///
    /// A DPoP-bound token goes as `Authorization: DPoP …` with a proof for this request (its method,
    /// its URL without query and fragment, the token's hash, the server's last nonce): `proof`
    /// when one was signed elsewhere (a token agent's), else one signed with the credential's key.
    ///
    /// - Throws: ``AuthError`` when the token cannot be sent as it is bound: to a TLS client
    ///   certificate this transport does not present, or to a DPoP key that is not with it.
    package func authorized(
        _ request: HTTPRequest, credential: AccessCredential, proof: String? = nil,
        operation: AuthOperation = .apiRequest
    ) throws(AuthError) -> HTTPRequest {
        if let thumbprint = credential.certificateThumbprint, transport.clientCertificateThumbprint != thumbprint {
            throw AuthError(
                .configurationInvalid,
                "the access token is bound to a TLS client certificate (RFC 8705) that this transport does not"
                    + " present; it was not sent",
                hint: "give the `client_cert` and `client_key` it was issued with", operation: operation)
        }
        var authorized = request
        guard credential.isDPoPBound, let url = request.url else {
            authorized.headerFields[.authorization] = "Bearer \(credential.accessToken)"
            return authorized
        }
        if let proof {
            authorized.headerFields[.authorization] = "DPoP \(credential.accessToken)"
            authorized.headerFields[.dpop] = proof
            return authorized
        }
        guard let key = credential.dpopKey else {
            throw AuthError(
                .loginRequired, "the access token is DPoP-bound, and its key is not with it; it was not sent",
                hint: "sign in again", operation: operation)
        }
        authorized.headerFields[.authorization] = "DPoP \(credential.accessToken)"
        authorized.headerFields[.dpop] = try key.proof(
            method: request.method.rawValue, url: url, accessToken: credential.accessToken,
            nonce: dpopNonces.nonce(for: url), now: clock.now())
        return authorized
    }

    /// Reads the answer to `request` sent with `credential` (``ResourceAnswer``); a `DPoP-Nonce`
    /// in it is kept for the next proof to that server.
    package func answer(
        to response: HTTPResponse, of request: HTTPRequest, credential: AccessCredential,
        operation: AuthOperation = .apiRequest
    ) throws(AuthError) -> ResourceAnswer {
        guard credential.isDPoPBound, let url = request.url else { return ResourceAnswer(response) }
        let nonce = try dpopNonces.remember(response, for: url, operation: operation)
        return ResourceAnswer(response, gaveNonce: nonce != nil)
    }

    /// Reads a userinfo answer (OIDC Core §5.3) with the provider's decode hooks.
    package func userInfo(from response: HTTPResponse, body: Data) throws(AuthError) -> UserInfo {
        try read(response, body, operation: .userInfo, requiredKey: "sub", build: UserInfo.init(claims:))
            .mapError(\.error).get()
    }
}
