package import Foundation

extension Duration {
    /// The duration in seconds, as Foundation counts them (shared with NativeAuthTesting and the samples).
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    package var seconds: String {
        let value = timeInterval
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The duration in whole milliseconds.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
