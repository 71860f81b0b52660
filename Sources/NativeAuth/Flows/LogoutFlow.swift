public import Foundation
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

/// One sign-out: the removal of the tokens (the caller's part, first), their revocation (RFC 7009),
/// and the end of the provider's session in the browser.
package struct LogoutFlow: Sendable {
    let client: ExchangeClient

    package init(client: ExchangeClient) {
        self.client = client
    }

    /// Runs the sign-out.
    ///
    /// 1. Calls `removeTokens`, always, which returns the set it removed.
    /// 2. With a revocation endpoint (metadata or override), revokes that set's refresh token, then
    ///    its access token. A failure is reported in the result, not thrown.
    /// 3. Asks the provider for its end-session page (``AuthProvider/endSession(_:)``). A page that
    ///    returns to the app is opened with the presenter, which waits for the redirect with our
    ///    `state`; any other page, or any page without a presenter, is returned for the caller.
    package func signOut(
        presenter: (any UserAgentPresenter)?,
        removeTokens: () async throws -> TokenSet?
    ) async throws -> LogoutResult {
        var result = LogoutResult(revocationAttempted: false, endSessionURL: nil, endSessionCompleted: false)
        var metadata: ProviderMetadata?
        do {
            metadata = try await client.metadata()
        } catch {
            result.revocationError = error as? AuthError ?? AuthError(.logoutFailed, "cannot load the metadata")
        }
        // Removed first, under the store's lock: a refresh elsewhere can neither write the set back
        // nor leave a refresh token this logout did not see (and revoke).
        let tokens = try await removeTokens()
        if let metadata, let endpoint = metadata.revocationEndpoint, let tokens {
            result.revocationAttempted = true
            do {
                try tokens.checkIssued(for: "revocation_endpoint", at: endpoint, operation: .logout)
                result.revocationError = await revoke(tokens, at: endpoint, metadata: metadata)
            } catch {
                result.revocationError = error
            }
        }
        client.logger.info(
            "signed out", metadata: ["revoked": "\(result.revocationAttempted && result.revocationError == nil)"])

        guard let metadata else { return result }
        let provider = client.provider
        let state = SecureRandom.token()
        func endSession(returningTo redirect: URL?) -> EndSession? {
            provider.endSession(
                EndSessionParameters(
                    metadata: metadata, idToken: tokens?.idToken, postLogoutRedirectURI: redirect, state: state)
            )
        }
        // Without a presenter, or for a page that does not come back (Cognito's logout_uri), the
        // caller opens the URL; nothing comes back to wait for, so no session (no listener) begins.
        let withoutRedirect = endSession(returningTo: nil)
        guard let presenter, withoutRedirect?.returnsToApp != false else {
            result.endSessionURL = withoutRedirect?.url
            return result
        }
        let session = try await presenter.beginSession()
        guard let page = endSession(returningTo: session.redirectURI) else {
            await session.close()
            return result
        }
        result.endSessionURL = page.url
        guard page.returnsToApp else {
            await session.close()
            return result
        }
        let redirectPath = session.redirectURI.path
        do {
            _ = try await session.authorize(page.url) { received in
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

    /// Revokes the refresh token, then the access token; the first failure, if any.
    private func revoke(_ tokens: TokenSet, at endpoint: URL, metadata: ProviderMetadata) async -> AuthError? {
        var pending: [(String, String)] = []
        if let refreshToken = tokens.refreshToken { pending.append((refreshToken, "refresh_token")) }
        if !tokens.accessToken.isEmpty { pending.append((tokens.accessToken, "access_token")) }
        var failure: AuthError?
        for (token, hint) in pending {
            do {
                try await client.revoke(token, hint: hint, at: endpoint, metadata: metadata)
            } catch let error where error.oauthError == "unsupported_token_type" && hint == "access_token" {
                // RFC 7009 §2.2.1: the server revokes only refresh tokens (Cognito); the access
                // token expires on its own.
                client.logger.debug("the server does not revoke access tokens")
            } catch {
                failure = failure ?? error
            }
        }
        return failure
    }
}
