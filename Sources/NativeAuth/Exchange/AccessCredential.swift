internal import Foundation

/// What a request with an access token is sent with: the token, and what it is bound to (a DPoP
/// key, RFC 9449; a TLS client certificate, RFC 8705).
package struct AccessCredential: Sendable {
    /// The access token. A secret.
    package var accessToken: String
    /// The key its proofs are signed with, when the token is DPoP-bound; `nil` for a bearer token.
    package var dpopKey: DPoPKey?
    /// Whether the token is DPoP-bound (its type is `DPoP`), with or without its key at hand.
    package var isDPoPBound: Bool
    /// The thumbprint of the client certificate it is bound to, if any.
    package var certificateThumbprint: String?
    /// Whether its proofs come from a ``TokenSource`` (a token agent holds the key).
    package var provesThroughSource = false

    /// The credential of a sign-in's access token.
    package init(_ tokens: TokenSet) {
        accessToken = tokens.accessToken
        isDPoPBound = tokens.isDPoPBound
        dpopKey = isDPoPBound ? tokens.dpopKey : nil
        certificateThumbprint = tokens.certificateThumbprint
    }

    /// The credential of a resource's token, got under a sign-in whose DPoP key is `key`.
    package init(_ token: ResourceToken, key: DPoPKey?) {
        accessToken = token.accessToken
        isDPoPBound = token.isDPoPBound
        dpopKey = isDPoPBound ? key : nil
        certificateThumbprint = token.certificateThumbprint
    }
}
