public import Foundation
public import NativeAuth

/// A clock that moves only when told, or when the code under test sleeps: share one between a
/// ``SandboxAuthorizationServer`` and an `Authenticator` to test expiry and polling without waiting.
///
/// ```swift
/// let clock = TestClock()
/// let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true, clock: clock.clock), mode: .live)
/// let auth = Authenticator(provider: provider, store: MemoryTokenStore(), clock: clock.clock)
/// // … sign in, then:
/// clock.advance(by: .seconds(3601))  // the access token has expired for both sides
/// ```
///
/// Sleeping on ``clock`` moves the time forward by the duration at once and records it
/// (``sleeps``): a device-flow sign-in polls through its whole schedule in no real time. A
/// cancelled task's sleep throws `CancellationError`, like `Task.sleep`.
public final class TestClock: Sendable {
    private let state: Locked<(now: Date, sleeps: [Duration])>

    /// Creates a clock.
    ///
    /// - Parameter start: The time it shows until it is advanced; default now.
    public init(_ start: Date = Date()) {
        state = Locked((start, []))
    }

    /// The time it shows.
    public var now: Date { state.withLock { $0.now } }

    /// Every sleep asked of ``clock`` so far, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// The clock to inject (`Authenticator`, the sandbox, the stores' locks).
    public var clock: AuthClock {
        AuthClock(
            now: { [self] in now },
            sleep: { [self] duration in
                try Task.checkCancellation()
                state.withLock { state in
                    state.sleeps.append(duration)
                    state.now = state.now.addingTimeInterval(duration.timeInterval)
                }
                await Task.yield()
            }
        )
    }

    /// Moves the clock forward.
    ///
    /// - Parameter duration: How far.
    public func advance(by duration: Duration) {
        state.withLock { $0.now = $0.now.addingTimeInterval(duration.timeInterval) }
    }
}
