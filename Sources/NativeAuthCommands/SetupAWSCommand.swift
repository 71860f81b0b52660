public import ArgumentParser
internal import CNativeAuthPOSIX
internal import Foundation
internal import LenientJSON
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--role-arn`, `--duration` and `--aws-region`: the role `token --format aws-credential-process`
/// and `setup-aws` get credentials for, named as the AWS CLI names them.
struct AWSRoleOptions: ParsableArguments {
    @Option(
        name: .customLong("role-arn"),
        help: ArgumentHelp(
            "With --format aws-credential-process: the IAM role to assume (arn:aws:iam::ACCOUNT:role/NAME).",
            valueName: "arn"))
    var roleARN: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --format aws-credential-process: how long the credentials last, in seconds (900 to the role's"
                + " maximum; default: STS's, an hour).", valueName: "seconds"))
    var duration: Int?

    @Option(
        name: .customLong("aws-region"),
        help: ArgumentHelp(
            "With --format aws-credential-process: the region whose STS endpoint is asked (default: AWS_REGION,"
                + " else AWS_DEFAULT_REGION, else us-east-1; AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL name another"
                + " endpoint).", valueName: "region"))
    var awsRegion: String?

    /// Checks that the options go with `format`.
    func validate(for format: String) throws {
        let wantsRole = format == TokenFormat.awsCredentialProcess.rawValue
        if wantsRole, roleARN == nil {
            throw ValidationError("--format aws-credential-process needs --role-arn ARN")
        }
        if !wantsRole, roleARN != nil || duration != nil || awsRegion != nil {
            throw ValidationError("--role-arn, --duration and --aws-region go with --format aws-credential-process")
        }
    }

    /// The role, at the STS endpoint the AWS CLI would use.
    func role(sendsAccessToken: Bool) throws(AuthError) -> AWSWebIdentity {
        try AWSWebIdentity(
            roleARN: roleARN ?? "", endpoint: AWSWebIdentity.endpoint(region: awsRegion), durationSeconds: duration,
            sendsAccessToken: sendsAccessToken)
    }

    /// These options as `token` takes them.
    var arguments: [String] {
        var arguments = ["--role-arn", roleARN ?? ""]
        if let duration { arguments += ["--duration", String(duration)] }
        if let awsRegion { arguments += ["--aws-region", awsRegion] }
        return arguments
    }
}

/// `setup-aws --profile NAME --role-arn ARN`: writes the AWS CLI profile whose `credential_process`
/// runs `token --format aws-credential-process` with this command line's options.
///
/// The profile goes into the AWS CLI's configuration file (`AWS_CONFIG_FILE`, else
/// `~/.aws/config`): its section is created, or its `credential_process` line replaced, and the
/// rest of the file is kept as it was. The file is replaced in one step (a new one is 0600). A
/// profile whose other keys would win over `credential_process` in the AWS CLI (`role_arn`,
/// `web_identity_token_file`, `sso_…`, `aws_access_key_id`) is named in a warning.
public struct SetupAWSCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "setup-aws", abstract: "Write an AWS CLI profile that gets a role's credentials from here.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>
    @OptionGroup var aws: AWSRoleOptions

    @Option(
        name: .customLong("aws-profile"),
        help: ArgumentHelp("The AWS CLI profile to write (aws --profile NAME).", valueName: "name"))
    var awsProfile: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "id (the ID token, the default) or access (the access token, when the IAM OIDC provider's audience is an"
                + " API's).", valueName: "id|access"))
    var tokenKind: String?

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        try aws.validate(for: TokenFormat.awsCredentialProcess.rawValue)
        if let tokenKind, TokenKind(rawValue: tokenKind) == nil {
            throw ValidationError("--token-kind is id or access")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let environment = ProcessInfo.processInfo.environment
            _ = try aws.role(sendsAccessToken: false)  // the role ARN and the region are good
            let configured = try options.configure(environment: environment)
            var arguments = try options.carriedArguments(configured) + aws.arguments
            if let tokenKind { arguments += ["--token-kind", tokenKind] }
            let command = ToolInvocation.shellCommand(["token", "--format", "aws-credential-process"] + arguments)
            let path = AWSConfigFile.path(environment: environment)
            let before = try AWSConfigFile.read(path)
            let edit = try AWSConfigFile.setting(
                "credential_process", to: command, profile: awsProfile, in: before ?? "")
            guard edit.text != before else {
                CommandSupport.printLine("The AWS profile \(awsProfile) already runs \(Tool.toolName); nothing changed")
                return
            }
            try AWSConfigFile.write(edit.text, to: path)
            CommandSupport.printLine(
                "Wrote the AWS profile \(awsProfile) in \(path): `aws --profile \(awsProfile) …` gets credentials for"
                    + " \(aws.roleARN ?? "") from \(Tool.toolName)")
            if let replaced = edit.replaced {
                CommandSupport.printLine("It replaced: credential_process = \(replaced)")
            }
            if !edit.winning.isEmpty {
                CommandSupport.warn(
                    "the profile also sets \(edit.winning.joined(separator: ", ")), which the AWS CLI uses before"
                        + " credential_process: remove them from the profile")
            }
            options.noteUncarriedVariables(environment: environment, what: "the profile's credential_process")
        }
    }
}

/// The AWS CLI's configuration file (INI), edited line by line so that everything else stays.
enum AWSConfigFile {
    /// `AWS_CONFIG_FILE`, else `~/.aws/config`.
    static func path(environment: [String: String]) -> String {
        if let file = environment["AWS_CONFIG_FILE"], !file.isEmpty { return ToolInvocation.absolute(file) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.aws/config"
    }

    /// The keys a profile may hold that the AWS CLI uses before `credential_process`.
    static let winningKeys = [
        "aws_access_key_id", "role_arn", "web_identity_token_file", "sso_session", "sso_start_url",
        "sso_account_id",
    ]

    /// The section header of `profile` (`[default]` or `[profile NAME]`).
    ///
    /// - Throws: `AuthError` for a name the file cannot hold (empty, a line break, a bracket, a
    ///   leading or trailing space).
    static func header(of profile: String) throws(AuthError) -> String {
        guard !profile.isEmpty, profile.trimmingCharacters(in: .whitespaces) == profile,
            !profile.contains(where: {
                $0.isNewline || $0 == "[" || $0 == "]" || $0.asciiValue.map { $0 < 0x20 } == true
            })
        else {
            throw AuthError(
                .configurationInvalid, "\(profile.debugDescription) cannot be an AWS profile's name",
                hint: "give a name without line breaks, brackets or surrounding spaces", field: Setting.awsProfile.key)
        }
        return profile == "default" ? "[default]" : "[profile \(profile)]"
    }

    /// What ``setting(_:to:profile:in:)`` made of the file.
    struct Edit: Equatable {
        /// The new text.
        var text: String
        /// The value the key had, when it had one.
        var replaced: String?
        /// The keys of the profile the AWS CLI uses before `credential_process`.
        var winning: [String]
    }

    /// `text` with `key = value` in `profile`'s section: the key's line (and its continuation
    /// lines) replaced, else added at the end of the section, else a new section at the end.
    static func setting(_ key: String, to value: String, profile: String, in text: String) throws(AuthError) -> Edit {
        guard !value.contains(where: \.isNewline) else {
            throw AuthError(.configurationInvalid, "the \(key) value holds a line break")
        }
        let header = try header(of: profile)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let line = "\(key) = \(value)"
        func isSection(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).hasPrefix("[") }
        func name(of header: String) -> String {
            // `[profile  NAME ]` and `[profile NAME]` are the same section to the AWS CLI.
            let inner = header.trimmingCharacters(in: .whitespaces).dropFirst().dropLast()
            return inner.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        func keyOf(_ line: String) -> String? {
            guard let first = line.first, !first.isWhitespace, first != "#", first != ";",
                let equals = line.firstIndex(of: "=")
            else { return nil }
            return line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let start = lines.firstIndex(where: { isSection($0) && name(of: $0) == name(of: header) }) else {
            if let last = lines.last, !last.trimmingCharacters(in: .whitespaces).isEmpty { lines.append("") }
            lines += [header, line]
            return Edit(text: lines.joined(separator: "\n") + "\n", replaced: nil, winning: [])
        }
        let end = lines[(start + 1)...].firstIndex(where: isSection) ?? lines.endIndex
        let section = (start + 1)..<end
        let winning = section.compactMap { keyOf(lines[$0]) }.filter { winningKeys.contains($0) }
        var replaced: String?
        if let at = section.first(where: { keyOf(lines[$0]) == key }) {
            replaced = String(
                lines[at][lines[at].index(after: lines[at].firstIndex(of: "=") ?? lines[at].startIndex)...]
            )
            .trimmingCharacters(in: .whitespaces)
            var after = at + 1
            while after < end, let first = lines[after].first, first == " " || first == "\t" { after += 1 }
            lines.replaceSubrange(at..<after, with: [line])
            if replaced == value { replaced = nil }
        } else {
            // After the section's last key, before the blank lines that part it from the next.
            var at = end
            while at > start + 1, lines[at - 1].trimmingCharacters(in: .whitespaces).isEmpty { at -= 1 }
            lines.insert(line, at: at)
        }
        return Edit(text: lines.joined(separator: "\n") + "\n", replaced: replaced, winning: winning)
    }

    /// The file's text; `nil` when there is none.
    static func read(_ path: String) throws(AuthError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AuthError(.configurationInvalid, "\(path) cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Replaces the file in one step, readable by its owner only (a new directory is 0700).
    static func write(_ text: String, to path: String) throws(AuthError) {
        try writeFile(Array(text.utf8), to: path, what: "AWS configuration file")
    }
}
