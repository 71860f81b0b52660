public import Foundation
package import LenientJSON

/// A configuration key, declared once: its name in a configuration file, what it is for, how it
/// is given, and (in its typed form, ``Setting``) how its text becomes a value.
///
/// Everything else derives from the declaration: ``ProviderConfiguration`` reads the core's own
/// settings (``standard``) and a provider module's (``AuthProvider/settings``) through it, from a
/// JSON object or from swift-configuration's `ConfigReader`; NativeAuthCommands turns every
/// declaration into an option of the commands that take its ``group`` (`--user-pool-id`), an
/// environment variable (``environmentVariable``: `NATIVEAUTH_USER_POOL_ID`), and the hint of any
/// ``AuthError`` whose ``AuthError/field`` names it. An app with its own words renders the
/// ``key`` its own way.
///
/// A provider declares a plain text setting with ``init(_:help:valueName:)``, or a typed one as a
/// ``Setting`` (its ``Setting/declaration`` goes in the list):
///
/// ```swift
/// extension ProviderSetting {
///     static let tenant = ProviderSetting("tenant", help: "The Acme tenant, like main.")
/// }
/// struct AcmeProvider: AuthProvider {
///     static let settings: [ProviderSetting] = [.tenant]
///     …
///     init(configuration: ProviderConfiguration) throws {
///         tenant = try configuration.value(of: .tenant) ?? "main"
///     }
/// }
/// ```
public struct ProviderSetting: Sendable, Hashable, CustomStringConvertible {
    /// How a value is given: one text, several, or a switch.
    public enum Form: Sendable, Hashable {
        /// One text (`--issuer URL`, `"issuer": "…"`).
        case value
        /// Several texts: the option is repeated, a file holds an array or space-separated text.
        case list
        /// On or off: a flag without a value (`--register-client`), `true` or `false` in a file.
        case flag
    }

    /// The key in a configuration file, snake_case: `user_pool_id`.
    public let key: String
    /// One sentence for people: what the value is, with an example or the default.
    public let help: String
    /// A short name for the value in help (`url`, `file`); `nil` for the key's own.
    public let valueName: String?
    /// How a value is given.
    public let form: Form
    /// What the setting is about, and so which commands of a tool take it.
    public let group: SettingGroup
    /// Whether the value names a file: a command line makes it absolute, so that a tool run later
    /// from elsewhere finds the same file.
    public let isPath: Bool
    /// Whether the value is a secret: never printed, never carried into another program's
    /// command line, redacted by configuration readers.
    public let isSecret: Bool
    /// The typed parse, its value dropped: so that a value is refused where it is given (`profile
    /// add`), not only where it is used.
    private let check: @Sendable (String) throws(AuthError) -> Void

    /// Declares a text setting of a provider module.
    ///
    /// - Parameters:
    ///   - key: The snake_case key (letters, digits and `_`).
    ///   - help: What the value is.
    ///   - valueName: A short name for the value in help.
    public init(_ key: String, help: String, valueName: String? = nil) {
        self.init(key, help: help, valueName: valueName, group: .provider) { _ throws(AuthError) in }
    }

    init(
        _ key: String,
        help: String,
        valueName: String?,
        form: Form = .value,
        group: SettingGroup,
        isPath: Bool = false,
        isSecret: Bool = false,
        check: @escaping @Sendable (String) throws(AuthError) -> Void
    ) {
        self.key = key
        self.help = help
        self.valueName = valueName
        self.form = form
        self.group = group
        self.isPath = isPath
        self.isSecret = isSecret
        self.check = check
    }

    /// The environment variable: `NATIVEAUTH_` and the key in capitals (`NATIVEAUTH_USER_POOL_ID`).
    public var environmentVariable: String { "NATIVEAUTH_" + key.uppercased() }

    /// Refuses a value the setting's parse refuses.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set).
    public func validate(_ text: String) throws(AuthError) {
        guard !text.isEmpty else { return }
        try check(text)
    }

    public var description: String { key }

    /// The declaration with other help: a tool's words for a key several providers declare.
    package func withHelp(_ help: String) -> ProviderSetting {
        ProviderSetting(
            key, help: help, valueName: valueName, form: form, group: group, isPath: isPath, isSecret: isSecret,
            check: check)
    }

    public static func == (lhs: ProviderSetting, rhs: ProviderSetting) -> Bool { lhs.key == rhs.key }

    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

/// What a setting is about; a command-line tool offers a command the groups it uses, each under a
/// title of its own. An open set: a module may add groups.
public struct SettingGroup: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Which server and which client: provider, issuer, client id, registration.
    public static let server = SettingGroup(rawValue: "server")
    /// How the client proves who it is: a secret, a key, the method.
    public static let clientAuthentication = SettingGroup(rawValue: "client_authentication")
    /// What the tokens are for: scopes, resources, DPoP, pushed requests.
    public static let request = SettingGroup(rawValue: "request")
    /// A workload's own token, traded for tokens.
    public static let workload = SettingGroup(rawValue: "workload")
    /// Where tokens are kept and which account.
    public static let storage = SettingGroup(rawValue: "storage")
    /// The HTTP transport's trust: CA, client certificate.
    public static let transport = SettingGroup(rawValue: "transport")
    /// Endpoints that replace the metadata's: configuration files and the environment only.
    public static let endpoints = SettingGroup(rawValue: "endpoints")
    /// A provider module's own settings.
    public static let provider = SettingGroup(rawValue: "provider")
}

/// A setting and how its text becomes a typed value: the form a module reads its settings in.
///
/// ```swift
/// extension Setting where Value == URL {
///     static let baseURL = Setting("base_url", help: "The server's URL.", group: .provider, parse: .url)
/// }
/// let base: URL? = try configuration.value(of: .baseURL)
/// ```
public struct Setting<Value: Sendable>: Sendable {
    /// The declaration, without its type: what lists of settings hold.
    public let declaration: ProviderSetting
    private let parser: SettingParser<Value>

    /// Declares a setting.
    ///
    /// - Parameters:
    ///   - key: The snake_case key.
    ///   - help: What the value is.
    ///   - valueName: A short name for the value in help.
    ///   - group: What the setting is about.
    ///   - isPath: Whether the value names a file.
    ///   - isSecret: Whether the value is a secret.
    ///   - parse: How a text becomes the value.
    public init(
        _ key: String,
        help: String,
        valueName: String? = nil,
        group: SettingGroup,
        isPath: Bool = false,
        isSecret: Bool = false,
        parse: SettingParser<Value>
    ) {
        let declaration = ProviderSetting(
            key, help: help, valueName: valueName, form: parse.form, group: group, isPath: isPath,
            isSecret: isSecret, check: { _ throws(AuthError) in })
        self.init(declaration, parser: parse)
    }

    private init(_ declaration: ProviderSetting, parser: SettingParser<Value>) {
        let checked = ProviderSetting(
            declaration.key, help: declaration.help, valueName: declaration.valueName, form: declaration.form,
            group: declaration.group, isPath: declaration.isPath, isSecret: declaration.isSecret,
            check: { text throws(AuthError) in _ = try parser.parse(text, declaration) })
        self.declaration = checked
        self.parser = parser
    }

    /// The key in a configuration file.
    public var key: String { declaration.key }

    /// The value of `text`.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set to
    ///   ``key``) naming what is wrong.
    public func parse(_ text: String) throws(AuthError) -> Value {
        try parser.parse(text, declaration)
    }
}

/// How a setting's text becomes its value, and so how it is given (``ProviderSetting/Form``).
public struct SettingParser<Value: Sendable>: Sendable {
    let form: ProviderSetting.Form
    let parse: @Sendable (String, ProviderSetting) throws(AuthError) -> Value

    /// A parse of one text.
    ///
    /// - Parameter parse: The value of a text; throws ``AuthError`` (build it with
    ///   ``AuthError/invalid(_:_:hint:)-(ProviderSetting,_,_)`` and the declaration it is given).
    public init(_ parse: @escaping @Sendable (String, ProviderSetting) throws(AuthError) -> Value) {
        self.init(form: .value, parse)
    }

    init(form: ProviderSetting.Form, _ parse: @escaping @Sendable (String, ProviderSetting) throws(AuthError) -> Value)
    {
        self.form = form
        self.parse = parse
    }

    /// The value of `text` given for `setting`: for a parse that builds on another one.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) naming `setting`.
    public func value(of text: String, for setting: ProviderSetting) throws(AuthError) -> Value {
        try parse(text, setting)
    }
}

extension SettingParser where Value == String {
    /// The text as it is.
    public static var text: Self { Self { text, _ throws(AuthError) in text } }
}

extension SettingParser where Value == Bool {
    /// `true` or `false`; given as a flag without a value on a command line.
    public static var flag: Self {
        Self(form: .flag) { text, setting throws(AuthError) in
            switch text.lowercased() {
            case "true": return true
            case "false": return false
            default: throw AuthError.invalid(setting, "should be true or false")
            }
        }
    }
}

extension SettingParser where Value == Bool {
    /// `true` or `false`, given as a value (`--offline-tokens true`) rather than as a switch; a file
    /// may hold the JSON booleans.
    public static var boolean: Self {
        Self { text, setting throws(AuthError) in
            switch text.lowercased() {
            case "true": return true
            case "false": return false
            default: throw AuthError.invalid(setting, "should be true or false")
            }
        }
    }
}

extension SettingParser where Value == [String] {
    /// Words separated by spaces or commas (a file may hold an array); repeated on a command line.
    public static var words: Self {
        Self(form: .list) { text, _ throws(AuthError) in JSONValue.string(text).lenientStringList ?? [] }
    }
}

extension SettingParser where Value == URL {
    /// An absolute URL, `https` (plain `http` only to 127.0.0.1 or `[::1]`).
    public static var url: Self {
        Self { text, setting throws(AuthError) in
            guard let url = URL(string: text), url.scheme != nil, url.host?.isEmpty == false else {
                throw AuthError.invalid(setting, "is not an absolute URL")
            }
            do {
                try EndpointPolicy.validate(url)
            } catch {
                throw AuthError.invalid(setting, "must use https (plain http only for 127.0.0.1 or [::1])")
            }
            return url
        }
    }
}

extension SettingParser where Value == URL {
    /// A server's base URL: ``url``, without a query or a fragment, its trailing slash dropped
    /// (`https://sso.example.com/auth/` is `https://sso.example.com/auth`), so that paths are
    /// appended to it.
    public static var baseURL: Self {
        Self { text, setting throws(AuthError) in
            let url = try SettingParser.url.parse(text.hasSuffix("/") ? String(text.dropLast()) : text, setting)
            guard url.query == nil, url.fragment == nil else {
                throw AuthError.invalid(setting, "is a server's URL, with neither a query nor a fragment")
            }
            return url
        }
    }
}

extension SettingParser where Value == String {
    /// A domain name, with a port when there is one (`acme.eu.auth0.com`, `127.0.0.1:8443`): given
    /// as it is, or as an `https` URL of nothing but the domain (`https://acme.okta.com/`).
    public static var domain: Self {
        Self { text, setting throws(AuthError) in
            var domain = text
            if let range = domain.range(of: "://") {
                guard domain[..<range.lowerBound].lowercased() == "https" else {
                    throw AuthError.invalid(setting, "is a domain, reached over https")
                }
                domain = String(domain[range.upperBound...])
            }
            while domain.hasSuffix("/") { domain.removeLast() }
            guard !domain.isEmpty, !domain.contains(where: { "/?#@ ".contains($0) }),
                let url = URL(string: "https://" + domain), url.host?.isEmpty == false
            else { throw AuthError.invalid(setting, "is not a domain, like id.example.com") }
            return domain
        }
    }

    /// A name that goes into a URL's path as it is (a tenant, a realm, a server id): ASCII letters,
    /// digits and the characters of `punctuation`, nothing else.
    ///
    /// - Parameters:
    ///   - punctuation: The other characters allowed (`-`, `.`, `_`).
    ///   - kind: What the name is, for the error (`a tenant id or domain`).
    public static func name(allowing punctuation: String, kind: String) -> Self {
        Self { text, setting throws(AuthError) in
            guard
                text.unicodeScalars.allSatisfy({
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || punctuation.unicodeScalars.contains($0))
                })
            else { throw AuthError.invalid(setting, "is not \(kind)") }
            return text
        }
    }
}

extension SettingParser {
    /// One of a type's raw values (or names `parse` accepts), listed in the error otherwise.
    ///
    /// - Parameters:
    ///   - names: The accepted names, as the error lists them.
    ///   - parse: The value of a name; `nil` for one that is not accepted.
    public static func choice(
        _ names: [String], _ parse: @escaping @Sendable (String) -> Value?
    ) -> Self {
        Self { text, setting throws(AuthError) in
            guard let value = parse(text) else {
                let list =
                    names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "") : names[0]
                throw AuthError.invalid(setting, "should be \(list)")
            }
            return value
        }
    }
}

extension SettingParser where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of the raw values, in any case; anything else is "unknown `what` 'TEXT'", naming them.
    ///
    /// - Parameter what: What the values are (`token storage`).
    public static func named(_ what: String) -> Self {
        SettingParser { text, setting throws(AuthError) in
            guard let value = Value(rawValue: text.lowercased()) else {
                throw AuthError(
                    .configurationInvalid, "unknown \(what) '\(text)'",
                    hint: "use one of: " + Value.allCases.map(\.rawValue).joined(separator: ", "), field: setting.key)
            }
            return value
        }
    }
}

extension SettingParser {
    /// One of the raw values of `Value`, an enumeration of strings.
    public static func cases() -> Self where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
        choice(Value.allCases.map(\.rawValue)) { Value(rawValue: $0) }
    }
}

extension ProviderSetting {
    /// The text a JSON value gives this setting: a string (or a number) as it is, `true`/`false`
    /// for a flag, a list (an array of strings, or words separated by spaces or commas) as
    /// space-separated words; `nil` for `null`.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``, ``AuthError/field`` set)
    ///   for a value of another kind.
    package func text(of value: JSONValue) throws(AuthError) -> String? {
        switch (value, form) {
        case (.null, _): return nil
        case (.bool(let on), .flag), (.bool(let on), .value): return on ? "true" : "false"
        case (.string(let text), .flag): return text
        case (_, .flag): throw AuthError.invalid(self, "should be true or false")
        case (_, .list):
            guard let words = value.lenientStringList else {
                throw AuthError.invalid(self, "should be a string of space-separated words, or an array of strings")
            }
            return words.joined(separator: " ")
        case (_, .value):
            guard let text = value.lenientString else { throw AuthError.invalid(self, "should be a string") }
            return text
        }
    }
}
