public import Foundation

/// The time NativeAuth reads and the way it waits: token expiry, device-code polling, and the
/// waits for a token store's lock all go through one clock, so a test can move time instead of
/// waiting for it.
///
/// ```swift
/// let clock = TestClock()                      // NativeAuthTesting: sleeping moves it forward
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore(), clock: clock.clock)
/// clock.advance(by: .seconds(3600))            // the access token has expired
/// ```
///
/// ### Implementation requirements
/// - `now` never goes backwards between two readings of one clock.
/// - `sleep` honours task cancellation by throwing `CancellationError`.
public struct AuthClock: Sendable {
    /// The current time.
    public var now: @Sendable () -> Date
    /// Waits for a duration, or throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates a clock from its two halves.
    ///
    /// - Parameters:
    ///   - now: The current time.
    ///   - sleep: How to wait.
    public init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's time, and `Task.sleep`.
    public static let system = AuthClock(now: { Date() }, sleep: { try await Task.sleep(for: $0) })
}
