import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth

/// Pushed authorization requests (RFC 9126) at the sandbox: the endpoint that keeps a client's
/// parameters, and the authorization endpoint's reading of a `request_uri`.
extension SandboxCore {
    /// A pushed request, until its `request_uri` is used or expires.
    struct PushedRequest: Sendable {
        var clientID: String
        var parameters: [FormField]
        var expiresAt: Date
    }

    /// `POST /par` (RFC 9126 §2): an authenticated client's authorization parameters, kept for
    /// ``SandboxAuthorizationServer/Configuration/pushedRequestLifetime``; answered 201 with the
    /// `request_uri` and `expires_in`.
    func pushAuthorizationRequest(_ request: TestRequest) -> TestResponse {
        // RFC 9449 §10.1: a proof here binds the code to its key, as `dpop_jkt` would.
        let thumbprint: String?
        switch dpopProof(request, site: .authorizationServer) {
        case .success(let value): thumbprint = value
        case .failure(let refusal): return refusal.response
        }
        if configuration.requiresDPoPAtPushedRequests, thumbprint == nil {
            return oauthError("invalid_dpop_proof", "this client must push its requests with a DPoP proof")
        }
        return authenticated(request) { client in
            var form = request.form
            if let thumbprint {
                if let jkt = form.first(named: "dpop_jkt"), jkt != thumbprint {
                    return oauthError("invalid_dpop_proof", "dpop_jkt is not the thumbprint of the proof's key")
                }
                form = form.filter { $0.name != "dpop_jkt" } + [FormField("dpop_jkt", thumbprint)]
            }
            guard form.first(named: "request_uri") == nil else {
                return oauthError("invalid_request", "a pushed request cannot itself carry a request_uri")
            }
            guard let redirectURI = form.first(named: "redirect_uri"), matches(redirectURI, client.redirectURIs)
            else {
                return oauthError("invalid_request", "the redirect_uri is not registered for this client")
            }
            let uri = "urn:ietf:params:oauth:request_uri:" + SecureRandom.token(bytes: 16)
            let lifetime = configuration.pushedRequestLifetime.timeInterval
            let pushed = PushedRequest(
                clientID: client.id,
                parameters: [FormField("client_id", client.id)]
                    + form.filter {
                        !["client_id", "client_secret", "client_assertion", "client_assertion_type"].contains($0.name)
                    },
                expiresAt: now.addingTimeInterval(lifetime))
            state.withLock { $0.pushedRequests[uri] = pushed }
            var response = json(["request_uri": .string(uri), "expires_in": .integer(Int64(lifetime.rounded()))])
            response.status = 201
            return response
        }
    }

    /// The parameters an authorization request stands for: those of the pushed request its
    /// `request_uri` names (once, while it is good), else its own query; or the answer to give
    /// instead when the reference is unknown or expired, or a push was required and none was made.
    func authorizationParameters(_ request: TestRequest, issuer: String) -> Result<[FormField], Refusal> {
        let query = request.query
        guard let uri = query.first(named: "request_uri") else {
            guard !configuration.requiresPushedAuthorizationRequests else {
                return .failure(
                    Refusal(
                        response: page(
                            status: 400, title: "Pushed requests only",
                            body: "<p>This server takes authorization requests by request_uri only (RFC 9126).</p>")))
            }
            return .success(query)
        }
        let pushed = state.withLock { $0.pushedRequests.removeValue(forKey: uri) }
        guard let pushed, pushed.clientID == query.first(named: "client_id") else {
            return .failure(
                Refusal(
                    response: page(
                        status: 400, title: "Unknown request", body: "<p>The request_uri is unknown or was used.</p>")))
        }
        guard pushed.expiresAt > now else {
            // Its redirect URI was checked when it was pushed: the client hears of the expiry.
            let back = PendingRequest(
                clientID: pushed.clientID, redirectURI: pushed.parameters.first(named: "redirect_uri") ?? "",
                scopes: [], state: pushed.parameters.first(named: "state"), codeChallenge: "")
            return .failure(
                Refusal(
                    response: redirect(
                        back,
                        [
                            FormField("error", "invalid_request_uri"),
                            FormField("error_description", "the pushed authorization request has expired"),
                        ], issuer: issuer)))
        }
        return .success(pushed.parameters)
    }
}
