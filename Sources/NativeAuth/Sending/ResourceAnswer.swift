internal import Foundation
package import HTTPTypes

/// An API's answer to a request sent with an access token, read once: its `WWW-Authenticate`
/// challenges (RFC 6750 §3, RFC 9449 §7.1, RFC 9470, RFC 9728 §5.1) are parsed here, and every
/// decision about the answer (``ResourceRetry``), the error it becomes and the resource metadata it
/// points to are made from this value, never from the header again.
package struct ResourceAnswer: Sendable, Equatable {
    /// What the answer says.
    package enum Reading: Sendable, Equatable {
        /// The app's answer, whatever its status: nothing here for NativeAuth to act on.
        case done
        /// 401: the access token was refused (expired, revoked, or nothing more was said).
        case tokenRefused
        /// 401 with a `DPoP` challenge refusing the request's proof, not its token:
        /// `use_dpop_nonce` (`nonceAsked`) or `invalid_dpop_proof`.
        case proofRefused(nonceAsked: Bool)
        /// 401 asking for a stronger or more recent sign-in (RFC 9470's
        /// `insufficient_user_authentication`, or a claims challenge).
        case stepUpAsked(LoginOptions)
        /// 403 `insufficient_scope`: the token lacks a scope the request needs.
        case scopeMissing
    }

    /// What the answer says.
    package var reading: Reading
    /// The first `Bearer` or `DPoP` challenge, for the error the answer may become.
    package var challenge: BearerChallenge?
    /// Whether the answer brought a DPoP nonce for the next proof.
    package var gaveNonce: Bool

    /// Reads `response`.
    ///
    /// - Parameter gaveNonce: Whether it brought a well-formed `DPoP-Nonce` (the exchange keeps it).
    package init(_ response: HTTPResponse, gaveNonce: Bool = false) {
        self.gaveNonce = gaveNonce
        let status = response.status.code
        let challenges =
            status == 401 || status == 403
            ? response.headerFields[values: .wwwAuthenticate].flatMap(BearerChallenge.all(in:)) : []
        challenge = challenges.first
        switch status {
        case 401:
            if let proof = challenges.first(where: \.refusesDPoPProof) {
                reading = .proofRefused(nonceAsked: proof.error == "use_dpop_nonce")
            } else if let options = challenge?.stepUp {
                reading = .stepUpAsked(options)
            } else {
                reading = .tokenRefused
            }
        case 403 where challenge?.error == "insufficient_scope":
            reading = .scopeMissing
        default:
            reading = .done
        }
    }

    /// `error`, the mapper's reading of a refusal for want of a scope, carrying the scopes the
    /// challenge names (``AuthError/missingScopes``), unless the mapper said otherwise.
    func carryingNamedScopes(_ error: AuthError) -> AuthError {
        let named = (challenge?.scope ?? "").split(separator: " ").map(String.init)
        guard error.code == .insufficientScope, error.underlying == nil, !named.isEmpty else { return error }
        var error = error
        error.underlying = ScopeChallenge(scopes: named)
        return error
    }

    /// Whether a 401 names the API's protected resource metadata (RFC 9728 §5.1).
    package var pointsToResourceMetadata: Bool {
        reading == .tokenRefused && challenge?.parameters["resource_metadata"] != nil
    }
}

/// What to do after an API's answer: the pure half of sending with an access token, decided from
/// the answer (``ResourceAnswer``) and what was tried already, as ``RefreshDecision`` is for
/// refreshing. ``TokenLifecycle`` carries the steps out.
package enum ResourceRetry: Equatable, Sendable {
    /// The answer is the app's: return it.
    case deliver
    /// Send the request again with a new DPoP proof (with the nonce the answer gave).
    case newProof
    /// Get a new access token (refresh the sign-in's, or another for the resource) and send again.
    case newToken
    /// Follow the API's protected resource metadata and send with a token for that resource.
    case followResourceMetadata
    /// Stop with the error of this failure.
    case fail(Failure)

    /// Why sending stops.
    package enum Failure: Equatable, Sendable {
        /// The token was refused, and a new one (or a new proof) did not help, or cannot be had.
        case tokenRefused
        /// The API asks for a stronger or more recent sign-in: a refresh cannot give one.
        case stepUp(LoginOptions)
        /// The token lacks a scope the request needs.
        case scopeMissing
        /// The server asked for a new DPoP nonce and sent none.
        case nonceMissing
    }

    /// What was tried for one request.
    package struct Attempt: Equatable, Sendable {
        /// Whether the 401s of this request may be followed to the API's resource metadata
        /// (``ProviderConfiguration/followsResourceMetadata``, for the sign-in's own token).
        package var followsResourceMetadata: Bool
        package var newProofSent = false
        package var newTokenSent = false

        package init(followsResourceMetadata: Bool) { self.followsResourceMetadata = followsResourceMetadata }
    }

    /// The step after `answer`, given `attempt`. A new proof and a new token are tried once each,
    /// the resource metadata followed once; a step-up or a missing scope is never retried (a
    /// refresh cannot make a sign-in stronger or wider).
    package static func next(after answer: ResourceAnswer, _ attempt: Attempt) -> ResourceRetry {
        switch answer.reading {
        case .done:
            return .deliver
        case .scopeMissing:
            return .fail(.scopeMissing)
        case .stepUpAsked(let options):
            return .fail(.stepUp(options))
        case .proofRefused(let nonceAsked):
            // A proof refused twice is not mended by a third, nor by a refresh.
            guard !attempt.newProofSent else { return .fail(.tokenRefused) }
            return nonceAsked && !answer.gaveNonce ? .fail(.nonceMissing) : .newProof
        case .tokenRefused:
            if attempt.followsResourceMetadata, answer.pointsToResourceMetadata { return .followResourceMetadata }
            return attempt.newTokenSent ? .fail(.tokenRefused) : .newToken
        }
    }
}
