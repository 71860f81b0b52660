/// A JSON object whose members keep the order in which they were parsed or added.
///
/// Lookup by key is linear for small objects (the common case for protocol messages) and goes
/// through a hash index once an object grows past a few members. Equality ignores member order,
/// as JSON does.
public struct JSONObject: Sendable, Equatable {
    /// One member of an object: a key and its value.
    public struct Member: Sendable, Equatable {
        /// The member's key.
        public var key: String
        /// The member's value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in document order.
    public private(set) var members: [Member] = []
    private var index: [String: Int]?

    private static let indexThreshold = 8

    /// Creates an empty object.
    public init() {}

    /// Creates an object from members in order; a repeated key keeps its first position and its last value.
    public init(_ members: some Sequence<Member>) {
        for member in members { self[member.key] = member.value }
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys, in document order.
    public var keys: [String] { members.map(\.key) }

    /// Whether the object has a member named `key` (even when its value is `null`).
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// The value of member `key`: `nil` when the member is absent, ``JSONValue/null`` when it is
    /// present with the value `null`. Setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let position?, let value?):
                members[position].value = value
            case (nil, let value?):
                members.append(Member(key: key, value: value))
                if index != nil {
                    index?[key] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    rebuildIndex()
                }
            case (let position?, nil):
                members.remove(at: position)
                if index != nil { rebuildIndex() }
            case (nil, nil):
                break
            }
        }
    }

    /// Appends a member without checking for an existing key. Used by the parser, which has already
    /// handled duplicates according to its options.
    mutating func appendUnchecked(key: String, value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    /// Builds the lookup index once all members are in (parser use).
    mutating func finishAppending() {
        if members.count > Self.indexThreshold { rebuildIndex() }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return members.firstIndex { $0.key == key }
    }

    private mutating func rebuildIndex() {
        var built: [String: Int] = [:]
        built.reserveCapacity(members.count)
        for (offset, member) in members.enumerated() { built[member.key] = offset }
        index = built
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }
}

extension JSONObject: Sequence {
    /// Iterates the members in document order.
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { self[key] = value }
    }
}
