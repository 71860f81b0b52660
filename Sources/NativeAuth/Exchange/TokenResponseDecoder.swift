package import Foundation
package import LenientJSON

/// Reads the fields of a successful token response (RFC 6749 §5.1) into a ``TokenSet``.
///
/// The envelope (the HTTP status, the body's encoding, an `error` member, where the fields sit) is
/// read by ``ExchangeClient`` with the provider's hooks; this is only the last step.
package enum TokenResponseDecoder {
    /// What the decoder needs besides the fields.
    package struct Context: Sendable {
        /// The scopes asked for: the granted scopes when the response has no `scope` (§5.1).
        package var requestedScopes: [String]
        /// When the response arrived; `expires_in` counts from here.
        package var receivedAt: Date
        /// The tokens being refreshed, if any: their refresh token, ID token and account are kept
        /// when the response has none of its own.
        package var previous: TokenSet?

        package init(requestedScopes: [String], receivedAt: Date, previous: TokenSet? = nil) {
            self.requestedScopes = requestedScopes
            self.receivedAt = receivedAt
            self.previous = previous
        }
    }

    /// The longest `expires_in` taken as given: 100 years. A larger one (a server's bug, or
    /// `9223372036854775807`) is read as this, so that the expiry stays a date that can be stored
    /// and shown.
    package static let longestLifetime: Int64 = 100 * 365 * 24 * 3600

    /// Builds a token set from the fields of a successful response.
    ///
    /// - `access_token` is required; `token_type` defaults to `Bearer`.
    /// - `expires_in` may be a number or a numeric string; it becomes an absolute ``TokenSet/expiresAt``
    ///   (at most 100 years away).
    /// - `scope` may be space- or comma-separated, or an array; absent means the requested scopes.
    /// - Without `refresh_token`, the previous refresh token is kept (refresh responses of Cognito
    ///   and others), with its expiry; without `id_token`, the previous ID token.
    /// - `refresh_token_expires_in` (GitHub) or `refresh_expires_in` (Keycloak) becomes
    ///   ``TokenSet/refreshExpiresAt``; 0 (Keycloak's offline tokens) means the server set none.
    /// - ``TokenSet/subject`` and ``TokenSet/displayName`` are the previous set's: the flows set
    ///   them from the claims of a validated ID token, never from an unverified one.
    package static func decode(_ object: JSONObject, context: Context) throws(JSONFieldError) -> TokenSet {
        let accessToken = try object.requiredString("access_token")
        var expiresAt: Date?
        if let expiresIn = try object.integer("expires_in") {
            let seconds = min(max(0, expiresIn), Self.longestLifetime)
            expiresAt = context.receivedAt.addingTimeInterval(TimeInterval(seconds))
        }
        let previous = context.previous
        let newRefreshToken = try object.string("refresh_token")
        var refreshExpiresAt = newRefreshToken == nil ? previous?.refreshExpiresAt : nil
        var refreshExpiresIn = try object.integer("refresh_token_expires_in")
        if refreshExpiresIn == nil { refreshExpiresIn = try object.integer("refresh_expires_in") }
        if let refreshExpiresIn, refreshExpiresIn > 0 {
            let seconds = min(refreshExpiresIn, Self.longestLifetime)
            refreshExpiresAt = context.receivedAt.addingTimeInterval(TimeInterval(seconds))
        }
        return TokenSet(
            accessToken: accessToken,
            tokenType: try object.string("token_type") ?? "Bearer",
            refreshToken: newRefreshToken ?? previous?.refreshToken,
            idToken: try object.string("id_token") ?? previous?.idToken,
            scopes: try object.stringList("scope") ?? context.requestedScopes,
            expiresAt: expiresAt,
            issuedAt: context.receivedAt,
            subject: previous?.subject,
            displayName: previous?.displayName,
            endpoints: previous?.endpoints ?? [:],
            refreshExpiresAt: refreshExpiresAt
        )
    }
}
