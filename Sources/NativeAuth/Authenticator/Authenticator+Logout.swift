public import Foundation
internal import HTTPTypes
internal import Logging

/// What ``Authenticator/logout(presenter:)`` did.
public struct LogoutResult: Sendable {
    /// Whether a revocation endpoint was there to call.
    public var revocationAttempted: Bool
    /// Why revocation failed, when it did; the tokens were removed from the store all the same.
    public var revocationError: AuthError?
    /// The end-session URL, when the provider has one; `nil` when it has none.
    public var endSessionURL: URL?
    /// Whether the presenter completed the end-session round trip (the post-logout redirect came
    /// back with our `state`).
    public var endSessionCompleted: Bool
}

extension Authenticator {
    /// Signs out: revokes, removes the tokens, and ends the provider's session.
    ///
    /// 1. With a revocation endpoint (metadata or override), revokes the refresh token, then the
    ///    access token (RFC 7009). A failure is reported in the result, not thrown.
    /// 2. Always removes the tokens from the store.
    /// 3. When the provider has an end-session URL (``AuthProvider/endSessionURL(metadata:idToken:postLogoutRedirectURI:state:)``),
    ///    builds it. With a presenter, opens it and waits for the post-logout redirect, checking
    ///    `state`; without one, returns it. Without such a URL there is nothing to open.
    ///
    /// - Parameter presenter: Opens the end-session URL; its session's redirect URI becomes
    ///   `post_logout_redirect_uri`. `nil` returns the URL instead.
    /// - Throws: ``AuthError`` when the store cannot remove the tokens, or the end-session round
    ///   trip fails (wrong `state`, timeout); revocation failures are in the result.
    @discardableResult
    public func logout(presenter: (any UserAgentPresenter)? = nil) async throws -> LogoutResult {
        let tokens = try await currentTokens()
        var result = LogoutResult(revocationAttempted: false, endSessionURL: nil, endSessionCompleted: false)
        var metadata: ProviderMetadata?
        do {
            metadata = try await self.metadata()
        } catch {
            result.revocationError = error as? AuthError ?? AuthError(.logoutFailed, "cannot load the metadata")
        }
        if let metadata, let endpoint = metadata.revocationEndpoint, let tokens {
            result.revocationAttempted = true
            var pending: [(String, String)] = []
            if let refreshToken = tokens.refreshToken { pending.append((refreshToken, "refresh_token")) }
            if !tokens.accessToken.isEmpty { pending.append((tokens.accessToken, "access_token")) }
            for (token, hint) in pending {
                do {
                    try await revoke(token, hint: hint, endpoint: endpoint, metadata: metadata)
                } catch let error as AuthError
                    where error.oauthError == "unsupported_token_type" && hint == "access_token"
                {
                    // RFC 7009 §2.2.1: the server revokes only refresh tokens (Cognito); the access
                    // token expires on its own.
                    logger.debug("the server does not revoke access tokens")
                } catch {
                    result.revocationError = result.revocationError ?? (error as? AuthError)
                }
            }
        }
        try await mapStoreErrors { try await store.remove(key) }
        cached = nil
        logger.info(
            "signed out", metadata: ["revoked": "\(result.revocationAttempted && result.revocationError == nil)"])

        guard let metadata else { return result }
        let state = SecureRandom.token()
        // A provider whose logout page returns to a fixed URL of its own (Cognito's logout_uri)
        // gets its URL opened by the caller; nothing comes back to wait for.
        guard let presenter, provider.endSessionReturnsToApp else {
            result.endSessionURL = provider.endSessionURL(
                metadata: metadata,
                idToken: tokens?.idToken,
                postLogoutRedirectURI: nil,
                state: state
            )
            return result
        }
        let session = try await presenter.beginSession()
        guard
            let url = provider.endSessionURL(
                metadata: metadata,
                idToken: tokens?.idToken,
                postLogoutRedirectURI: session.redirectURI,
                state: state
            )
        else {
            await session.close()
            return result
        }
        result.endSessionURL = url
        let redirectPath = session.redirectURI.path
        do {
            _ = try await session.authorize(url) { received in
                guard case .redirect(let callback) = received else { return .ignore }
                let returned = AuthorizationRequest.query(of: callback).filter { $0.name == "state" }
                guard callback.path == redirectPath, returned.count == 1, let value = returned.first?.value,
                    ConstantTime.equals(value, state)
                else { return .ignore }
                return .complete(.success(AuthorizationResponse(code: "", issuer: nil)))
            }
        } catch let error as AuthError where error.code == .timeout {
            // The presenter speaks of a sign-in; this wait is the end of one, and the tokens are gone.
            throw AuthError(
                .timeout,
                "the provider's logout page did not send the browser back in time; the tokens are removed",
                hint: "if the provider's website still shows you signed in, sign out there",
                operation: .logout,
                underlying: error
            )
        }
        result.endSessionCompleted = true
        return result
    }

    private func revoke(_ token: String, hint: String, endpoint: URL, metadata: ProviderMetadata) async throws {
        var request = TokenRequest(
            url: endpoint,
            operation: .revocation,
            form: [FormField("token", token), FormField("token_type_hint", hint)]
        )
        provider.prepareTokenRequest(&request, metadata: metadata)
        let (httpRequest, body) = request.httpRequest()
        let (response, data) = try await sendMapped(httpRequest, body: body, operation: .revocation)
        // RFC 7009 §2.2: 200 whatever the token's state; anything else is an error.
        guard response.status.code == 200 else {
            throw provider.errorMapper.mapWithFallback(
                AuthFailure(operation: .revocation, response: response, body: data))
        }
    }
}
