internal import Foundation
public import Logging
public import NativeAuth
public import ServiceLifecycle

/// A swift-service-lifecycle `Service` that renews the tokens of a sign-in without a person
/// (client credentials, token exchange, a JWT bearer grant, or a refresh token) ahead of their
/// expiry, so that a service's requests never wait on a token request.
///
/// ```swift
/// let group = ServiceGroup(
///     services: [TokenRenewal(authenticator: authenticator), server],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Each renewal is `Authenticator.accessToken(minimumValidity:)`: one token request for every
/// caller and, with a shared store, every process (another instance's renewal is used, not made
/// again). A renewal happens when the access token has ``ahead`` left, or half its lifetime when
/// that is shorter. Requests ask for at least a minute of validity, so with ``ahead`` over a minute
/// (the default is five) they find a valid token and never wait.
///
/// A failure that may pass (a network error, a timeout, a 5xx, a refused refresh whose sign-in
/// another process renewed) is logged and tried again after ``retry``, doubled each time up to
/// ``maximumRetry``, while the token is still valid and after. Any other ends the service with its
/// error (a client whose credentials were revoked: an operator must act). On graceful shutdown, or
/// when its task is cancelled, the service returns.
public struct TokenRenewal: Service {
    /// Whose tokens are renewed.
    public let authenticator: Authenticator
    /// How long before the access token expires it is renewed (five minutes).
    public var ahead: Duration
    /// The first wait after a failure that may pass (one second).
    public var retry: Duration
    /// The longest wait between attempts after failures (one minute).
    public var maximumRetry: Duration
    private let logger: Logger
    private let clock: AuthClock

    /// A service renewing the tokens of `authenticator` `ahead` of their expiry.
    ///
    /// - Parameters:
    ///   - authenticator: Whose tokens are renewed; it must be signed in (``run()`` throws
    ///     `AuthError.Code.loginRequired` otherwise).
    ///   - ahead: How long before expiry to renew.
    ///   - retry: The first wait after a failure.
    ///   - maximumRetry: The longest wait after failures.
    ///   - logger: Where renewals and failures are logged.
    ///   - clock: The time the expiry is read against, and the waits (the authenticator's).
    public init(
        authenticator: Authenticator, ahead: Duration = .seconds(300), retry: Duration = .seconds(1),
        maximumRetry: Duration = .seconds(60), logger: Logger = Logger(label: "NativeAuth"),
        clock: AuthClock = .system
    ) {
        self.clock = clock
        self.authenticator = authenticator
        self.ahead = ahead
        self.retry = retry
        self.maximumRetry = maximumRetry
        self.logger = logger
    }

    /// Renews the tokens until graceful shutdown or cancellation.
    ///
    /// - Throws: `AuthError` when a renewal fails for good (not signed in, credentials refused,
    ///   a configuration error).
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.renewing() }
        } catch is CancellationError {
            return
        } catch let error as AuthError where error.code == .cancelled {
            return  // a renewal in flight when the group stopped
        }
    }

    private func renewing() async throws {
        var wait = retry
        while true {
            guard let tokens = try await authenticator.currentTokens() else {
                throw AuthError(
                    .loginRequired, "there is no sign-in to renew", hint: "sign in before the service starts")
            }
            guard let due = Self.due(tokens, ahead: ahead) else {
                // A token that never expires: nothing to renew, until it changes.
                try await clock.sleep(.seconds(3600))
                continue
            }
            let now = clock.now()
            if due > now {
                try await clock.sleep(.milliseconds(Int64(due.timeIntervalSince(now) * 1000) + 1))
                continue
            }
            let lead = Self.lead(tokens, ahead: ahead)
            do {
                _ = try await authenticator.accessToken(minimumValidity: lead.timeInterval + 1)
                wait = retry
                logger.debug("renewed the tokens ahead of their expiry")
            } catch let error as AuthError where error.isRetryable {
                logger.warning(
                    "the tokens could not be renewed; trying again",
                    metadata: ["error": "\(error)", "in": "\(wait)"])
                try await clock.sleep(wait)
                wait = min(wait * 2, maximumRetry)
            }
        }
    }

    /// When `tokens` are renewed: their access token's expiry less the lead; `nil` for a token
    /// without expiry.
    static func due(_ tokens: TokenSet, ahead: Duration) -> Date? {
        tokens.expiresAt.map { $0.addingTimeInterval(-lead(tokens, ahead: ahead).timeInterval) }
    }

    /// `ahead`, or half the token's lifetime when that is shorter (a renewal must not come due as
    /// soon as it is made).
    static func lead(_ tokens: TokenSet, ahead: Duration) -> Duration {
        guard let expiresAt = tokens.expiresAt else { return ahead }
        let lifetime = max(0, expiresAt.timeIntervalSince(tokens.issuedAt))
        return min(ahead, .milliseconds(Int64(lifetime * 500)))
    }
}
