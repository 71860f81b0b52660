public import Foundation
internal import LenientJSON
internal import Logging

/// What ``Authenticator/logout(presenter:endingSessionWhenSignedOut:)`` did.
public struct LogoutResult: Sendable {
    /// Whether tokens were stored, and so removed; `false` when there was nothing to sign out.
    public var removedTokens = false
    /// Whether a revocation endpoint was there to call.
    public var revocationAttempted: Bool
    /// Why revocation failed, when it did; the tokens were removed from the store all the same.
    public var revocationError: AuthError?
    /// Why the tokens were not revoked although the server has a revocation endpoint: its
    /// `revocation_endpoint_auth_methods_supported` leaves out the client authentication this
    /// client uses (a public client, where the server revokes only for confidential ones).
    public var revocationSkipped: String?
    /// The end-session URL, when the provider has one; `nil` when it has none.
    public var endSessionURL: URL?
    /// Whether the presenter completed the end-session round trip (the post-logout redirect came
    /// back with our `state`).
    public var endSessionCompleted: Bool
    /// Whether the provider's end-session page was opened but did not send the browser back before
    /// the presenter's timeout: an error page, or a page of its own. The sign-out itself is done
    /// (the tokens are removed, and revoked where the server allows it).
    public var endSessionTimedOut = false
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
    /// 1. Calls `removeTokens`, always, which returns the set it removed. When it removed nothing,
    ///    the sign-out ends there (nothing is sent, no page is opened) unless
    ///    `endingSessionWhenSignedOut`.
    /// 2. With a revocation endpoint (metadata or override) that takes this client's
    ///    authentication, revokes that set's refresh token, then its access token. A failure is
    ///    reported in the result, not thrown.
    /// 3. Asks the provider for its end-session page (``AuthProvider/endSession(_:)``). A page that
    ///    returns to the app is opened with the presenter, which waits for the redirect with our
    ///    `state`; any other page, or any page without a presenter, is returned for the caller. A
    ///    page that does not come back before the presenter's timeout ends the wait
    ///    (``LogoutResult/endSessionTimedOut``), not the sign-out.
    package func signOut(
        presenter: (any UserAgentPresenter)?,
        endingSessionWhenSignedOut: Bool = false,
        removeTokens: () async throws -> TokenSet?
    ) async throws -> LogoutResult {
        var result = LogoutResult(revocationAttempted: false, endSessionURL: nil, endSessionCompleted: false)
        // Removed first, under the store's lock: a refresh elsewhere can neither write the set back
        // nor leave a refresh token this logout did not see (and revoke).
        let tokens = try await removeTokens()
        result.removedTokens = tokens != nil
        // Nothing stored: no token to revoke, no ID token to hint with; a logout page opened now
        // would wait out its timeout for a person who is not signing out of anything.
        if tokens == nil, !endingSessionWhenSignedOut { return result }
        var metadata: ProviderMetadata?
        do {
            metadata = try await client.metadata()
        } catch {
            // Asked only to end the provider's session: without its metadata there is no page.
            guard tokens != nil else { throw error }
            result.revocationError = error as? AuthError ?? AuthError(.logoutFailed, "cannot load the metadata")
        }
        if let metadata, let endpoint = metadata.revocationEndpoint, let tokens {
            if let reason = revocationRefusal(metadata) {
                result.revocationSkipped = reason
                client.logger.info("not revoking", metadata: ["reason": "\(reason)"])
            } else {
                result.revocationAttempted = true
                do {
                    try tokens.checkIssued(for: "revocation_endpoint", at: endpoint, operation: .logout)
                    result.revocationError = await revoke(tokens, at: endpoint, metadata: metadata)
                } catch {
                    result.revocationError = error
                }
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
            _ = try await session.authorize(page.url) { received -> CallbackDisposition<EndSessionReturn> in
                guard case .redirect(let callback) = received else { return .ignore }
                let returned = AuthorizationRequest.query(of: callback).filter { $0.name == "state" }
                guard callback.path == redirectPath, returned.count == 1, let value = returned.first?.value,
                    ConstantTime.equals(value, state)
                else { return .ignore }
                return .complete(.success(EndSessionReturn(redirect: callback)))
            }
        } catch let error as AuthError where error.code == .timeout {
            // The tokens are gone, which is the sign-out; the provider's page (an error page for a
            // POST it refuses, a page of its own) only failed to come back.
            client.logger.info("the provider's logout page did not send the browser back")
            result.endSessionTimedOut = true
            return result
        }
        result.endSessionCompleted = true
        return result
    }

    /// Why the revocation endpoint would refuse this client, from the metadata's
    /// `revocation_endpoint_auth_methods_supported` (RFC 8414 §2); `nil` when it does not say, or
    /// takes the authentication the client uses at the token endpoint.
    private func revocationRefusal(_ metadata: ProviderMetadata) -> String? {
        guard let methods = (try? metadata.document.stringList("revocation_endpoint_auth_methods_supported")) ?? nil,
            !methods.isEmpty
        else { return nil }
        let method = ClientAuthentication.standard(for: client.provider.configuration, metadata: metadata)
        guard !methods.contains(method.rawValue) else { return nil }
        let client = method == .none ? "this client is public (no secret)" : "this client uses \(method.rawValue)"
        return "the server revokes tokens only for clients that authenticate with "
            + methods.joined(separator: ", ") + ", and " + client
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
