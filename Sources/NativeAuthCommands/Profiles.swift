internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// The named profiles of a tool: `$XDG_CONFIG_HOME/NAME/config.json` (`~/.config/NAME/config.json`
/// when `XDG_CONFIG_HOME` is unset), with `NAME` the tool's ``NativeAuthTool/configurationName``:
///
/// ```json
/// {"profiles": {"corp": {"issuer": "https://id.corp.example", "client_id": "cli", "scope": "openid"}}}
/// ```
///
/// A profile holds the keys a `--config` file does (snake_case: `provider`, `issuer`, `client_id`,
/// `scope`, `token_storage`, `store`, a provider's own settings, `client_secret`). The file is
/// written 0600 in a 0700 directory; one holding a client secret is refused when others can read it.
struct Profiles {
    /// The file.
    let path: String
    /// The profiles by name, in the file's order.
    private(set) var profiles: JSONObject

    /// The profile file of a tool named `name`.
    static func path(configurationName name: String, environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/" + name + "/config.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/" + name + "/config.json"
    }

    /// Reads the file; a missing file holds no profiles.
    static func load(path: String) throws(AuthError) -> Profiles {
        guard SecretFile.exists(path) else { return Profiles(path: path, profiles: [:]) }
        // Refuses a file that holds a client secret (in any profile) when others can read it.
        let object = try ProviderConfiguration.load(contentsOf: path)
        guard let profiles = try? object.object("profiles") ?? JSONObject() else {
            throw AuthError(.configurationInvalid, "\"profiles\" in \(path) is not an object of profiles")
        }
        if let odd = profiles.first(where: { $0.value.objectValue == nil }) {
            throw AuthError(.configurationInvalid, "the profile \"\(odd.key)\" in \(path) is not an object")
        }
        return Profiles(path: path, profiles: profiles)
    }

    /// The settings of the profile `name`.
    func profile(_ name: String) throws(AuthError) -> JSONObject {
        guard let profile = profiles[name]?.objectValue else {
            let known = profiles.map(\.key)
            throw AuthError(
                .configurationInvalid, "no profile named \"\(name)\" in \(path)",
                hint: known.isEmpty
                    ? "add one with `profile add \(name) --issuer … --client-id …`"
                    : "profiles: " + known.joined(separator: ", "),
                field: Setting.profile.key)
        }
        return profile
    }

    /// Names of the profiles, in the file's order.
    var names: [String] { profiles.map(\.key) }

    mutating func set(_ name: String, to settings: JSONObject?) {
        profiles[name] = settings.map(JSONValue.object)
    }

    /// Writes the file: 0600, in a directory created 0700, replaced atomically.
    func save() throws(AuthError) {
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw AuthError(.configurationInvalid, "cannot create \(directory)", underlying: error)
            }
        }
        let bytes: [UInt8]
        do {
            bytes = try JSONValue.object(["profiles": .object(profiles)]).encoded()
        } catch {
            throw AuthError(.configurationInvalid, "cannot encode the profiles", underlying: error)
        }
        try SecretFile.writePrivately(bytes, to: path, what: "profile file")
    }
}

/// A `.nativeauth.json` in the current directory or one above it: the profile and the account to
/// use there (`{"profile": "corp", "account": "alice"}`), so that a directory picks them without
/// changing anything elsewhere. It names, and never holds, settings.
struct DirectoryChoice {
    static let fileName = ".nativeauth.json"

    /// The file.
    let path: String
    let profile: String?
    let account: String?

    /// The nearest file from `directory` up to `/`; `nil` when there is none.
    static func find(from directory: String) throws(AuthError) -> DirectoryChoice? {
        var current = URL(fileURLWithPath: directory).standardizedFileURL.path
        while true {
            let path = (current == "/" ? "" : current) + "/" + fileName
            if SecretFile.exists(path) { return try read(path) }
            if current == "/" || current.isEmpty { return nil }
            current = (current as NSString).deletingLastPathComponent
        }
    }

    static func read(_ path: String) throws(AuthError) -> DirectoryChoice {
        // Trusted as a configuration file: it picks which of the person's accounts a helper uses.
        let file = try SecretFile(path, what: "directory choice file", maxBytes: 64 << 10, trusted: true)
        let object: JSONObject
        do {
            guard let parsed = try JSONValue.parse(file.contents).objectValue else {
                throw AuthError(.configurationInvalid, "\(path) does not hold a JSON object")
            }
            object = parsed
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(.configurationInvalid, "\(path) is not valid JSON", underlying: error)
        }
        if let unknown = object.map(\.key).first(where: { !["profile", "account"].contains($0) }) {
            throw AuthError(
                .configurationInvalid, "\(path) has \"\(unknown)\": it may name only \"profile\" and \"account\"",
                hint: "keep settings in a profile (`profile add`), and name the profile here")
        }
        do {
            return DirectoryChoice(
                path: path, profile: try object.string("profile"), account: try object.string("account"))
        } catch {
            throw AuthError(.configurationInvalid, "\(path): \(error)")
        }
    }
}

/// Which account and profile an invocation picked, and where each choice came from: a pure
/// function of the invocation (flags, environment, current directory) and the active account.
struct Selection: Sendable {
    /// The profile, and what chose it (`--profile`, `NATIVEAUTH_PROFILE`, a directory file).
    var profile: (name: String, source: String)?
    /// The account named by a flag, the environment or a directory file, and which.
    var account: (name: String, source: String)?

    static func resolve(
        accountFlag: String?,
        profileFlag: String?,
        environment: [String: String],
        directory: DirectoryChoice?
    ) -> Selection {
        var selection = Selection()
        if let name = profileFlag {
            selection.profile = (name, "--profile")
        } else if let name = environment["NATIVEAUTH_PROFILE"], !name.isEmpty {
            selection.profile = (name, "NATIVEAUTH_PROFILE")
        } else if let directory, let name = directory.profile {
            selection.profile = (name, directory.path)
        }
        if let name = accountFlag {
            selection.account = (name, "--account")
        } else if let name = environment["NATIVEAUTH_ACCOUNT"], !name.isEmpty {
            selection.account = (name, "NATIVEAUTH_ACCOUNT")
        } else if let directory, let name = directory.account {
            selection.account = (name, directory.path)
        }
        return selection
    }
}
