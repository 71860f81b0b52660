package import NIOCore
package import NIOHTTP1
internal import NativeAuth

/// Every accepted connection, from the moment NIO creates it until it has been closed through
/// `executeThenClose`. NIO stops the process when a connection is released without that (for
/// example one accepted while the listener closes, which the accept loop never sees), so the
/// registry keeps each one until it is handled, and closes the leftovers itself. Shared with
/// NativeAuthTesting's servers.
///
/// With ``Limits`` it also bounds what one client can hold: each connection is closed when its
/// lifetime is over (a request trickling in byte by byte, or an idle keep-alive socket), and past
/// the connection cap the oldest open connection is closed to make room for the newest.
package final class ConnectionHandlers: Sendable {
    /// An accepted HTTP/1.1 connection.
    package typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// Bounds on the connections of one listener.
    package struct Limits: Sendable {
        /// How long a connection may stay open, from accept to close.
        package var lifetime: TimeAmount
        /// How many connections may be open at once.
        package var maximumConnections: Int

        package init(lifetime: TimeAmount, maximumConnections: Int) {
            self.lifetime = lifetime
            self.maximumConnections = max(1, maximumConnections)
        }
    }

    private struct State {
        var unclaimed: [ObjectIdentifier: Connection] = [:]
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var nextTask: UInt64 = 0
        /// Open connections with the order they were accepted in, when there is a cap.
        var open: [ObjectIdentifier: (order: UInt64, channel: any Channel)] = [:]
        var nextOrder: UInt64 = 0
        /// The addresses of each connection, read when it was accepted: a channel that closed
        /// before its handler ran (a client that sent its request and hung up) no longer knows them.
        var addresses: [ObjectIdentifier: (remote: SocketAddress?, local: SocketAddress?)] = [:]
        var closed = false
    }

    private let state = Locked(State())
    private let limits: Limits?

    /// A registry; `limits` `nil` leaves connections unbounded (test servers under load).
    package init(limits: Limits? = nil) {
        self.limits = limits
    }

    /// Called by the channel initializer (on the channel's event loop) for every accepted connection.
    package func register(_ connection: Connection) {
        let channel = connection.channel
        let id = ObjectIdentifier(channel)
        let (closed, evicted) = state.withLock { state -> (Bool, (any Channel)?) in
            guard !state.closed else { return (true, nil) }
            state.unclaimed[id] = connection
            state.addresses[id] = (channel.remoteAddress, channel.localAddress)
            guard let limits else { return (false, nil) }
            state.open[id] = (state.nextOrder, channel)
            state.nextOrder += 1
            guard state.open.count > limits.maximumConnections,
                let oldest = state.open.min(by: { $0.value.order < $1.value.order })
            else { return (false, nil) }
            state.open.removeValue(forKey: oldest.key)
            return (false, oldest.value.channel)
        }
        if closed {
            Task { _ = try? await connection.executeThenClose { _, _ in } }
            return
        }
        evicted?.close(mode: .all, promise: nil)
        guard let limits else { return }
        let deadline = channel.eventLoop.scheduleTask(in: limits.lifetime) { channel.close(mode: .all, promise: nil) }
        channel.closeFuture.whenComplete { [weak self] _ in
            deadline.cancel()
            _ = self?.state.withLock { $0.open.removeValue(forKey: id) }
        }
    }

    /// Starts handling a connection from the accept loop.
    package func add(_ connection: Connection, _ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.nextTask
            state.nextTask += 1
            // The task cannot finish before it is in the table: it takes the same lock first.
            state.tasks[id] = Task {
                _ = self.state.withLock {
                    $0.unclaimed.removeValue(forKey: ObjectIdentifier(connection.channel))
                }
                await body()
                self.state.withLock {
                    $0.tasks.removeValue(forKey: id)
                    $0.addresses.removeValue(forKey: ObjectIdentifier(connection.channel))
                }
            }
        }
    }

    /// The remote and local addresses of a connection, as they were when it was accepted.
    package func addresses(of connection: Connection) -> (remote: SocketAddress?, local: SocketAddress?) {
        state.withLock { $0.addresses[ObjectIdentifier(connection.channel)] } ?? (nil, nil)
    }

    /// Handlers still running (each removes itself when it is done).
    package var runningHandlers: Int { state.withLock { $0.tasks.count } }

    /// Cancels the handlers, waits for them, and closes every connection nobody handled.
    package func closeAll() async {
        let running = state.withLock { state in
            state.closed = true
            defer { state.tasks.removeAll() }
            return Array(state.tasks.values)
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
        let leftovers = state.withLock { state in
            defer {
                state.unclaimed.removeAll()
                state.addresses.removeAll()
            }
            return Array(state.unclaimed.values)
        }
        for connection in leftovers { _ = try? await connection.executeThenClose { _, _ in } }
    }
}
