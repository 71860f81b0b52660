// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    internal import Crypto
    internal import Foundation
    internal import LenientJSON
    internal import Logging
    internal import NativeAuth
    internal import PostgresNIO
    internal import ServiceLifecycle

    // Listening for other instances' writes (LISTEN/NOTIFY), so that the copies in memory stay true.
    extension PostgresTokenStore {
        /// Listens for other instances' saves and removals until the task is cancelled or, in a
        /// swift-service-lifecycle `ServiceGroup`, until graceful shutdown, reconnecting after a lost
        /// connection; while it listens, revisions come from memory.
        ///
        /// Run it beside the `PostgresClient`: both are `Service`s of the same group (the store after
        /// the client, so that it shuts down first), or `client.run()` beside it in a task group.
        /// Without it the store still works, with one small read per use.
        public func run() async {
            await cancelWhenGracefulShutdown { await self.listen() }
        }

        func listen() async {
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    let channel = try await notificationChannel()
                    try await client.withConnection { connection in
                        try await connection.listen(on: channel) { notifications in
                            self.cache.withLock { cache in
                                cache.listening = true
                                cache.epoch += 1
                                cache.generations = [:]
                                cache.hints = [:]
                            }
                            self.logger.debug("listening for token changes")
                            delay = .milliseconds(100)
                            for try await notification in notifications {
                                self.received(notification.payload)
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    // A client shut down under the listener is an application ending (it cancels both
                    // tasks, in any order): not worth a warning.
                    logger.log(
                        level: Self.clientShutDown(error) ? .debug : .warning,
                        "not listening for token changes; each use reads from the database until the listener is back",
                        metadata: ["error": "\(Self.describe(error))"]
                    )
                }
                stopListening()
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
            stopListening()
        }

        /// Whether `error` says the client itself closed the connection or was shut down.
        static func clientShutDown(_ error: any Error) -> Bool {
            guard let error = error as? PSQLError else { return String(reflecting: error).contains("poolShutdown") }
            return error.code == .clientClosedConnection || error.code == .poolClosed
        }

        func stopListening() {
            cache.withLock { cache in
                cache.listening = false
                cache.epoch += 1
                cache.generations = [:]
                cache.hints = [:]
            }
        }

        /// A notification's payload: `LOCKID:GENERATION`. It is a hint, never a generation to trust:
        /// any session that knows the channel can send one. One that says nothing newer than what this
        /// store knows (its own writes' echoes) is dropped; any other makes the next use read the row's
        /// generation from the table. A forged generation then costs a read, and never hides a change.
        func received(_ payload: String) {
            let parts = payload.split(separator: ":")
            guard parts.count == 2, let lockID = Int64(parts[0]), let generation = Int64(parts[1]) else {
                logger.warning("ignored a malformed token change notification")
                return
            }
            cache.withLock { cache in
                cache.statistics.notifications += 1
                guard cache.listening else { return }
                if let known = cache.generations[lockID], generation <= known { return }
                cache.generations[lockID] = nil
                // A read of the row is kept only if it shows at least this generation (see revision(of:)).
                cache.hints[lockID] = max(cache.hints[lockID] ?? generation, generation)
            }
        }

        func wrote(_ lockID: Int64, generation: Int64?) {
            cache.withLock { cache in
                cache.statistics.databaseWrites += 1
                cache.reads[lockID] = nil  // a read that began before this write is not shared after it
                guard let generation, cache.listening else { return }
                // A notification of a later change (or a forged one) waits for a read to bear it out.
                if let hint = cache.hints[lockID] {
                    guard hint <= generation else { return }
                    cache.hints[lockID] = nil
                }
                cache.generations[lockID] = max(cache.generations[lockID] ?? generation, generation)
            }
        }

        func count(_ change: (inout Statistics) -> Void) {
            cache.withLock { change(&$0.statistics) }
        }
    }
#endif
