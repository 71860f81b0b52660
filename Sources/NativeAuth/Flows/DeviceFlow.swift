internal import Foundation
internal import LenientJSON
internal import Logging

/// One sign-in with the device authorization grant (RFC 8628): a code for the person to enter on
/// another device, then polling the token endpoint until they approve. It returns the tokens;
/// storing them is the caller's part.
///
/// Polling follows RFC 8628 §3.4–3.5:
/// - every `interval` seconds (5 when the server does not say), at most 10 minutes;
/// - `authorization_pending`: polls on;
/// - `slow_down`: adds 5 seconds to the interval, or takes the server's new `interval` when the
///   answer carries one; HTTP 429 is treated the same way;
/// - network trouble and 5xx: polls on with a doubled interval;
/// - `access_denied`: ``AuthError/Code/authorizationFailed``;
/// - `expired_token`, or `expires_in` running out (at most 30 minutes, whatever a server says):
///   ``AuthError/Code/timeout``;
/// - cancelling the task: ``AuthError/Code/loginCancelled`` at once.
///
/// Time is the client's ``AuthClock``: the waits between polls and the code's expiry.
package struct DeviceFlow: Sendable {
    let client: ExchangeClient

    package init(client: ExchangeClient) {
        self.client = client
    }

    /// Runs the sign-in: asks for a code, shows it through `display`, and polls.
    package func signIn(display: any DeviceCodeDisplay, scopes: [String]) async throws -> NewSignIn {
        let metadata = try await client.metadata()
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            throw AuthError(
                .configurationInvalid,
                "the provider's metadata names no device authorization endpoint",
                hint: "set the endpoint as \"device_authorization_endpoint\" in the configuration",
                operation: .deviceAuthorization,
                field: Setting.deviceAuthorizationEndpoint.key
            )
        }
        let dpop = try client.newDPoPKey(metadata)
        let authorization = try await client.deviceAuthorization(at: endpoint, scopes: scopes, metadata: metadata)
        client.logger.debug(
            "device authorization started",
            metadata: ["expires_in": "\(authorization.expiresIn)", "interval": "\(authorization.interval)"]
        )
        await display.show(authorization)
        let tokens = try await poll(authorization, metadata: metadata, scopes: scopes, dpop: dpop)
        let (verified, claims) = try await IDTokenValidator.verified(
            tokens, metadata: metadata, client: client, nonce: nil)
        return NewSignIn(verified, claims: claims)
    }

    private func poll(
        _ authorization: DeviceAuthorization,
        metadata: ProviderMetadata,
        scopes: [String],
        dpop: DPoPKey?
    ) async throws -> TokenSet {
        let clock = client.clock
        // A server's `expires_in` of days would keep polling (and a terminal waiting) for days.
        let lifetime = min(max(0, authorization.expiresIn), Self.longestWait)
        let deadline = clock.now().addingTimeInterval(TimeInterval(lifetime))
        var interval = Self.pollingInterval(authorization.interval)
        var polls = 0
        while true {
            guard clock.now().addingTimeInterval(TimeInterval(interval)) <= deadline else {
                throw AuthError(
                    .timeout,
                    "the device code was not approved within \(lifetime) seconds",
                    hint: "sign in again, and approve on the page within the time shown",
                    operation: .tokenExchange
                )
            }
            do {
                try await clock.sleep(.seconds(interval))
                try Task.checkCancellation()
            } catch {
                throw Self.cancelled
            }
            polls += 1
            let grant = Grant.deviceCode(authorization.deviceCode)
            let refusal: ExchangeClient.Refusal
            switch await client.redeem(grant, metadata: metadata, requestedScopes: scopes, dpop: dpop) {
            case .success(let tokens):
                client.logger.debug("device code approved", metadata: ["polls": "\(polls)"])
                return tokens
            case .failure(let failure):
                refusal = failure
            }
            if Task.isCancelled { throw Self.cancelled }
            let error = refusal.error
            switch error.oauthError {
            case "authorization_pending":
                continue
            case "slow_down":
                let asked = (try? refusal.object?.integer("interval")).flatMap { $0 }.map { Int(clamping: $0) }
                interval = Self.pollingInterval(asked ?? interval + 5)
                client.logger.debug("the server asks to poll more slowly", metadata: ["interval": "\(interval)"])
            case "access_denied":
                throw AuthError(
                    .authorizationFailed,
                    "access was denied on the verification page",
                    hint: "sign in again and approve the request",
                    operation: .tokenExchange,
                    status: error.status,
                    oauthError: error.oauthError,
                    oauthErrorDescription: error.oauthErrorDescription
                )
            case "expired_token":
                throw AuthError(
                    .timeout,
                    "the device code expired before the sign-in was approved",
                    hint: "sign in again, and approve on the page within the time shown",
                    operation: .tokenExchange,
                    status: error.status,
                    oauthError: error.oauthError,
                    oauthErrorDescription: error.oauthErrorDescription
                )
            default:
                if error.code == .rateLimited {
                    interval = Self.pollingInterval(interval + 5)
                } else if error.isRetryable {
                    interval = min(interval * 2, 60)  // RFC 8628 §3.5: back off, then poll on
                    client.logger.debug("polling failed, retrying", metadata: ["code": "\(error.code.rawValue)"])
                } else {
                    throw error
                }
            }
        }
    }

    private static let cancelled = AuthError(.loginCancelled, "sign-in was cancelled", operation: .tokenExchange)

    /// The longest a device sign-in waits for approval: 30 minutes.
    static let longestWait = 1800

    /// The longest wait between two polls: 10 minutes, whatever a server says (a huge `interval`
    /// would otherwise overflow the back-off arithmetic).
    static let longestPollingInterval = 600

    /// `seconds` between 1 and ``longestPollingInterval``.
    static func pollingInterval(_ seconds: Int) -> Int {
        min(max(1, seconds), longestPollingInterval)
    }
}
