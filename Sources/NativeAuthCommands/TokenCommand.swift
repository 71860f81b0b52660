public import ArgumentParser
internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthPresenters

/// `token`: prints a valid access token, refreshing if needed, for another program.
///
/// `--format` chooses the form:
/// - `raw` (the default): the token alone, exactly one line, for piping;
/// - `json`: one object with `access_token`, `token_type`, `expires_at` (ISO 8601 or null) and
///   `scope` (array);
/// - `header`: the whole `Authorization` value, `Bearer <token>` (`DPoP <token>` for a DPoP-bound
///   token, which goes with a proof);
/// - `dpop-proof`: the `DPoP` header's value for one request to `--url` with `--method` (RFC 9449),
///   signed with the sign-in's key, for a DPoP-bound token sent by another program;
/// - `exec-credential`: a Kubernetes `ExecCredential` for kubectl's exec credential plugins, in the
///   `apiVersion` that `KUBERNETES_EXEC_INFO` asks for (`client.authentication.k8s.io/v1` or
///   `v1beta1`), with `status.token` and `status.expirationTimestamp`. When a sign-in is needed it
///   opens the browser if kubectl says the session is interactive, and fails at once with a
///   message saying so when it is not (`interactive: false`). See ``KubeconfigCommand``.
///
/// - `aws-credential-process`: the JSON an AWS CLI `credential_process` reads, with temporary
///   credentials for `--role-arn` from STS `AssumeRoleWithWebIdentity` (NativeAuthAWS) for the ID
///   token, kept with the tokens and reused until five minutes before they expire; `--duration`
///   and `--aws-region` as the AWS CLI names them. See ``SetupAWSCommand``.
/// - `google-executable`: the response of an executable-sourced Google credential (`version`,
///   `success`, `token_type`, `id_token`, `expiration_time`), and on failure the error response
///   Google's libraries read (`success` false, `code`, `message`; exit status 1). Google's
///   libraries read this command's standard error with its output: nothing is written there
///   when both are the same pipe. See ``SetupGoogleCommand``.
///
/// `--token-kind id` hands out the ID token instead (`raw`, `header`, `exec-credential`), valid for
/// at least a minute: when it expires sooner it is refreshed, even when the access token is still
/// good, and a refresh that brings no new one is an error rather than an expired token. It is the
/// default of `exec-credential` for a sign-in that holds an ID token, since a Kubernetes API
/// server's OIDC authenticator validates a JWT whose `aud` is the client id: the ID token.
/// `--token-kind access` sends the access token to clusters that validate those. The cloud formats
/// send the ID token too, unless `--token-kind access` says otherwise.
///
/// The other forms never sign in: they fail with `login_required`.
public struct TokenCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "token", abstract: "Print a valid access token (refreshing if needed).",
            discussion: CommandSupport.overrideHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Option(
        name: .long,
        help: ArgumentHelp(
            "raw (the token), json, header (the Authorization value), dpop-proof (the DPoP header for --url),"
                + " exec-credential (for kubectl), aws-credential-process (AWS credentials for --role-arn) or"
                + " google-executable (for Google's executable-sourced credentials).",
            valueName: "format"))
    var format: String = TokenFormat.raw.rawValue

    @Option(
        name: .long,
        help: ArgumentHelp(
            "id (the ID token, refreshed when it expires; the default of exec-credential when the sign-in holds one)"
                + " or access (the access token; the default of the other formats).",
            valueName: "id|access"))
    var tokenKind: String?

    @Option(
        name: .long,
        help: ArgumentHelp("With --format dpop-proof: the URL of the request the proof is for.", valueName: "url"))
    var url: String?

    @Option(name: .long, help: ArgumentHelp("With --format dpop-proof: the request's method.", valueName: "method"))
    var method: String = "GET"

    @Option(
        name: .customLong("share-sign-in"),
        help: ArgumentHelp(
            "With --resource URL for an API found by its metadata: it may get its token from an existing sign-in"
                + " made for another API of its server (see `api --share-sign-in`).",
            valueName: "url"))
    var sharedSignIns: [String] = []

    @OptionGroup var aws: AWSRoleOptions

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        guard TokenFormat(rawValue: format) != nil else {
            throw ValidationError(
                "unknown format '\(format)'; use one of: \(TokenFormat.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        guard (format == TokenFormat.dpopProof.rawValue) == (url != nil) else {
            throw ValidationError("--format dpop-proof needs --url URL, and --url goes with --format dpop-proof only")
        }
        if let tokenKind {
            guard let kind = TokenKind(rawValue: tokenKind) else {
                throw ValidationError("--token-kind is id or access")
            }
            guard kind == .access || TokenFormat(rawValue: format)?.carriesIDToken == true else {
                throw ValidationError(
                    "--token-kind id goes with --format raw, header, exec-credential, aws-credential-process or"
                        + " google-executable")
            }
        }
        try aws.validate(for: format)
    }

    public func run() async throws {
        let format = TokenFormat(rawValue: format) ?? .raw
        if format == .googleExecutable { GoogleExecutable.quietStandardErrorWhenMerged() }
        try await CommandSupport.run(Tool.self) {
            guard format == .googleExecutable else { return try await produce(format) }
            do {
                try await produce(format)
            } catch {
                // The error response Google's libraries read (and exit status 1, from `run`).
                CommandSupport.printLine(GoogleExecutable.failure(error))
                throw error
            }
        }
    }

    private func produce(_ format: TokenFormat) async throws {
        let execInfo = try KubernetesExecInfo.parse(
            format == .execCredential ? ProcessInfo.processInfo.environment["KUBERNETES_EXEC_INFO"] : nil)
        let signIn: TokenSupply.SignIn =
            format != .execCredential
            ? .never(reason: nil)
            : execInfo.interactive
                ? .withBrowser : .never(reason: "kubectl runs this plugin without a terminal (interactive: false)")
        if let token = try AccessTokenOverride.token() {
            guard !format.isCloud else {
                throw AuthError(
                    .configurationInvalid,
                    "NATIVEAUTH_ACCESS_TOKEN is a token without its sign-in: --format \(format.rawValue) needs the"
                        + " stored sign-in's ID token",
                    hint: "unset NATIVEAUTH_ACCESS_TOKEN")
            }
            CommandSupport.printLine(try format.text(AccessTokenOverride.tokens(token), execInfo: execInfo))
            return
        }
        var resource = try options.singleResource()
        if let asked = resource, !format.isCloud, format != .dpopProof, tokenKind != TokenKind.id.rawValue,
            options.configuredIssuer() == nil,
            try await options.knownResourceStore().knownResource(covering: asked) == nil
        {
            // Nothing configured but the resource's URL: its 401 names its server (as `api URL`).
            let token = try await options.resourceToken(
                for: asked, lending: SignInLending(named: sharedSignIns, bodyFromStandardInput: false))
            try TokenOutput.checkPrintable(token.accessToken)
            let tokens = TokenSet(
                accessToken: token.accessToken, tokenType: token.tokenType, scopes: token.scopes,
                expiresAt: token.expiresAt, issuedAt: token.issuedAt)
            CommandSupport.printLine(try format.text(tokens, execInfo: execInfo, kind: .access))
            return
        }
        var prepared: PreparedAccount
        if let asked = resource, !format.isCloud,
            let known = try await options.knownResourceStore().knownResource(covering: asked)
        {
            // A resource found before by its metadata (`api URL`): its server and account are known.
            prepared = try await options.prepare(for: ResourceTarget(known))
            prepared.authenticator = prepared.accounts.authenticator(for: known.account)
            prepared.account = known.account
            resource = known.resource
        } else {
            prepared = try await options.prepare(use: signIn.mayNameNewAccount ? .describe : .act)
        }
        let asked = tokenKind.flatMap(TokenKind.init(rawValue:))
        if format == .awsCredentialProcess {
            let role = try aws.role(sendsAccessToken: asked == .access)
            let credentials = try await role.credentials(
                from: prepared.authenticator, transport: prepared.authenticator.transport)
            try TokenOutput.checkPrintable(credentials.secretAccessKey + credentials.sessionToken)
            CommandSupport.printLine(credentials.credentialProcessJSON)
            return
        }
        if asked == .id, resource != nil {
            throw AuthError(
                .configurationInvalid, "a resource's token is an access token: the ID token is for the client",
                hint: "leave out --token-kind id with --resource")
        }
        // exec-credential hands out the ID token of a sign-in that holds one, unless told otherwise;
        // google-executable the ID token always.
        let automatic = format == .execCredential && asked == nil && resource == nil
        var held: TokenSet?
        if automatic { held = try await prepared.authenticator.currentTokens() }
        let wantsID = asked == .id || held?.idToken != nil || (format == .googleExecutable && asked == nil)
        var tokens: TokenSet
        if resource != nil, !wantsID, prepared.authenticator.borrowsTokens {
            // Borrowed: the resource's token alone, asked for below (the agent may hand out no other).
            tokens = TokenSet(accessToken: "", issuedAt: Date())
        } else if resource != nil, !wantsID, let current = try await prepared.authenticator.currentTokens() {
            // A resource's token comes with the sign-in's refresh token, whether or not the sign-in's
            // own access token is still valid: that one is not refreshed for nothing.
            tokens = current
        } else {
            tokens = try await TokenSupply.tokens(prepared, signIn: signIn, tool: Tool.self, idToken: wantsID)
        }
        let kind: TokenKind =
            asked ?? (format == .googleExecutable || (automatic && tokens.idToken != nil) ? .id : .access)
        if kind == .id, !wantsID, !tokens.idTokenIsValid(at: Date()) {
            // Signed in just now without an ID token asked for: one with a minute left, or a refresh.
            tokens = try await prepared.authenticator.tokensWithValidIDToken()
        }
        if let resource {
            let token = try await prepared.authenticator.resourceToken(for: resource)
            try TokenOutput.checkPrintable(token.accessToken)
            let key = tokens.dpopKey
            tokens = TokenSet(
                accessToken: token.accessToken, tokenType: token.tokenType, scopes: token.scopes,
                expiresAt: token.expiresAt, issuedAt: token.issuedAt)
            tokens.dpopKey = key
        }
        if format == .dpopProof {
            CommandSupport.printLine(try TokenOutput.proof(for: tokens, method: method, url: url ?? ""))
            return
        }
        if format == .execCredential, kind == .access, tokens.isDPoPBound {
            CommandSupport.warn(
                "the access token is DPoP-bound (RFC 9449); kubectl sends it as a bearer token, which the server"
                    + " will refuse: set dpop to off for this configuration")
        }
        if format == .googleExecutable, kind == .access, tokens.isDPoPBound {
            throw AuthError(
                .configurationInvalid,
                "the access token is DPoP-bound (RFC 9449), and Google's token exchange cannot present a proof for it",
                hint: "send the ID token, or turn `dpop` off for this configuration", field: Setting.dpop.key)
        }
        if format == .execCredential, kind == .access, resource == nil, tokens.idToken != nil,
            let problem = TokenOutput.audienceProblem(
                of: tokens, clientID: prepared.authenticator.provider.configuration.clientID)
        {
            CommandSupport.warn(
                "kubectl gets the access token, and \(problem); a Kubernetes API server's OIDC authenticator"
                    + " takes a JWT whose aud is the client id, which the ID token is: use --token-kind id unless"
                    + " this cluster validates access tokens")
        }
        CommandSupport.printLine(try format.text(tokens, execInfo: execInfo, kind: kind))
    }
}
