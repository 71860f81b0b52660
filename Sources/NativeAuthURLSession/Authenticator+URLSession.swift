public import Logging
public import NativeAuth

extension Authenticator {
    /// Creates an authenticator that sends its requests with a ``URLSessionTransport``.
    ///
    /// - Parameters:
    ///   - provider: The provider, typically from `ProviderRegistry.makeProvider(_:)`.
    ///   - store: Where tokens are kept; its `lock` keeps refreshes apart.
    ///   - account: The account name in the store, for programs with several sign-ins.
    ///   - logger: Where NativeAuth logs; it never bootstraps logging itself.
    ///   - lockTimeout: How long a refresh waits for the store's lock (another process refreshing).
    ///   - clock: The time for token expiry and the waits of the device flow (inject one in tests).
    public convenience init(
        provider: any AuthProvider,
        store: any TokenStore,
        account: String = "default",
        logger: Logger = Logger(label: "NativeAuth"),
        lockTimeout: Duration = .seconds(30),
        clock: AuthClock = .system
    ) {
        self.init(
            provider: provider, store: store, transport: URLSessionTransport(), account: account,
            logger: logger, lockTimeout: lockTimeout, clock: clock)
    }
}
