internal import Foundation

/// A value behind a lock: what every shared mutable state of the package is kept in.
///
/// Not `Synchronization.Mutex`: on Linux that is a futex the ThreadSanitizer cannot see, so each
/// value it guards, read on one thread after another wrote it, is reported as a race (CI saw it
/// on `SingleFlight`'s state and the sandbox's), and a real race would hide among them. `NSLock`
/// is a `pthread_mutex_t` on Linux, whose lock and unlock the sanitizer intercepts; on Darwin it
/// is as cheap as an unfair lock for the few nanoseconds these sections last.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Keeps `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock; `body` must not wait for anything.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
