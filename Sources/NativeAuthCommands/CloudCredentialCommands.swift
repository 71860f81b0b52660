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

/// Replaces a configuration file another program reads in one step (0600); its directory is made
/// (0700) when missing.
func writeFile(_ bytes: [UInt8], to path: String, what: String) throws(AuthError) {
    let directory = (path as NSString).deletingLastPathComponent
    if !FileManager.default.fileExists(atPath: directory) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw AuthError(.configurationInvalid, "cannot make the directory \(directory) for the \(what)")
        }
    }
    try SecretFile.writePrivately(bytes, to: path, what: what)
}

/// `setup-google --audience AUDIENCE --output FILE`: writes a Google `external_account` credential
/// configuration whose executable runs `token --format google-executable` with this command
/// line's options. Google's libraries (and `gcloud`) exchange the ID token it prints at Google's
/// Security Token Service for an access token; they run executables only with
/// `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`.
public struct SetupGoogleCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "setup-google",
            abstract: "Write a Google external_account credential file that gets its token from here.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The workload identity provider: //iam.googleapis.com/projects/NUMBER/locations/global/"
                + "workloadIdentityPools/POOL/providers/PROVIDER.", valueName: "audience"))
    var audience: String

    @Option(name: .long, help: ArgumentHelp("The credential file to write.", valueName: "file"))
    var output: String

    @Option(
        name: .customLong("service-account"),
        help: ArgumentHelp(
            "The service account to impersonate (EMAIL), when the pool's identities act through one.",
            valueName: "email"))
    var serviceAccount: String?

    @Option(
        name: .customLong("token-url"),
        help: ArgumentHelp(
            "Google's token exchange endpoint (default: https://sts.googleapis.com/v1/token).",
            valueName: "url"))
    var tokenURL: String = "https://sts.googleapis.com/v1/token"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "id (the ID token, the default) or access (the access token, a JWT for the pool's audience).",
            valueName: "id|access"))
    var tokenKind: String?

    @Flag(name: .long, help: "Replace the file when it exists.")
    var force = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        if let tokenKind, TokenKind(rawValue: tokenKind) == nil {
            throw ValidationError("--token-kind is id or access")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let environment = ProcessInfo.processInfo.environment
            guard let url = URL(string: tokenURL), url.host != nil else {
                throw AuthError(.configurationInvalid, "--token-url is not a URL")
            }
            try EndpointPolicy.validate(url)
            let configured = try options.configure(environment: environment)
            var arguments = try options.carriedArguments(configured)
            if let tokenKind { arguments += ["--token-kind", tokenKind] }
            let command = ToolInvocation.shellCommand(["token", "--format", "google-executable"] + arguments)
            let path = ToolInvocation.absolute(output)
            if FileManager.default.fileExists(atPath: path), !force {
                throw AuthError(
                    .configurationInvalid, "\(path) exists", hint: "give another file, or --force to replace it")
            }
            var object: JSONObject = [
                "type": "external_account",
                "audience": .string(audience),
                "subject_token_type": .string(
                    GoogleExecutable.tokenType(of: tokenKind.flatMap(TokenKind.init(rawValue:)) ?? .id)),
                "token_url": .string(url.absoluteString),
                "credential_source": .object([
                    "executable": .object(["command": .string(command), "timeout_millis": .integer(30_000)])
                ]),
            ]
            if let serviceAccount {
                guard serviceAccount.contains("@"), !serviceAccount.contains("/") else {
                    throw AuthError(.configurationInvalid, "--service-account is a service account's email")
                }
                object["service_account_impersonation_url"] = .string(
                    "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/\(serviceAccount)"
                        + ":generateAccessToken")
            }
            try writeFile(
                Array((try JSONValue.object(object).encodedString() + "\n").utf8), to: path,
                what: "Google credential file")
            CommandSupport.printLine(
                "Wrote \(path): with GOOGLE_APPLICATION_CREDENTIALS=\(path) and"
                    + " GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1, Google's libraries get their token from"
                    + " \(Tool.toolName)")
            options.noteUncarriedVariables(environment: environment, what: "the credential file's command")
        }
    }
}

/// The executable-sourced credential's responses (Google's "executable-sourced credentials").
enum GoogleExecutable {
    /// The subject token type of `kind`.
    static func tokenType(of kind: TokenKind) -> String {
        kind == .id ? "urn:ietf:params:oauth:token-type:id_token" : "urn:ietf:params:oauth:token-type:jwt"
    }

    /// The success response: the ID token (or with `kind` access, the access token as a JWT) and its expiry.
    static func success(_ tokens: TokenSet, kind: TokenKind) throws -> String {
        let token = kind == .id ? tokens.idToken : tokens.accessToken
        let expiry = kind == .id ? tokens.idTokenExpiresAt : tokens.expiresAt
        guard let token else {
            throw AuthError(.loginRequired, "the sign-in holds no ID token", hint: "sign in with the openid scope")
        }
        var object: JSONObject = [
            "version": .integer(1), "success": true, "token_type": .string(tokenType(of: kind)),
            "id_token": .string(token),
        ]
        if let expiry { object["expiration_time"] = .integer(Int64(expiry.timeIntervalSince1970)) }
        return try JSONValue.object(object).encodedString()
    }

    /// The error response for `error`: its code and message (never a token).
    static func failure(_ error: any Error) -> String {
        let failure = (error as? AuthError) ?? AuthError(.requestFailed, "unexpected failure (\(type(of: error)))")
        var message = failure.message
        if failure.isLoginRequired {
            message += "; sign in again"
        } else if let hint = failure.hint {
            message += "; \(hint)"
        }
        let object: JSONObject = [
            "version": .integer(1), "success": false, "code": .string(failure.code.rawValue),
            "message": .string(Redaction.scrub(message)),
        ]
        return (try? JSONValue.object(object).encodedString()) ?? #"{"version":1,"success":false}"#
    }

    /// Google's libraries read the executable's standard error together with its output (one
    /// pipe): when the two are the same open file, standard error goes to /dev/null, so that no
    /// log line or notice spoils the JSON.
    static func quietStandardErrorWhenMerged() {
        let output = nativeauth_fstat(STDOUT_FILENO)
        let error = nativeauth_fstat(STDERR_FILENO)
        guard output.error == 0, error.error == 0, output.device == error.device, output.inode == error.inode,
            isatty(STDOUT_FILENO) != 1
        else { return }
        let null = open("/dev/null", O_WRONLY)
        guard null >= 0 else { return }
        dup2(null, STDERR_FILENO)
        close(null)
    }
}
