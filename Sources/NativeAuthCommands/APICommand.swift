public import ArgumentParser
internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAWS
internal import NativeAuthAsyncHTTPClient
internal import NativeAuthPresenters

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

    @Option(
        name: .customLong("share-sign-in"),
        help: ArgumentHelp(
            "For an API found by its metadata: it may get its token from an existing sign-in at its authorization"
                + " server that was made for another API (or the active account's), with no browser. Without it the"
                + " tool asks on a terminal, and refuses otherwise; no signs in for the API alone.",
            valueName: "url"))
    var sharedSignIns: [String] = []

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
        name: [.customShort("i"), .customLong("include")],
        help: ArgumentHelp(
            "Print the answer's status line and headers before its body, as curl -i does (an MCP server's"
                + " Mcp-Session-Id, to send back with -H). The body is then printed once it has all arrived."))
    var include = false

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
            // With --include, the status line and headers come first: the body waits for them.
            let printer = AnswerPrinter(raw: raw, holdingUntilHead: include)
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
            printer.release(head: Data(Self.head(of: response).utf8))
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

    /// What `--include` prints before the body: `HTTP CODE REASON`, each header as `Name: value`,
    /// then an empty line, with CRLF line ends as on the wire.
    static func head(of response: HTTPResponse) -> String {
        var lines = ["HTTP \(response.status.code) \(response.status.reasonPhrase)"]
        for field in response.headerFields { lines.append("\(field.name.rawName): \(field.value)") }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

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
            lending: SignInLending(named: sharedSignIns, bodyFromStandardInput: bodyFromStandardInput),
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
        Setting.clientCertificate.declaration, Setting.clientKey.declaration, Setting.clientSecretFile.declaration,
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
