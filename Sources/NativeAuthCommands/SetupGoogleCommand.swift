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
