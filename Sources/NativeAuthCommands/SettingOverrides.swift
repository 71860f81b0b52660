public import Foundation
public import NativeAuth

/// Settings a command sets or clears over every layer below it (flags, environment, configuration
/// file, profile): what ``CommandOptions/makeAuthenticator(settings:)`` takes.
///
/// ```swift
/// var settings = SettingOverrides()
/// settings.set(.issuer, to: issuer)
/// settings.clear(Setting.clientSecret.declaration)   // no layer below gives it
/// let authenticator = try await options.makeAuthenticator(settings: settings)
/// ```
///
/// Each value is set by its declaration's type; a text is checked by the declaration's parse where
/// it is given (``set(_:text:)``).
public struct SettingOverrides: Sendable, Equatable {
    /// What happens to one key.
    enum Change: Sendable, Equatable {
        /// This text, as the declaration parses it.
        case set(String)
        /// No value, whatever a layer below gives.
        case clear
    }

    /// The changes by key.
    private(set) var changes: [String: Change] = [:]

    /// No change.
    public init() {}

    /// Whether nothing is set or cleared.
    public var isEmpty: Bool { changes.isEmpty }

    /// Sets `setting` to `text`, refused now when its declaration's parse refuses it.
    ///
    /// - Throws: `AuthError` (`configuration_invalid`, its `field` the key).
    public mutating func set<Value>(_ setting: Setting<Value>, text: String) throws(AuthError) {
        _ = try setting.parse(text)
        changes[setting.key] = .set(text)
    }

    /// Sets a text setting.
    public mutating func set(_ setting: Setting<String>, to value: String) {
        changes[setting.key] = .set(value)
    }

    /// Sets a URL setting.
    public mutating func set(_ setting: Setting<URL>, to value: URL) {
        changes[setting.key] = .set(value.absoluteString)
    }

    /// Sets a list of URLs (resources).
    public mutating func set(_ setting: Setting<[URL]>, to value: [URL]) {
        changes[setting.key] = .set(value.map(\.absoluteString).joined(separator: " "))
    }

    /// Sets a switch.
    public mutating func set(_ setting: Setting<Bool>, to value: Bool) {
        changes[setting.key] = .set(value ? "true" : "false")
    }

    /// Sets a list of words (scopes).
    public mutating func set(_ setting: Setting<[String]>, to value: [String]) {
        changes[setting.key] = .set(value.joined(separator: " "))
    }

    /// Sets a choice among a type's raw values.
    public mutating func set<Value: RawRepresentable>(_ setting: Setting<Value>, to value: Value)
    where Value.RawValue == String {
        changes[setting.key] = .set(value.rawValue)
    }

    /// Clears `setting`: no layer below gives it a value.
    public mutating func clear(_ setting: ProviderSetting) {
        changes[setting.key] = .clear
    }

    /// Whether `setting` is set or cleared here.
    public func changes(_ setting: ProviderSetting) -> Bool { changes[setting.key] != nil }
}
