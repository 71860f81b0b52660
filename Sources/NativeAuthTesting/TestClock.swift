public import Foundation
import NIOConcurrencyHelpers
import NativeAuth

/// A clock that moves only when told: share one between a ``SandboxAuthorizationServer`` and an
/// `Authenticator` to test expiry without waiting.
///
/// ```swift
/// let clock = TestClock()
/// let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true, clock: clock.read))
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore(), clock: clock.read)
/// // … sign in, then:
/// clock.advance(by: .seconds(3601))  // the access token has expired for both sides
/// ```
public final class TestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    /// Creates a clock.
    ///
    /// - Parameter start: The time it shows until it is advanced; default now.
    public init(_ start: Date = Date()) {
        current = NIOLockedValueBox(start)
    }

    /// The time it shows.
    public var now: Date { current.withLockedValue { $0 } }

    /// The clock as a closure, for the `clock:` parameters.
    public var read: @Sendable () -> Date { { [self] in now } }

    /// Moves the clock forward.
    ///
    /// - Parameter duration: How far.
    public func advance(by duration: Duration) {
        current.withLockedValue { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }
}
