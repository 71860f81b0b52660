public import Foundation
public import HTTPTypes
public import Logging
internal import NIOConcurrencyHelpers

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
/// A 403 `insufficient_scope` leads to one more sign-in, when ``Options/stepsUp`` agrees: for the
/// scopes held and those the challenge names (else those the resource lists), registering the
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
        /// Asked before a sign-in for more scopes (a 403 `insufficient_scope`), and before
        /// registering the client again for them; `false` leaves the refusal as it is.
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
    fileprivate struct Held: Sendable {
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
    }

    private let options: Options
    private let presenter: @Sendable (ResourceSignIn) async throws -> any UserAgentPresenter
    private let held = NIOLockedValueBox([Held]())

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
            authenticator: authenticator)
        held.withLockedValue { $0.insert(entry, at: 0) }
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
    ///     ``Authenticator/send(_:body:streamingTo:)``).
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
        func answer() async throws -> (HTTPResponse, Data) {
            try await entry.authenticator.send(request, body: body, for: entry.resource, streamingTo: sink)
        }
        let result: (HTTPResponse, Data)
        do {
            entry = try await signedIn(entry)
            do {
                result = try await answer()
            } catch let error as AuthError where error.code == .invalidToken && entry.borrowed {
                // The resource refuses every token had under another resource's sign-in: its server
                // issued them for that resource (it ignores `resource` on a refresh, as the MCP
                // SDK's does). A sign-in of its own, and the request again.
                let borrowed = entry.authenticator
                entry = try await signIn(entry, into: entry.ownAccountName, reason: .notCovered(error))
                _ = try await borrowed.lifecycle.removeResourceTokens(for: entry.resource)
                result = try await answer()
            }
        } catch let error as AuthError where error.code == .insufficientScope {
            guard let (widened, asked) = try await steppedUp(entry, missing: error.missingScopes) else { throw error }
            entry = widened
            do {
                result = try await answer()
            } catch var again as AuthError where again.code == .insufficientScope {
                again.message +=
                    "; still refused after a sign-in for "
                    + TerminalText.sanitized(asked.joined(separator: " ")) + ", not asking again"
                throw again
            }
        }
        // A resource that refuses its own fresh token is not worth remembering.
        if result.0.status.code != 401 { try await remember(entry) }
        return result
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

    /// After a 403 `insufficient_scope` from the resource at `url` (`missing`: the scopes its
    /// challenge names, if any): one sign-in for more scopes, as ``send(_:body:streamingTo:)``
    /// makes. Returns the new token, or `nil` when no sign-in was made (the resource is not known,
    /// the sign-in lacks none of the scopes, or ``Options/stepsUp`` said no).
    public func steppingUp(for url: URL, missing: [String]?) async throws -> ResourceToken? {
        guard let entry = try await known(url), let (widened, _) = try await steppedUp(entry, missing: missing) else {
            return nil
        }
        let token = try await widened.authenticator.resourceToken(for: widened.resource)
        try await remember(widened)
        return token
    }

    // MARK: - The steps

    /// The resource that covers `url`: found in this process, else kept from an earlier one.
    private func known(_ url: URL) async throws -> Held? {
        if let entry = held.withLockedValue({ $0.first { ProtectedResourceMetadata.covers($0.resource, url) } }) {
            return entry
        }
        guard let record = try await options.knownResources.knownResource(covering: url) else { return nil }
        return try await adopt(
            resource: record.resource, issuer: record.issuer, scopes: record.scopes, clientID: record.clientID,
            account: record.account)
    }

    /// From the 401 to the authorization server the resource's metadata names.
    private func discover(_ url: URL, answer: HTTPResponse) async throws -> Held {
        let metadata = try await ProtectedResourceMetadata.discover(
            for: url, response: answer, transport: options.transport)
        guard let issuer = metadata.authorizationServers.first else {
            throw AuthError(
                .configurationInvalid,
                "the protected resource metadata of \(Redaction.scrubURL(url.absoluteString)) names no"
                    + " authorization server",
                hint: "configure the API's authorization server", field: "issuer")
        }
        try await options.approvesServer?(issuer, metadata.resource)
        let challenge = answer.headerFields[values: .wwwAuthenticate].lazy
            .compactMap { BearerChallenge(headerValue: $0) }.first
        let scopes =
            options.scopes ?? challenge?.scope.map { $0.split(separator: " ").map(String.init) }
            ?? metadata.scopesSupported
        options.logger.info(
            "the resource takes tokens from its authorization server",
            metadata: [
                "resource": "\(Redaction.scrubURL(metadata.resource.absoluteString))",
                "issuer": "\(Redaction.scrubURL(issuer.absoluteString))",
            ])
        return try await adopt(
            resource: metadata.resource, issuer: issuer, scopes: scopes, clientID: nil, account: nil)
    }

    /// The entry for a resource at `issuer`, its authenticator made, held for this process.
    private func adopt(resource: URL, issuer: URL, scopes: [String], clientID kept: String?, account: String?)
        async throws -> Held
    {
        let configured =
            options.configuredClient.flatMap { Self.sameIssuer($0.issuer, issuer) ? $0.clientID : nil }
        let clientID = kept ?? configured
        var registration = options.scopes ?? scopes
        for scope in scopes where !registration.contains(scope) { registration.append(scope) }
        let authenticator = try await makeAuthenticator(
            ResourceServer(resource: resource, issuer: issuer, scopes: registration, clientID: clientID))
        let entry = Held(
            resource: resource, issuer: issuer, scopes: scopes, clientID: clientID,
            registeredFor: clientID == nil ? registration : nil, account: account ?? options.account,
            authenticator: authenticator.forAccount(account ?? options.account ?? TokenKey.defaultAccount))
        hold(entry)
        return entry
    }

    private func hold(_ entry: Held) {
        held.withLockedValue { entries in
            entries.removeAll { $0.resource == entry.resource }
            entries.insert(entry, at: 0)
        }
    }

    /// The authenticator at `server.issuer`: the app's, else a generic one that registers.
    private func makeAuthenticator(_ server: ResourceServer) async throws -> Authenticator {
        if let make = options.authenticatorAt { return try await make(server) }
        var configuration = ProviderConfiguration(
            issuer: server.issuer, clientID: server.clientID ?? "", scopes: server.scopes)
        configuration.resources = [server.resource]
        configuration.metadataOrder = .oauth
        configuration.clientMetadataDocument = options.clientMetadataDocument
        let base = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: options.store,
            transport: options.transport, logger: options.logger)
        if server.clientID != nil { return base }
        let client = ClientMetadata(
            clientName: options.clientName, redirectURIs: try ClientMetadata.loopbackRedirectURIs(),
            scope: server.scopes.isEmpty ? nil : server.scopes.joined(separator: " "),
            softwareID: options.clientName, softwareVersion: NativeAuthVersion.current,
            metadataDocument: options.clientMetadataDocument)
        return try await base.registeringClient(client)
    }

    /// `entry` with an account whose sign-in holds a token for its resource, signing in when
    /// none does (see the type's discussion, step 5).
    private func signedIn(_ entry: Held) async throws -> Held {
        var entry = entry
        if entry.account == nil {
            let (first, borrowed) = try await firstAccount(for: entry)
            entry.authenticator = entry.authenticator.forAccount(first)
            entry.borrowed = borrowed
        }
        guard try await entry.authenticator.currentTokens() != nil else {
            return try await signIn(entry, into: entry.account, reason: .firstSignIn)
        }
        do {
            _ = try await entry.authenticator.resourceToken(for: entry.resource)
            return settled(entry)
        } catch let error as AuthError
            where error.isLoginRequired || ["invalid_target", "invalid_scope"].contains(error.oauthError ?? "")
        {
            options.logger.notice(
                "the sign-in tried does not cover the resource",
                metadata: [
                    "account": "\(entry.authenticator.key.account)",
                    "resource": "\(Redaction.scrubURL(entry.resource.absoluteString))", "reason": "\(error.message)",
                ])
            // Unless one was named: an account of its own, so that the sign-in tried stays as it was.
            return try await signIn(entry, into: entry.account ?? entry.ownAccountName, reason: .notCovered(error))
        }
    }

    /// The account tried first for a resource with none named: one holding a token of another
    /// resource of the same server (borrowed), else the active one.
    private func firstAccount(for entry: Held) async throws -> (String, borrowed: Bool) {
        if let sibling = try await options.knownResources.knownResources().first(where: {
            Self.sameIssuer($0.issuer, entry.issuer) && $0.resource != entry.resource
        }) {
            return (sibling.account, true)
        }
        if let active = options.activeAccounts {
            return (try await Accounts(entry.authenticator, active: active).active() ?? TokenKey.defaultAccount, false)
        }
        return (TokenKey.defaultAccount, false)
    }

    /// The person signs in for `entry`'s resource into the account `name`; without one, into an
    /// account named after who signed in (with ``Options/activeAccounts``), else the default one.
    ///
    /// One sign-in at a time per resource, under the store's lock (across processes, for a store
    /// that shares its lock): a caller that waited uses the sign-in the one before it made, kept in
    /// the resource's record, instead of opening the browser again.
    private func signIn(_ entry: Held, into name: String?, reason: ResourceSignIn.Reason) async throws -> Held {
        return try await options.store.lock.withLock(Self.lockKey(entry), timeout: Self.signInLockTimeout) {
            if let made = try await self.signInMadeMeanwhile(for: entry, reason: reason) { return made }
            let made = try await self.signingIn(entry, into: name, reason: reason)
            try await self.remember(made)
            return made
        }
    }

    /// The lock key of the sign-ins for `entry`'s resource: its client id is no sign-in's.
    private static func lockKey(_ entry: Held) -> TokenKey {
        TokenKey(
            issuer: entry.issuer.absoluteString, clientID: "nativeauth:resource-sign-in",
            account: entry.resource.absoluteString)
    }
    /// How long a caller waits for another's sign-in for the same resource: a person's sign-in
    /// in the browser, and some.
    static let signInLockTimeout = Duration.seconds(900)

    /// The sign-in for `entry`'s resource that another caller made while this one waited: the
    /// account its record names holds tokens, and is not the account found lacking (unless it had
    /// none at all).
    private func signInMadeMeanwhile(for entry: Held, reason: ResourceSignIn.Reason) async throws -> Held? {
        guard let record = try await options.knownResources.knownResource(covering: entry.resource),
            record.resource == entry.resource
        else { return nil }
        let lacking = entry.authenticator.key.account
        if case .firstSignIn = reason {} else if record.account == lacking { return nil }
        var made = entry
        made.borrowed = false
        made.authenticator = entry.authenticator.forAccount(record.account)
        guard try await made.authenticator.currentTokens() != nil else { return nil }
        options.logger.debug("another caller signed in for the resource meanwhile; using that sign-in")
        return settled(made)
    }

    private func signingIn(_ entry: Held, into name: String?, reason: ResourceSignIn.Reason) async throws -> Held {
        var entry = entry
        entry.borrowed = false
        entry.authenticator = entry.authenticator.forAccount(name ?? TokenKey.defaultAccount)
        let presenter = try await presenter(signInFor: entry, reason: reason, scopes: entry.scopes)
        if name == nil, let active = options.activeAccounts {
            let result = try await Accounts(entry.authenticator, active: active).login(presenter: presenter)
            entry.authenticator = entry.authenticator.forAccount(result.account)
        } else {
            try await entry.authenticator.login(presenter: presenter)
        }
        return settled(entry)
    }

    /// `entry` with its account fixed, held for this process.
    private func settled(_ entry: Held) -> Held {
        var entry = entry
        entry.account = entry.authenticator.key.account
        hold(entry)
        return entry
    }

    private func presenter(signInFor entry: Held, reason: ResourceSignIn.Reason, scopes: [String]) async throws
        -> any UserAgentPresenter
    {
        try await presenter(
            ResourceSignIn(
                reason: reason, resource: entry.resource, issuer: entry.issuer,
                account: entry.authenticator.key.account, scopes: scopes,
                redirectPort: entry.authenticator.provider.configuration.loopbackRedirectPort))
    }

    /// After a 403 `insufficient_scope` (`named`: the scopes its challenge named): the person
    /// signs in again, into the same account, for the scopes held and those named, else those the
    /// resource lists, the client registered again first when its registration lacks them; the
    /// resource's token is dropped, so that the next is asked for under the wider sign-in.
    /// Returns the entry after and the scopes asked for, or `nil` when the sign-in lacks none of
    /// the scopes or the step-up was not agreed: never a loop.
    ///
    /// One step-up at a time per resource, under the store's lock, as sign-ins are: a caller that
    /// waited uses the wider sign-in another made meanwhile.
    private func steppedUp(_ entry: Held, missing named: [String]?) async throws -> (Held, [String])? {
        let granted = try await entry.authenticator.currentTokens()?.scopes ?? []
        let missing = (named ?? entry.scopes).filter { !granted.contains($0) }
        guard !missing.isEmpty else { return nil }
        return try await options.store.lock.withLock(Self.lockKey(entry), timeout: Self.signInLockTimeout) {
            if let made = try await self.stepUpMadeMeanwhile(for: entry, missing: missing) { return made }
            guard let made = try await self.steppingUp(entry, granted: granted, missing: missing) else { return nil }
            try await self.remember(made.0)
            return made
        }
    }

    /// The wider sign-in another caller made for `entry`'s resource while this one waited: this
    /// process's, else the one its record names (another process's, perhaps with a registration
    /// made again); `nil` when none holds `missing`.
    private func stepUpMadeMeanwhile(for entry: Held, missing: [String]) async throws -> (Held, [String])? {
        func holding(_ candidate: Held) async throws -> (Held, [String])? {
            guard let scopes = try await candidate.authenticator.currentTokens()?.scopes,
                missing.allSatisfy(scopes.contains)
            else { return nil }
            options.logger.debug("another caller signed in for more scopes meanwhile; using that sign-in")
            return (settled(candidate), scopes)
        }
        if let current = held.withLockedValue({ $0.first { $0.resource == entry.resource } }),
            let made = try await holding(current)
        {
            return made
        }
        guard let record = try await options.knownResources.knownResource(covering: entry.resource),
            record.resource == entry.resource, missing.allSatisfy(record.scopes.contains)
        else { return nil }
        let adopted = try await adopt(
            resource: record.resource, issuer: record.issuer, scopes: record.scopes, clientID: record.clientID,
            account: record.account)
        return try await holding(adopted)
    }

    private func steppingUp(_ entry: Held, granted: [String], missing: [String]) async throws -> (Held, [String])? {
        let union = granted + missing
        let asked = ResourceSignIn(
            reason: .moreScopes(missing), resource: entry.resource, issuer: entry.issuer,
            account: entry.authenticator.key.account, scopes: union, redirectPort: nil)
        guard try await options.stepsUp(asked) else { return nil }
        var next = entry
        next.scopes = entry.scopes + missing.filter { !entry.scopes.contains($0) }
        if let registered = entry.registeredFor, !union.allSatisfy(registered.contains) {
            // The server takes only the scopes a client registered for (the MCP SDK's does).
            let wider = registered + union.filter { !registered.contains($0) }
            options.logger.info(
                "registering the client again for the scopes the resource asks for",
                metadata: ["scopes": "\(TerminalText.sanitized(wider.joined(separator: " ")))"])
            next.authenticator = try await makeAuthenticator(
                ResourceServer(resource: entry.resource, issuer: entry.issuer, scopes: wider, clientID: nil)
            ).forAccount(entry.authenticator.key.account)
            next.registeredFor = wider
        }
        let presenter = try await presenter(signInFor: next, reason: .moreScopes(missing), scopes: union)
        try await next.authenticator.login(presenter: presenter, scopes: union)
        if next.authenticator.key != entry.authenticator.key {
            // The narrower client's sign-in in this account is replaced: signed out, not left behind.
            _ = try? await entry.authenticator.logout()
        }
        _ = try await next.authenticator.lifecycle.removeResourceTokens(for: entry.resource)
        return (settled(next), union)
    }

    /// Keeps what was learned about `entry`'s resource, for later processes.
    private func remember(_ entry: Held) async throws {
        try await options.knownResources.remember(
            KnownResource(
                resource: entry.resource, issuer: entry.issuer, account: entry.authenticator.key.account,
                scopes: entry.scopes, clientID: entry.clientID))
    }

    /// Whether two issuer URLs name one server (a trailing slash aside).
    private static func sameIssuer(_ one: URL, _ other: URL) -> Bool {
        func trimmed(_ url: URL) -> Substring {
            let text = url.absoluteString
            return text.hasSuffix("/") ? text.dropLast() : Substring(text)
        }
        return trimmed(one) == trimmed(other)
    }
}

extension ResourceClient.Held {
    /// The name of an account of its own, for when the sign-in tried first does not cover it: its
    /// host, port and path (`127.0.0.1:8000/mcp`).
    fileprivate var ownAccountName: String {
        var name = (resource.host ?? "resource") + (resource.port.map { ":\($0)" } ?? "") + resource.path
        while name.hasSuffix("/") { name.removeLast() }
        return String(name.prefix(Accounts.maximumNameLength))
    }
}

/// A sign-in a ``ResourceClient`` is about to start: for which resource, at which server, why.
public struct ResourceSignIn: Sendable {
    /// Why the person signs in.
    public enum Reason: Sendable {
        /// No sign-in holds a token for the resource yet.
        case firstSignIn
        /// The sign-in tried does not cover the resource (the server refused it, or it ended).
        case notCovered(AuthError)
        /// The resource refused its token for want of these scopes (403 `insufficient_scope`).
        case moreScopes([String])
    }

    /// Why.
    public var reason: Reason
    /// The resource the tokens are for.
    public var resource: URL
    /// The authorization server the person signs in at.
    public var issuer: URL
    /// The account the tokens go to.
    public var account: String
    /// The scopes asked for.
    public var scopes: [String]
    /// The loopback port the client was registered with (servers that match redirect URIs
    /// exactly take no other); `nil` for any (RFC 8252 §7.3), or before the registration.
    public var redirectPort: Int?
}

/// Where a ``ResourceClient`` signs in for a resource: what its ``ResourceClient/Options/authenticatorAt``
/// gets.
public struct ResourceServer: Sendable {
    /// The resource (RFC 8707) the tokens are for.
    public var resource: URL
    /// The authorization server its metadata named.
    public var issuer: URL
    /// The scopes to register the client for.
    public var scopes: [String]
    /// The client id configured for the server; `nil`: the client registers itself.
    public var clientID: String?
}
