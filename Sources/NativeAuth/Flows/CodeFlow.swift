internal import Foundation
internal import Logging

/// One sign-in with the authorization code flow and PKCE (RFC 6749 §4.1, RFC 7636, RFC 8252)
/// through a presenter: the authorization request, its callback, the code exchange and the ID
/// token's validation. It returns the tokens; storing them is the caller's part.
package struct CodeFlow: Sendable {
    let client: ExchangeClient

    package init(client: ExchangeClient) {
        self.client = client
    }

    /// Runs the sign-in.
    ///
    /// Loads the metadata, builds the authorization request (PKCE S256, `state`, `nonce` when
    /// `openid` is asked for, the provider's extra parameters), presents it, checks the callback
    /// (`state` in constant time, `error`, RFC 9207 `iss`), exchanges the code, and validates the
    /// ID token, whose claims name the account.
    ///
    /// - Parameters:
    ///   - presenter: How the person gets to the authorization page.
    ///   - scopes: The scopes to ask for.
    /// - Returns: The new tokens.
    package func signIn(presenter: any UserAgentPresenter, scopes: [String]) async throws -> TokenSet {
        let provider = client.provider
        let metadata = try await client.metadata()
        let session = try await presenter.beginSession()
        let extraParameters = provider.authorizationParameters(
            for: AuthorizationRequest.Parameters(scopes: scopes, redirectURI: session.redirectURI)
        )
        let request = AuthorizationRequest(
            metadata: metadata,
            clientID: provider.configuration.clientID,
            redirectURI: session.redirectURI,
            scopes: scopes,
            extraParameters: extraParameters
        )
        client.logger.debug(
            "authorization request ready", metadata: ["redirect_uri": "\(session.redirectURI.absoluteString)"])
        let response: AuthorizationResponse
        do {
            response = try await session.authorize(request.url) { callback in request.disposition(of: callback) }
        } catch {
            await session.close()
            client.logger.info(
                "sign-in did not complete", metadata: ["code": "\((error as? AuthError)?.code.rawValue ?? "error")"])
            throw error
        }
        let grant = Grant.authorizationCode(
            response.code, redirectURI: request.redirectURI, codeVerifier: request.pkce.verifier)
        let tokens = try await client.tokens(for: grant, metadata: metadata, requestedScopes: scopes)
        return try await IDTokenValidator.validated(
            tokens,
            metadata: metadata,
            client: client,
            nonce: request.nonce,
            maxAge: extraParameters.first(named: "max_age").flatMap { Int($0) }
        )
    }
}
