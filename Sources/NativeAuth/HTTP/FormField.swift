/// One `name=value` pair of an `application/x-www-form-urlencoded` body, in order.
public struct FormField: Sendable, Hashable {
    /// The field's name.
    public var name: String
    /// The field's value.
    public var value: String

    /// Creates a field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Sequence<FormField> {
    /// The value of the first field called `name`, if any.
    public func first(named name: String) -> String? {
        first { $0.name == name }?.value
    }
}
