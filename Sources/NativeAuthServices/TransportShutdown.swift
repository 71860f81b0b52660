public import NativeAuth
public import ServiceLifecycle

/// Shuts a transport's own connection pools down when its service group stops: NativeAuthAsyncHTTPClient's
/// `AsyncHTTPClientTransport` shuts down, and waits for, the AsyncHTTPClient clients it made that
/// no other transport uses (without it they stop a few seconds after the transport is released).
///
/// A group stops its services in reverse order: list this one first, before the services that
/// send through the transport, so that it stops last.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let authenticator = Authenticator(provider: provider, store: store, transport: transport)
/// let group = ServiceGroup(
///     services: [TransportShutdown(transport), TokenRenewal(authenticator: authenticator), api],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// ```
public struct TransportShutdown: Service {
    /// The transport to shut down.
    public let transport: any HTTPTransport

    /// A service that shuts `transport` down (`HTTPTransport.shutdown()`) on graceful shutdown.
    public init(_ transport: any HTTPTransport) {
        self.transport = transport
    }

    /// Waits for the group's graceful shutdown (or cancellation), then shuts the transport down.
    public func run() async throws {
        try? await gracefulShutdown()
        await transport.shutdown()
    }
}
