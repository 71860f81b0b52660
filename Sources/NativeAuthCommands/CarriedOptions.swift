internal import Foundation
internal import NativeAuth

/// Running this tool again later from another program (kubectl's exec entry, git's credential
/// helper, Docker's): its path, and the options of this command line.
enum ToolInvocation {
    /// The absolute path of the running executable, as it was started (a symlink stays a symlink,
    /// so an upgrade that moves the target keeps working).
    static func executablePath(
        arguments: [String] = CommandLine.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) -> String {
        let first = arguments.first ?? ""
        if first.hasPrefix("/") { return URL(fileURLWithPath: first).standardizedFileURL.path }
        if first.contains("/") { return absolute(first, in: currentDirectory) }
        if !first.isEmpty, let found = ChildProcess.executable(first, searchPath: environment["PATH"] ?? "") {
            return found.path
        }
        return Bundle.main.executablePath ?? first
    }

    /// `path` made absolute against `directory`.
    static func absolute(_ path: String, in directory: String = FileManager.default.currentDirectoryPath) -> String {
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: directory + "/" + path)
        return url.standardizedFileURL.path
    }

    /// This tool run with `words` (a subcommand and its arguments), as one line a POSIX shell (or
    /// Python's `shlex`, which the AWS CLI and Google's libraries split it with) reads back word for
    /// word: the executable's path first, every word quoted when it needs it.
    static func shellCommand(_ words: [String]) -> String {
        ([executablePath()] + words).map(shellQuoted).joined(separator: " ")
    }

    /// `word` quoted for a POSIX shell: as it is when it holds only safe characters, else in
    /// single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+-,")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension CommandOptions {
    /// The options of this command line that another program must pass when it runs the tool
    /// later: every setting given as a flag (paths made absolute), the profile and account
    /// (also when chosen by `NATIVEAUTH_PROFILE`/`NATIVEAUTH_ACCOUNT` or a `.nativeauth.json`,
    /// which the other program will not see), and `--ignore-directory-file`, so that the
    /// `.nativeauth.json` of the directory the program runs it in chooses nothing.
    ///
    /// - Throws: `AuthError` for a client secret given as a flag (it would be written into a file
    ///   others read, and into every later process list) or read from standard input, and for an
    ///   account name that cannot be one.
    func carriedArguments(_ configured: Configured) throws(AuthError) -> [String] {
        if flag(.clientSecret) != nil {
            throw AuthError(
                .configurationInvalid,
                "--client-secret would be written into the configuration of another program, and its process list",
                hint: "give --client-secret-file FILE instead, or keep the secret in a profile (`profile add`)",
                field: Setting.clientSecret.key)
        }
        if flag(.clientSecretFile) == "-" {
            throw AuthError(
                .configurationInvalid,
                "--client-secret-file - reads standard input, which the other program uses for itself",
                hint: "give a file that only you may read", field: Setting.clientSecret.key)
        }
        let selection = configured.selection
        if let account = selection.account { try Accounts.validate(name: account.name) }
        var arguments: [String] = []
        for setting in Tool.allSettings where !setting.isSecret {
            let values: [String]?
            switch setting.key {
            case Setting.profile.key: values = selection.profile.map { [$0.name] }
            case Setting.account.key: values = selection.account.map { [$0.name] }
            // Always: the program runs the tool in its own directory, where a `.nativeauth.json`
            // (a cloned repository's) must not choose the account or the profile.
            case Setting.ignoreDirectoryFile.key: values = ["true"]
            default: values = given[setting.key]
            }
            for value in values ?? [] {
                switch setting.form {
                case .flag: arguments.append(setting.flag)
                case .value, .list:
                    arguments += [setting.flag, setting.isPath ? ToolInvocation.absolute(value) : value]
                }
            }
        }
        return arguments
    }

    /// Says on stderr which `NATIVEAUTH_` variables set something this command line does not carry
    /// into `what`: the other program will not see them unless it runs with them too.
    func noteUncarriedVariables(environment: [String: String], what: String) {
        let carried = [Setting.profile.key, Setting.account.key]
        let variables = Tool.allSettings.filter { !carried.contains($0.key) }.map(\.environmentVariable)
        let uncarried = variables.filter { environment[$0].map { !$0.isEmpty } ?? false }.sorted()
        guard !uncarried.isEmpty else { return }
        CommandSupport.notice(
            "\(uncarried.joined(separator: ", ")) set something here that \(what) does not carry:"
                + " give it as an option, or keep it in a profile (--profile)")
    }
}
