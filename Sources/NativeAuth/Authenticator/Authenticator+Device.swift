internal import Foundation
internal import LenientJSON
internal import Logging

extension Authenticator {
    /// Signs in with the device authorization grant (RFC 8628): for machines where the person
    /// cannot use a browser, or would rather approve on their phone.
    ///
    /// Asks the device authorization endpoint (from the metadata, or the configuration's
    /// `device_authorization_endpoint` override) for a code, shows it through `display`, then polls
    /// the token endpoint:
    /// - every `interval` seconds (5 when the server does not say);
    /// - `authorization_pending`: polls on;
    /// - `slow_down`: adds 5 seconds to the interval, or takes the server's new `interval` when the
    ///   answer carries one; HTTP 429 is treated the same way;
    /// - network trouble and 5xx: polls on with a doubled interval (RFC 8628 §3.5);
    /// - `access_denied`: ``AuthError/Code/authorizationFailed``;
    /// - `expired_token`, or `expires_in` running out: ``AuthError/Code/timeout``;
    /// - cancelling the task: ``AuthError/Code/loginCancelled`` at once.
    ///
    /// The tokens are stored like those of any sign-in.
    ///
    /// - Parameters:
    ///   - display: Shows the code and the page; default: ``TerminalDeviceCodeDisplay`` on standard error.
    ///   - scopes: The scopes to ask for; default: the configuration's.
    ///   - sleep: How to wait between polls; inject one in tests (the expiry is measured with the
    ///     authenticator's clock).
    /// - Returns: The new tokens.
    /// - Throws: ``AuthError``; nothing is stored unless the sign-in succeeded.
    @discardableResult
    public func loginWithDevice(
        display: any DeviceCodeDisplay = TerminalDeviceCodeDisplay(),
        scopes: [String]? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) async throws -> TokenSet {
        let metadata = try await metadata()
        let scopes = scopes ?? provider.configuration.scopes
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            throw AuthError(
                .configurationInvalid,
                "the provider's metadata names no device authorization endpoint",
                hint: "set it with --device-endpoint, or \"device_authorization_endpoint\" in the config file",
                operation: .deviceAuthorization
            )
        }
        var request = TokenRequest(
            url: endpoint,
            operation: .deviceAuthorization,
            form: scopes.isEmpty ? [] : [FormField("scope", scopes.joined(separator: " "))]
        )
        provider.prepareTokenRequest(&request, metadata: metadata)
        let (httpRequest, body) = request.httpRequest()
        let (response, data) = try await sendMapped(httpRequest, body: body, operation: .deviceAuthorization)
        let authorization: DeviceAuthorization
        do {
            authorization = try provider.decodeDeviceAuthorizationResponse(response, body: data)
        } catch {
            throw provider.errorMapper.mapWithFallback(AuthFailure(operation: .deviceAuthorization, underlying: error))
        }
        logger.debug(
            "device authorization started",
            metadata: ["expires_in": "\(authorization.expiresIn)", "interval": "\(authorization.interval)"]
        )
        await display.show(authorization)
        let tokens = try await pollForDeviceTokens(authorization, metadata: metadata, scopes: scopes, sleep: sleep)
        try await validateIDToken(of: tokens, metadata: metadata, nonce: nil, maxAge: nil)
        try await mapStoreErrors { try await store.save(tokens, for: key) }
        cached = tokens
        logger.info("signed in with a device code", metadata: ["subject": "\(tokens.subject ?? "unknown")"])
        return tokens
    }

    private func pollForDeviceTokens(
        _ authorization: DeviceAuthorization,
        metadata: ProviderMetadata,
        scopes: [String],
        sleep: @Sendable (Duration) async throws -> Void
    ) async throws -> TokenSet {
        let deadline = now().addingTimeInterval(TimeInterval(authorization.expiresIn))
        var interval = Self.pollingInterval(authorization.interval)
        var polls = 0
        while true {
            guard now().addingTimeInterval(TimeInterval(interval)) <= deadline else {
                throw AuthError(
                    .timeout,
                    "the device code expired after \(authorization.expiresIn) seconds without approval",
                    hint: "sign in again, and approve on the page within the time shown",
                    operation: .tokenExchange
                )
            }
            do {
                try await sleep(.seconds(interval))
                try Task.checkCancellation()
            } catch {
                throw AuthError(.loginCancelled, "sign-in was cancelled", operation: .tokenExchange)
            }
            polls += 1
            var request = TokenRequest(
                url: metadata.tokenEndpoint,
                operation: .tokenExchange,
                form: [
                    FormField("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    FormField("device_code", authorization.deviceCode),
                ]
            )
            provider.prepareTokenRequest(&request, metadata: metadata)
            let (httpRequest, body) = request.httpRequest()
            var answer = Data()
            do {
                let (response, data) = try await sendMapped(httpRequest, body: body, operation: .tokenExchange)
                answer = data
                let context = TokenResponseDecoder.Context(
                    operation: .tokenExchange,
                    requestedScopes: scopes,
                    receivedAt: now()
                )
                let tokens = try provider.decodeTokenResponse(response, body: data, context: context)
                logger.debug("device code approved", metadata: ["polls": "\(polls)"])
                return tokens
            } catch {
                if Task.isCancelled {
                    throw AuthError(.loginCancelled, "sign-in was cancelled", operation: .tokenExchange)
                }
                guard let error = error as? AuthError else { throw error }
                switch error.oauthError {
                case "authorization_pending":
                    continue
                case "slow_down":
                    interval = Self.pollingInterval(Self.serverInterval(in: answer) ?? interval + 5)
                    logger.debug("the server asks to poll more slowly", metadata: ["interval": "\(interval)"])
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
                        logger.debug("polling failed, retrying", metadata: ["code": "\(error.code.rawValue)"])
                    } else {
                        throw error
                    }
                }
            }
        }
    }

    /// The longest wait between two polls: 10 minutes, whatever a server says (a huge `interval`
    /// would otherwise overflow the back-off arithmetic).
    static let longestPollingInterval = 600

    /// `seconds` between 1 and ``longestPollingInterval``.
    static func pollingInterval(_ seconds: Int) -> Int {
        min(max(1, seconds), longestPollingInterval)
    }

    /// The `interval` of a `slow_down` answer (JSON, or a form body), when it has one.
    static func serverInterval(in body: Data) -> Int? {
        if let object = try? JSONValue.parse(body).objectValue, let value = try? object.integer("interval") {
            return Int(clamping: value)
        }
        let fields = FormURLEncoding.decode(String(decoding: body, as: UTF8.self))
        return fields.first(named: "interval").flatMap { Int($0) }
    }
}
