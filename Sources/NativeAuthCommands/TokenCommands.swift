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
            let token = try await options.resourceToken(for: asked)
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

/// `refresh`: refreshes the tokens now.
public struct RefreshCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "refresh", abstract: "Refresh the tokens now.", discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            try AccessTokenOverride.refuse("refresh")
            let authenticator = try await options.makeAuthenticator()
            let tokens = try await authenticator.refresh()
            let until = tokens.expiresAt.map { " until \($0.formatted(.iso8601))" } ?? ""
            CommandSupport.printLine("Refreshed; the access token is valid\(until)")
        }
    }
}

/// `api PATH|URL`: an authorized request (GET unless `-X` or `-d` says otherwise); prints the
/// body, exits non-zero on HTTP ≥ 400.
///
/// `-X METHOD`, `-H 'Name: value'` (repeatable) and `-d DATA` (`@FILE`, `@-` for standard input)
/// make the request as curl and `gh api` do; the body is sent again when the request is retried
/// (after a refresh, a new DPoP nonce, a step-up).
///
/// A path is resolved against the provider's API base (``NativeAuthTool/apiBaseURL(for:)``). A full
/// URL gets the sign-in's token only on the issuer's origin, the API base and the configured
/// resources (with `--resource`, only under that resource); another host is refused before
/// anything is sent. With `NATIVEAUTH_ACCESS_TOKEN` set, that token is sent as it is and no store
/// is read; a full URL then needs no provider configuration at all.
///
/// An API found by its metadata (`--discover`, or a full URL with no issuer configured) is
/// remembered: later, the URL alone sends the request with that API's token, from the account
/// that holds it.
public struct APICommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "api", abstract: "Send an authorized request and print the response body.",
            discussion:
                "A successful answer is printed as it arrives (a server-sent event stream event by event, to a"
                + " terminal a line at a time); the timeout then counts from its last piece. Any other answer is"
                + " printed whole, and the exit status is 1.\n\n" + CommandSupport.overrideHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Argument(help: "A URL, or a path relative to the provider's API base.")
    var target: String

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Find the API's authorization server from its 401 (RFC 9728 protected resource metadata) and sign in"
                + " there for it: no --issuer needed, and without --client-id the tool registers itself there. With"
                + " nothing configured, and for an API found before (see status), the URL alone does this."))
    var discover = false

    @Option(
        name: .customLong("trust-issuer"),
        help: ArgumentHelp(
            "With --discover, when the API's metadata names another authorization server than the configured"
                + " issuer: that server may be contacted (as a public client of its own). Without it the tool asks"
                + " on a terminal, and refuses otherwise.",
            valueName: "url"))
    var trustedIssuers: [String] = []

    @Flag(
        name: .customLong("step-up"),
        help: ArgumentHelp(
            "When the API asks for a stronger or more recent sign-in (RFC 9470, or a claims challenge), or for a"
                + " scope it names (403 insufficient_scope; for an API found by its metadata, the scopes it lists when"
                + " it names none), sign in again in the browser as it asks (with the scopes held and those), and send"
                + " the request once more. Without it the tool asks first on a terminal, and otherwise prints the"
                + " refusal."))
    var stepUp = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Print the answer byte for byte also to a terminal (escape sequences included); by default a terminal"
                + " is shown its control characters as text."))
    var raw = false

    @OptionGroup var http: APIRequestOptions

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        try http.validate()
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let response: HTTPResponse
            let body: Data
            // The provider's word on a refused call (Auth0: a token without an audience is opaque).
            var mapper: (any ErrorMapper)?
            // A successful answer is printed as it arrives (an MCP server's event stream line by
            // line); any other comes whole, to be acted on, and is printed after.
            let printer = AnswerPrinter(raw: raw)
            let sink: ResponseBodySink = { printer.write($0) }
            let override = try AccessTokenOverride.token()
            let absolute = try absoluteURL()
            if discover {
                (response, body) = try await discovered(streamingTo: sink)
            } else if override == nil, let absolute, try options.singleResource() == nil,
                try await options.knownResourceStore().knownResource(covering: absolute) != nil
            {
                // An API found before: its server, account and scopes are known; only the URL is needed.
                (response, body) = try await discovered(streamingTo: sink)
            } else if override == nil, absolute != nil, options.configuredIssuer() == nil {
                // Nothing configured but the API's URL: its 401 names the server (as --discover).
                (response, body) = try await discovered(streamingTo: sink)
            } else if let token = override {
                let transport: any HTTPTransport
                let url: URL
                if let absolute = try absoluteURL() {
                    (url, transport) = (absolute, try options.transportChoice().makeTransport(logger: logger))
                } else {
                    let configured = try options.configure()
                    url = try relativeURL(provider: configured.provider)
                    transport = configured.resolved.transport.makeTransport(logger: logger)
                }
                let (request, payload) = try http.request(for: url)
                (response, body) = try await AccessTokenOverride.send(
                    request, body: payload, token: token, transport: transport, streamingTo: sink)
            } else {
                let authenticator = try await options.makeAuthenticator()
                mapper = authenticator.provider.errorMapper
                let url = try absoluteURL() ?? relativeURL(provider: authenticator.provider)
                try APIDestination.check(
                    url, provider: authenticator.provider, apiBase: Tool.apiBaseURL(for: authenticator.provider),
                    resource: try options.singleResource())
                let (request, payload) = try http.request(for: url)
                // A resource's token is not stepped up: its sign-in is the configured one's.
                let target = try options.singleResource().map { TokenTarget.resource($0) } ?? .signIn
                let presenter =
                    target.resource == nil
                    ? consent.presenter(port: authenticator.provider.configuration.loopbackRedirectPort ?? 0) : nil
                (response, body) = try await authenticator.send(
                    request, body: payload, for: target, stepUpWith: presenter, streamingTo: sink)
            }
            printer.write(body)
            printer.finish()
            if response.status.code >= 400 {
                let failure = AuthFailure(operation: .apiRequest, response: response, body: body)
                CommandSupport.report(
                    AuthError(
                        .requestFailed, "the API answered HTTP \(response.status.code)",
                        hint: mapper?.map(failure)?.hint, status: response.status.code),
                    tool: Tool.self
                )
                throw ExitCode(1)
            }
        }
    }
}

extension APICommand {
    private var logger: Logger { CommandSupport.makeLogger(label: Tool.toolName) }

    /// Whether a refusal for want of a scope or a stronger sign-in leads to a sign-in again:
    /// `--step-up`, else a yes on the terminal.
    private var consent: StepUpConsent { .of(flag: stepUp, bodyFromStandardInput: http.data == "@-") }

    /// `--discover`, or an API known from an earlier call: NativeAuth's `ResourceClient` sends the
    /// request (without a token to an API it does not know; on a 401 its protected resource
    /// metadata names the authorization server, where the person signs in, in the browser, once:
    /// the tokens are stored under that issuer), and sends it again with the API's token.
    private func discovered(streamingTo sink: @escaping ResponseBodySink) async throws -> (HTTPResponse, Data) {
        guard let url = try absoluteURL() else {
            throw AuthError(.configurationInvalid, "--discover needs the API's full URL")
        }
        try EndpointPolicy.validate(url)
        let (request, payload) = try http.request(for: url)
        let configured = options.configuredIssuer()
        let trusted = trustedIssuers
        let bodyFromStandardInput = http.data == "@-"
        return try await options.send(
            request, body: payload, stepUp: consent,
            approvesServer: { issuer, _ in
                guard let configured, !IssuerIdentifier.same(configured, issuer) else { return }
                // The API chose another server than the one configured: nothing is sent there unless
                // the person trusts it (--trust-issuer, or yes at the terminal's question); then the
                // client's credentials for the configured one stay home (see `prepare(for:)`), and
                // the tool is a public client there, with a registration of its own.
                let elsewhere =
                    "\(Redaction.scrubURL(url.absoluteString)) takes tokens from"
                    + " \(Redaction.scrubURL(issuer.absoluteString)), not from the configured"
                    + " \(Redaction.scrubURL(configured.absoluteString))"
                guard
                    try await Self.trusts(
                        issuer, named: trusted, bodyFromStandardInput: bodyFromStandardInput, question: elsewhere)
                else {
                    throw AuthError(
                        .configurationInvalid, elsewhere + "; that server was not contacted",
                        hint: "if you trust it, give --trust-issuer \(Redaction.scrubURL(issuer.absoluteString))")
                }
                CommandSupport.notice(elsewhere + ": none of the configured client's credentials go there")
            }, streamingTo: sink)
    }

    /// Whether the person trusts the authorization server `issuer`, which is not the configured
    /// one: named with `--trust-issuer`, or answered yes on the terminal (when standard input and
    /// standard error are one, and the request's body does not come from standard input).
    private static func trusts(_ issuer: URL, named trusted: [String], bodyFromStandardInput: Bool, question: String)
        async throws -> Bool
    {
        if trusted.contains(where: { IssuerIdentifier($0) == IssuerIdentifier(issuer) }) { return true }
        guard CommandSupport.canAsk(bodyFromStandardInput: bodyFromStandardInput) else { return false }
        return try await CommandSupport.answersYes(question + ". Sign in there for it, as a public client of its own?")
    }

    /// The target when it is a full URL.
    private func absoluteURL() throws(AuthError) -> URL? {
        guard target.contains("://") else { return nil }
        guard let absolute = URL(string: target) else {
            throw AuthError(.configurationInvalid, "\(target) is not a URL")
        }
        return absolute
    }

    /// The target path resolved against the provider's API base.
    private func relativeURL(provider: any AuthProvider) throws(AuthError) -> URL {
        guard let base = Tool.apiBaseURL(for: provider),
            let relative = URL(
                string: target.hasPrefix("/") ? String(target.dropFirst()) : target, relativeTo: base.appendingSlash)
        else {
            throw AuthError(.configurationInvalid, "the provider has no API base; give a full URL")
        }
        return relative.absoluteURL
    }
}

/// `userinfo [--json]`: the userinfo claims.
public struct UserInfoCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "userinfo", abstract: "Show the claims of the signed-in account.",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>

    @Flag(name: .long, help: "Print the claims as one JSON object.")
    var json = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let authenticator = try await options.makeAuthenticator()
            let info = try await authenticator.userInfo()
            if json {
                CommandSupport.printLine(try JSONValue.object(info.claims).encodedString())
            } else {
                for member in info.claims {
                    let value = member.value.lenientString ?? (try? member.value.encodedString()) ?? ""
                    CommandSupport.printLine("\(member.key): \(value)")
                }
            }
        }
    }
}

extension URL {
    fileprivate var appendingSlash: URL {
        absoluteString.hasSuffix("/") ? self : URL(string: absoluteString + "/") ?? self
    }
}

/// Where `api` may send a token, and what stays home when the API names another server.
enum APIDestination {
    /// The settings that hold the client's credentials at its configured authorization server.
    static let clientCredentialSettings = [
        Setting.clientID.declaration, Setting.clientSecret.declaration, Setting.clientAssertionKey.declaration,
        Setting.clientAssertionKeyID.declaration, Setting.clientAuthentication.declaration,
        Setting.clientCertificate.declaration, Setting.clientKey.declaration,
    ]

    /// Refuses to send the sign-in's token (or, with `resource`, the token for it) to `url` when it
    /// was not issued for it, as `gh api` attaches its token only to hosts it signed in to: a
    /// resource's token goes only under that resource; the sign-in's to the issuer's origin, the
    /// provider's API base and the configured resources.
    static func check(
        _ url: URL, provider: any AuthProvider, apiBase: URL?, resource: URL?
    ) throws(AuthError) {
        let shown = Redaction.scrubURL(url.absoluteString)
        if let resource {
            guard ProtectedResourceMetadata.covers(resource, url) else {
                throw AuthError(
                    .configurationInvalid,
                    "the token for \(Redaction.scrubURL(resource.absoluteString)) is not sent to \(shown), which is"
                        + " not under it", hint: "give the resource that \(shown) belongs to",
                    field: Setting.resource.key)
            }
            return
        }
        let configuration = provider.configuration
        let issuers = [URL(string: provider.tokenIssuer), configuration.issuer].compactMap { $0 }
        let allowed =
            issuers.contains { ProtectedResourceMetadata.sameOrigin(url, $0) }
            || apiBase.map { ProtectedResourceMetadata.sameOrigin(url, $0) } == true
            || configuration.resources.contains { ProtectedResourceMetadata.covers($0, url) }
        guard allowed else {
            throw AuthError(
                .configurationInvalid,
                "the access token is not sent to \(url.host ?? shown)\(url.port.map { ":\($0)" } ?? ""): it was issued by"
                    + " \(Redaction.scrubURL(provider.tokenIssuer)) for its own APIs",
                hint: "give --resource URL for a token issued for that API (RFC 8707), or --discover to find the"
                    + " server that issues its tokens")
        }
    }
}

/// `api`'s request: `-X METHOD`, `-H 'Name: value'` and `-d DATA` (`@FILE`, `@-` for standard
/// input), as curl and `gh api` take them.
struct APIRequestOptions: ParsableArguments {
    @Option(
        name: [.customShort("X"), .customLong("method")],
        help: ArgumentHelp("The request's method (default: GET, or POST with --data).", valueName: "method"))
    var method: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp(
            "A header to send, 'Name: value' (repeatable); the tool sets Authorization and DPoP itself.",
            valueName: "header"))
    var headers: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "The request's body: the text itself, @FILE for a file's bytes, @- for standard input (sent as"
                + " application/json unless -H 'Content-Type: …' says otherwise).", valueName: "data"))
    var data: String?

    /// The most a body may be.
    static let bodyLimit = 16 * 1024 * 1024

    /// The headers the tool sets itself, which `-H` may not.
    static let reserved: Set<String> = ["authorization", "dpop", "host", "content-length", "transfer-encoding"]

    func validate() throws {
        if let method {
            let token = Set("!#$%&'*+-.^_`|~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            guard !method.isEmpty, method.allSatisfy({ token.contains($0) }) else {
                throw ValidationError("-X \(method.debugDescription) is not an HTTP method")
            }
        }
        for header in headers {
            _ = try Self.field(header)
        }
    }

    /// One `-H` value as a field.
    static func field(_ text: String) throws -> HTTPField {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let name = HTTPField.Name(String(parts[0]).trimmingCharacters(in: .whitespaces)),
            !text.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
        else {
            throw ValidationError("-H \(text.debugDescription) is not a header line 'Name: value'")
        }
        guard !reserved.contains(name.canonicalName) else {
            throw ValidationError("-H \(name.rawName) is the tool's to set")
        }
        return HTTPField(name: name, value: String(parts[1]).trimmingCharacters(in: .whitespaces))
    }

    /// The request to `url` and its body.
    ///
    /// - Throws: `AuthError` when the body's file cannot be read or is larger than 16 MiB.
    func request(for url: URL) throws -> (HTTPRequest, Data?) {
        let body = try data.map(Self.body)
        let verb = (method ?? (body == nil ? "GET" : "POST")).uppercased()
        guard let parsed = HTTPRequest.Method(verb) else {
            throw AuthError(.configurationInvalid, "\(verb) is not an HTTP method")
        }
        var request = HTTPRequest(method: parsed, url: url)
        for header in headers { request.headerFields.append(try Self.field(header)) }
        if body != nil, request.headerFields[.contentType] == nil {
            request.headerFields[.contentType] = "application/json"
        }
        return (request, body)
    }

    private static func body(_ text: String) throws(AuthError) -> Data {
        guard text.hasPrefix("@") else { return Data(text.utf8) }
        let path = String(text.dropFirst())
        if path == "-" { return try CommandSupport.readStandardInput(limit: bodyLimit) }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AuthError(.configurationInvalid, "--data @\(path): the file cannot be read")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: bodyLimit + 1)) ?? Data()
        guard data.count <= bodyLimit else {
            throw AuthError(.configurationInvalid, "--data @\(path) is larger than 16 MiB")
        }
        return data
    }
}
