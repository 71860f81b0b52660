/// Limits and choices for ``JSONValue/parse(_:options:)-(Collection<UInt8>,_)``.
public struct JSONParseOptions: Sendable, Equatable {
    /// What to do with an integer that does not fit in 64 bits.
    public enum BigIntegers: Sendable, Equatable {
        /// Parse the whole document again reading every number as a ``JSONValue/double(_:)``.
        /// Lenient accessors still read integral doubles as integers, so protocol fields keep
        /// working when some unrelated field holds a huge number.
        case readAsDouble
        /// Fail with ``JSONParseError/Reason/numberOutOfRange``.
        case reject
    }

    /// The largest document accepted, in bytes, checked before parsing starts. Default 1 MiB.
    public var maxBytes: Int
    /// The deepest nesting of arrays and objects accepted. Default 64; jansson itself stops at 2048.
    public var maxDepth: Int
    /// Whether an object may repeat a key (the last value wins). Default `false`: a repeated key is
    /// an error, so that two parsers can never read one message two ways.
    public var allowsDuplicateKeys: Bool
    /// What to do with integers beyond 64 bits. Default ``BigIntegers/readAsDouble``.
    public var bigIntegers: BigIntegers

    /// Creates options; every parameter has the documented default.
    public init(
        maxBytes: Int = 1 << 20,
        maxDepth: Int = 64,
        allowsDuplicateKeys: Bool = false,
        bigIntegers: BigIntegers = .readAsDouble
    ) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.allowsDuplicateKeys = allowsDuplicateKeys
        self.bigIntegers = bigIntegers
    }
}
