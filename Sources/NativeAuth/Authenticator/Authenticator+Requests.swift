public import Foundation
public import HTTPTypes
internal import LenientJSON

extension Authenticator {
    /// Sends `request` with `Authorization: Bearer <access token>`.
    ///
    /// On a 401 it refreshes once (single-flight, and not at all when the token already changed
    /// since this request was sent) and retries once. Other statuses are returned as they are.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/invalidToken`` when the retry gets a 401 too,
    ///   ``AuthError/Code/insufficientScope`` for a 403 whose `WWW-Authenticate` says so,
    ///   ``AuthError/Code/loginRequired`` when no token can be had, transport errors as they are.
    public func send(_ request: HTTPRequest, body: Data? = nil) async throws -> (HTTPResponse, Data) {
        let token = try await accessToken()
        let (response, data) = try await sendAuthorized(request, body: body, token: token)
        if response.status.code == 401 {
            if let current = try await currentTokens(), current.accessToken == token {
                // Without a refresh token (GitHub's non-expiring tokens) there is nothing to retry with.
                guard current.refreshToken != nil else { throw refusedToken(response, data) }
                _ = try await refresh(replacing: current, minimumValidity: nil)
            }
            let retried = try await sendAuthorized(request, body: body, token: try await accessToken())
            if retried.0.status.code == 401 { throw refusedToken(retried.0, retried.1) }
            return try checkScope(retried)
        }
        return try checkScope((response, data))
    }

    /// The userinfo claims of the signed-in account (OIDC Core §5.3), through ``send(_:body:)``.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` when the provider has no
    ///   userinfo endpoint, ``AuthError/Code/responseMalformed`` when the answer is not a JSON object.
    public func userInfo() async throws -> UserInfo {
        guard let endpoint = try await metadata().userInfoEndpoint else {
            throw AuthError(.configurationInvalid, "the provider has no userinfo endpoint", operation: .userInfo)
        }
        var request = HTTPRequest(method: .get, url: endpoint)
        request.headerFields[.accept] = "application/json"
        let (response, data) = try await send(request)
        guard (200..<300).contains(response.status.code) else {
            throw provider.errorMapper.mapWithFallback(
                AuthFailure(operation: .userInfo, response: response, body: data))
        }
        do {
            guard let claims = try JSONValue.parse(data).objectValue else {
                throw JSONFieldError(key: "sub", problem: .missing)
            }
            return try provider.decodeUserInfo(claims)
        } catch let error as AuthError {
            throw error
        } catch {
            throw provider.errorMapper.mapWithFallback(
                AuthFailure(operation: .userInfo, response: response, body: data, underlying: error)
            )
        }
    }

    /// A 401 as ``AuthError/Code/invalidToken``, in the provider's words when it has some.
    private func refusedToken(_ response: HTTPResponse, _ body: Data) -> AuthError {
        let error = provider.errorMapper.mapWithFallback(
            AuthFailure(operation: .apiRequest, response: response, body: body)
        )
        guard error.code != .invalidToken else { return error }
        return AuthError(
            .invalidToken,
            "the server refused the access token",
            hint: "sign in again",
            operation: .apiRequest,
            status: 401,
            oauthError: error.oauthError
        )
    }

    private func sendAuthorized(_ request: HTTPRequest, body: Data?, token: String) async throws -> (HTTPResponse, Data)
    {
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer \(token)"
        return try await sendMapped(authorized, body: body, operation: .apiRequest)
    }

    private func checkScope(_ exchange: (HTTPResponse, Data)) throws -> (HTTPResponse, Data) {
        let (response, data) = exchange
        guard response.status.code == 403,
            let header = response.headerFields[.wwwAuthenticate],
            BearerChallenge(headerValue: header)?.error == "insufficient_scope"
        else { return exchange }
        throw provider.errorMapper.mapWithFallback(AuthFailure(operation: .apiRequest, response: response, body: data))
    }
}
