public import Foundation
public import HTTPTypes
public import Logging

/// A client of protected resources known by their URL alone: an MCP server, an API that names its
/// authorization server in its metadata (RFC 9728). The resource-first entry to NativeAuth, where
/// ``Authenticator`` starts from a configured authorization server.
///
/// ```swift
/// let client = ResourceClient(
///     options: .init(clientName: "my-agent", transport: transport)
/// ) { signIn in
///     LoopbackPresenter(configuration: .init(port: signIn.redirectPort ?? 0))
/// }
/// var request = HTTPRequest(method: .post, url: URL(string: "https://mcp.example.com/mcp")!)
/// request.headerFields[.accept] = "application/json, text/event-stream"
/// let (response, body) = try await client.send(request, body: initialize)
/// ```
///
/// For a URL it has not met, ``send(_:body:streamingTo:)`` follows the MCP authorization spec:
///
/// 1. The request goes without a token. Its 401 names the resource's metadata (RFC 9728), whose
///    `resource` must be the URL itself (its query aside: never a parent path, the bare origin or
///    a URL with a user part), or nothing more is sent.
/// 2. The metadata names the authorization server; its metadata is read in MCP's order
///    (``MetadataOrder/oauth``). ``Options/approvesServer`` may refuse it first.
/// 3. The scopes asked for are ``Options/scopes``, else the 401's `scope`, else the metadata's
///    `scopes_supported`.
/// 4. The client id is the one configured for that server (``Options/configuredClient``), else the
///    client's ID metadata document where the server takes one, else a registration (RFC 7591)
///    with one exact loopback redirect URI, kept in the store for later processes.
/// 5. The account: the one kept for the resource, else ``Options/account``, else one that holds a
///    token of another resource of the same server (RFC 8707 §2.2), else the active one
///    (``Options/activeAccounts``). When its sign-in does not cover the resource (the server
///    refuses the target, or the resource refuses every token had under it, as when its server
///    ignores `resource` on a refresh), the person signs in: in the named account, else in an
///    account of the resource's own (`host:port/path`), so that the sign-in tried stays as it was.
/// 6. The request is sent again with the resource's token (RFC 8707), refreshed and retried once
///    on a 401.
///
/// What it learned is kept (``KnownResource``): a later call, in any process, needs the URL alone.
/// Callers that need a sign-in or a step-up for the same resource at once (in this process, or in
/// processes that share the store's lock) share one: the first signs in, the others wait under the
/// store's lock and use it.
///
/// A refusal for want of a scope (403 `insufficient_scope`) or of a stronger sign-in leads to one
/// more sign-in, as the operation's ``StepUpPlan`` says and when ``Options/stepsUp`` agrees: for
/// the scopes held and those the challenge names (else those the resource lists), registering the
/// client again first when its registration does not cover them (the narrower client's sign-in is
/// then signed out). The request is sent once more; a second refusal is an error, never a loop.
///
/// A token goes only to the resource it was issued for: a request to a URL the resource does not
/// cover is sent as a new resource.
public final class ResourceClient: Sendable {
    /// Where the client keeps things, and how it signs in.
    public struct Options: Sendable {
        /// The client's name, as registered (RFC 7591 `client_name`), and the key of its kept
        /// registration.
        public var clientName: String
        /// The client's ID metadata document, used as its client id where the server takes one.
        public var clientMetadataDocument: URL?
        /// A client registered by an authorization server's administrator: used at that server
        /// (compared by its issuer URL) instead of a registration of the client's own.
        public var configuredClient: (issuer: URL, clientID: String)?
        /// Where tokens and registrations are kept.
        public var store: any TokenStore
        /// Where what was learned about each resource is kept.
        public var knownResources: any KnownResourceStore
        /// Names a sign-in's account after who signed in, and says which account is active;
        /// `nil`: sign-ins go to ``TokenKey/defaultAccount``.
        public var activeAccounts: (any ActiveAccountStore)?
        /// The transport for the resource, discovery and token requests.
        public var transport: any HTTPTransport
        /// The account whose sign-in holds the tokens of a resource not known yet; `nil`: see the
        /// type's discussion. A known resource's tokens stay in the account kept with it.
        public var account: String?
        /// The scopes to ask for; `nil`: the challenge's, else the metadata's.
        public var scopes: [String]?
        /// Asked before any request to an authorization server a resource's metadata names;
        /// throws to refuse it. `nil`: every server is contacted.
        public var approvesServer: (@Sendable (_ issuer: URL, _ resource: URL) async throws -> Void)?
        /// Asked before a resource gets its token from an existing sign-in that was not made for it
        /// (the sign-in of another resource of the same server, or of the active account), as a
        /// refresh with its `resource` (RFC 8707 §2.2) would do with no browser and no question:
        /// a server that ignores `resource` on a refresh would issue a token that works at the
        /// other resource too. `true` lends the sign-in (the resource's record then names the
        /// account); `false` signs in for the resource alone, in an account of its own; a throw
        /// stops the request. `nil`, the default: never lent.
        public var sharesSignIn: (@Sendable (SharedSignIn) async throws -> Bool)?
        /// Asked before a step-up's sign-in (for more scopes, or a stronger sign-in), and before
        /// registering the client again for more scopes; `false` leaves the refusal as it is.
        public var stepsUp: @Sendable (ResourceSignIn) async throws -> Bool
        /// Makes the authenticator that signs in at a resource's authorization server (its
        /// account does not matter). `nil`: a ``GenericOIDCProvider`` with the metadata in MCP's
        /// order, ``configuredClient`` or a registration for the server's scopes.
        public var authenticatorAt: (@Sendable (ResourceServer) async throws -> Authenticator)?
        /// Logs discovery and sign-in steps (never a token).
        public var logger: Logger

        /// Options for `clientName`, keeping tokens and records in memory.
        public init(
            clientName: String,
            transport: any HTTPTransport,
            store: any TokenStore = MemoryTokenStore(),
            knownResources: any KnownResourceStore = MemoryKnownResourceStore(),
            logger: Logger = Logger(label: "NativeAuth.ResourceClient")
        ) {
            self.clientName = clientName
            self.transport = transport
            self.store = store
            self.knownResources = knownResources
            self.stepsUp = { _ in true }
            self.logger = logger
        }
    }

    /// What one resource's sign-ins go through: where, as which client, in which account.
    struct Held: Sendable {
        var resource: URL
        var issuer: URL
        var scopes: [String]
        /// The client id configured for ``issuer`` (kept with the record); `nil` for a client of
        /// its own there.
        var clientID: String?
        /// The scopes the client was registered for; `nil` when it was not registered here (a
        /// configured client, or an authenticator the app gave).
        var registeredFor: [String]?
        /// The account named for it, or kept with its record.
        var account: String?
        /// The authenticator at ``issuer``, for ``account`` once it is known.
        var authenticator: Authenticator
        /// Whether its account holds the sign-in of another resource of the server, tried first.
        var borrowed = false
        /// Whether its account's sign-in may get its tokens though it was not made for it: the
        /// app gave the authenticator (``use(_:for:)``), or ``Options/sharesSignIn`` agreed.
        var approved = false
    }

    let options: Options
    let presenter: @Sendable (ResourceSignIn) async throws -> any UserAgentPresenter
    let held = Locked([Held]())

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - options: Where things are kept, and how.
    ///   - presenter: The presenter for a sign-in (a loopback presenter listening on
    ///     ``ResourceSignIn/redirectPort``, say).
    public init(
        options: Options,
        presenter: @escaping @Sendable (ResourceSignIn) async throws -> any UserAgentPresenter
    ) {
        self.options = options
        self.presenter = presenter
    }

    /// Tokens for `resource` come from `authenticator`'s sign-in (its account, client and
    /// scopes): for an app that configured the resource's authorization server itself.
    public func use(_ authenticator: Authenticator, for resource: URL) {
        let configuration = authenticator.provider.configuration
        guard let issuer = configuration.issuer ?? URL(string: authenticator.key.issuer) else { return }
        let entry = Held(
            resource: resource, issuer: issuer, scopes: configuration.scopes,
            clientID: configuration.clientID, registeredFor: nil, account: authenticator.key.account,
            authenticator: authenticator, approved: true)
        held.withLock { $0.insert(entry, at: 0) }
    }

    // MARK: - Sending

    /// Sends `request` with a token for the resource at its URL, finding the resource and signing
    /// in first when needed (see the type's discussion).
    ///
    /// - Parameters:
    ///   - request: The request; its `Authorization` header is set here (on the first try to an
    ///     unknown URL, none).
    ///   - body: Its body, sent again as it is on a retry.
    ///   - sink: Where a successful answer's body goes as it arrives (see
    ///     ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)``).
    /// - Returns: The answer. A 2xx without a token when the URL needs none; a 401 from a
    ///   resource that refuses its fresh token.
    /// - Throws: ``AuthError``: what discovery, registration and the sign-in throw;
    ///   ``AuthError/Code/insufficientScope`` when a refusal for want of scopes stands (no step-up
    ///   agreed, or one made already).
    public func send(
        _ request: HTTPRequest, body: Data? = nil, streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        guard let url = request.url else {
            throw AuthError(.configurationInvalid, "the request has no URL")
        }
        try EndpointPolicy.validate(url)
        var entry: Held
        if let known = try await known(url) {
            entry = known
        } else {
            // Sent without a token: an answer other than a 401 is the answer.
            let (first, firstBody) =
                if let sink {
                    try await options.transport.send(request, body: body, streamingTo: sink)
                } else {
                    try await options.transport.send(request, body: body)
                }
            guard first.status.code == 401 else { return (first, firstBody) }
            entry = try await discover(url, answer: first)
        }
        entry = try await signedIn(entry)
        var plan = StepUpPlan()
        var reconsidered = false
        while true {
            let result: (HTTPResponse, Data)
            do {
                (entry, result) = try await answer(entry, request, body: body, streamingTo: sink)
            } catch let error as AuthError where error.isLoginRequired && !reconsidered {
                // The token is gone and cannot be renewed (no refresh token, or a refused one):
                // where the resource now sends its clients, a sign-in again.
                reconsidered = true
                entry = try await reconsidering(entry, request, body: body, after: error) ?? entry
                continue
            } catch let error as AuthError {
                let granted = try await entry.authenticator.currentTokens()?.scopes ?? []
                switch plan.next(after: error, held: granted, listed: entry.scopes) {
                case .stop(let final):
                    throw final
                case .signIn(let scopes, let options):
                    guard let widened = try await steppedUp(entry, union: scopes, options: options)
                    else { throw error }
                    entry = widened
                    continue
                }
            }
            if result.0.status.code == 401, !reconsidered {
                // Refused with a fresh token: the resource may have moved to another authorization
                // server (its metadata says so), whose sign-in it takes.
                reconsidered = true
                if let moved = try await reconsidering(entry, request, body: body, after: nil) {
                    entry = moved
                    continue
                }
            }
            // A resource that refuses its own fresh token is not worth remembering.
            if result.0.status.code != 401 { try await remember(entry) }
            return result
        }
    }

    /// The answer to `request` with the resource's token under `entry`'s sign-in, and the entry it
    /// was sent under. When the resource refuses every token had under another resource's sign-in
    /// (its server issued them for that resource, ignoring `resource` on a refresh, as the MCP
    /// SDK's does): a sign-in of its own, and the request again.
    private func answer(
        _ entry: Held, _ request: HTTPRequest, body: Data?, streamingTo sink: ResponseBodySink?
    ) async throws -> (Held, (HTTPResponse, Data)) {
        do {
            return (
                entry,
                try await entry.authenticator.send(
                    request, body: body, for: .resource(entry.resource), streamingTo: sink)
            )
        } catch let error as AuthError where error.code == .invalidToken && entry.borrowed {
            let borrowed = entry.authenticator
            let own = try await signIn(entry, into: entry.ownAccountName, reason: .notCovered(error))
            try await borrowed.discardResourceTokens(for: entry.resource)
            return (
                own,
                try await own.authenticator.send(
                    request, body: body, for: .resource(own.resource), streamingTo: sink)
            )
        }
    }

    // MARK: - Tokens, for transports that send the request themselves

    /// The token for the resource at `url` when the resource is known (this process found it, or
    /// an earlier one: ``KnownResource``) and its sign-in holds one; `nil` otherwise (send the
    /// request, and hand its 401 to ``accessToken(for:answering:refused:)``).
    public func knownAccessToken(for url: URL) async throws -> ResourceToken? {
        guard let entry = try await known(url) else { return nil }
        do {
            return try await entry.authenticator.resourceToken(for: entry.resource)
        } catch let error as AuthError where error.isLoginRequired {
            return nil
        }
    }

    /// The token for the resource at `url`: when it is not known, found from the 401 of a `GET`
    /// without a token, signing in when needed (for a program that sends the token itself).
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/metadataUnavailable`` when `url` answers without a
    ///   401 (it names no authorization server); what discovery, registration and the sign-in throw.
    public func accessToken(for url: URL) async throws -> ResourceToken {
        try EndpointPolicy.validate(url)
        if var entry = try await known(url) {
            entry = try await signedIn(entry)
            let token = try await entry.authenticator.resourceToken(for: entry.resource)
            try await remember(entry)
            return token
        }
        var probe = HTTPRequest(method: .get, url: url)
        probe.headerFields[.accept] = "application/json, text/event-stream"
        let (answer, _) = try await options.transport.send(probe, body: nil)
        guard answer.status.code == 401 else {
            throw AuthError(
                .metadataUnavailable,
                "\(Redaction.scrubURL(url.absoluteString)) answered HTTP \(answer.status.code) to a request without a"
                    + " token, not 401: it names no authorization server",
                hint: "check the URL, or configure the API's authorization server", operation: .discovery)
        }
        return try await accessToken(for: url, answering: answer, refused: nil)
    }

    /// A token for the resource at `url`, after its 401 `answer`: the resource found (from the
    /// answer, unless known), the token `refused` dropped, another one got, signing in when
    /// needed.
    ///
    /// - Parameters:
    ///   - url: The URL the request went to.
    ///   - answer: Its 401 (its `WWW-Authenticate` names the metadata).
    ///   - refused: The token the request carried, if any.
    public func accessToken(for url: URL, answering answer: HTTPResponse, refused: String?) async throws
        -> ResourceToken
    {
        var entry: Held
        if let known = try await known(url) {
            entry = known
        } else {
            entry = try await discover(url, answer: answer)
        }
        if let refused { _ = try await entry.authenticator.discardAccessToken(refused) }
        entry = try await signedIn(entry)
        let token = try await entry.authenticator.resourceToken(for: entry.resource)
        try await remember(entry)
        return token
    }

    /// After an answer that refuses the resource's token for want of a scope (403
    /// `insufficient_scope`) or of a stronger sign-in, from the resource at `url`: the step-up
    /// ``send(_:body:streamingTo:)`` makes, as `plan` (the operation's) says. Returns the new
    /// token, or `nil` when no sign-in was made (the answer asks for none, the resource is not
    /// known, the plan stops, or ``Options/stepsUp`` said no).
    public func steppingUp(for url: URL, answering response: HTTPResponse, plan: inout StepUpPlan) async throws
        -> ResourceToken?
    {
        guard let entry = try await known(url),
            let refusal = entry.authenticator.client.stepUpRefusal(response)
        else { return nil }
        let granted = try await entry.authenticator.currentTokens()?.scopes ?? []
        guard case .signIn(let scopes, let options) = plan.next(after: refusal, held: granted, listed: entry.scopes),
            let widened = try await steppedUp(entry, union: scopes, options: options)
        else { return nil }
        let token = try await widened.authenticator.resourceToken(for: widened.resource)
        try await remember(widened)
        return token
    }
}
