internal import Foundation
internal import HTTPTypes
internal import Logging

// The steps of a resource-first sign-in: finding the resource, its server and account, signing in
// once per resource (across processes), stepping up, and remembering what was learned.
extension ResourceClient {
    /// The resource that covers `url`: found in this process, else kept from an earlier one.
    func known(_ url: URL) async throws -> Held? {
        if let entry = held.withLock({ $0.first { ProtectedResourceMetadata.covers($0.resource, url) } }) {
            return entry
        }
        guard let record = try await options.knownResources.knownResource(covering: url) else { return nil }
        return try await adopt(
            resource: record.resource, issuer: record.issuer, scopes: record.scopes, clientID: record.clientID,
            account: record.account)
    }

    /// From the 401 to the authorization server the resource's metadata names.
    func discover(_ url: URL, answer: HTTPResponse) async throws -> Held {
        let metadata = try await ProtectedResourceMetadata.discover(
            for: url, response: answer, transport: options.transport)
        guard let issuer = metadata.authorizationServers.first else {
            throw AuthError(
                .configurationInvalid,
                "the protected resource metadata of \(Redaction.scrubURL(url.absoluteString)) names no"
                    + " authorization server",
                hint: "configure the API's authorization server", field: Setting.issuer.key)
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
    func adopt(resource: URL, issuer: URL, scopes: [String], clientID kept: String?, account: String?)
        async throws -> Held
    {
        let configured =
            options.configuredClient.flatMap { IssuerIdentifier.same($0.issuer, issuer) ? $0.clientID : nil }
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

    func hold(_ entry: Held) {
        held.withLock { entries in
            entries.removeAll { $0.resource == entry.resource }
            entries.insert(entry, at: 0)
        }
    }

    /// The authenticator at `server.issuer`: the app's, else a generic one that registers.
    func makeAuthenticator(_ server: ResourceServer) async throws -> Authenticator {
        if let make = options.authenticatorAt { return try await make(server) }
        var configuration = ProviderConfiguration(
            issuer: server.issuer, clientID: server.clientID ?? "", scopes: server.scopes)
        configuration.resources = [server.resource]
        configuration.metadataOrder = .oauth
        // MCP's MUST: a server that does not announce PKCE with S256 is not used.
        configuration.requiresAnnouncedPKCE = true
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
    func signedIn(_ entry: Held) async throws -> Held {
        var entry = entry
        if entry.account == nil {
            let (first, borrowed) = try await firstAccount(for: entry)
            entry.authenticator = entry.authenticator.forAccount(first)
            entry.borrowed = borrowed
        }
        guard let tokens = try await entry.authenticator.currentTokens() else {
            return try await signIn(entry, into: entry.account, reason: .firstSignIn)
        }
        if !entry.approved, try await !madeFor(entry, tokens) {
            guard try await lends(tokens, to: entry) else { return try await signedInAlone(entry) }
            entry.approved = true
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

    /// Whether `tokens`, the sign-in of `entry`'s account, were got for its resource: their token
    /// request named it (RFC 8707), or the resource's record names the account (a sign-in made
    /// for it, or one lent to it with the person's yes, in this process or an earlier one).
    func madeFor(_ entry: Held, _ tokens: TokenSet) async throws -> Bool {
        if tokens.resources.contains(entry.resource.absoluteString) { return true }
        guard let record = try await options.knownResources.knownResource(covering: entry.resource) else {
            return false
        }
        return record.resource == entry.resource && record.account == entry.authenticator.key.account
            && IssuerIdentifier.same(record.issuer, entry.issuer)
    }

    /// Whether the sign-in `tokens`, made for other resources (or none), may get a token for
    /// `entry`'s resource: ``Options/sharesSignIn`` says so. Without it, never.
    func lends(_ tokens: TokenSet, to entry: Held) async throws -> Bool {
        guard let shares = options.sharesSignIn else { return false }
        let asked = SharedSignIn(
            resource: entry.resource, issuer: entry.issuer, account: entry.authenticator.key.account,
            madeFor: tokens.resources.compactMap(URL.init(string:)))
        let lent = try await shares(asked)
        options.logger.info(
            lent ? "an existing sign-in is lent to the resource" : "an existing sign-in is not lent to the resource",
            metadata: [
                "account": "\(asked.account)", "resource": "\(Redaction.scrubURL(entry.resource.absoluteString))",
            ])
        return lent
    }

    /// `entry`'s resource with a sign-in of its own, when the one its account holds is not lent to
    /// it: in the account of its own (kept if it holds one made for the resource), unless an
    /// account was named, whose sign-in stays as it was.
    func signedInAlone(_ entry: Held) async throws -> Held {
        if let named = entry.account {
            throw AuthError(
                .configurationInvalid,
                "the sign-in of account \(named) at \(Redaction.scrubURL(entry.issuer.absoluteString)) was not made for"
                    + " \(Redaction.scrubURL(entry.resource.absoluteString)), and is not lent to it",
                hint: "approve lending it, or name another account for the resource", field: Setting.account.key)
        }
        var own = entry
        own.borrowed = false
        own.authenticator = entry.authenticator.forAccount(entry.ownAccountName)
        if let tokens = try await own.authenticator.currentTokens(), try await madeFor(own, tokens) {
            own.approved = true
            return try await signedIn(settled(own))
        }
        var made = try await signIn(own, into: entry.ownAccountName, reason: .firstSignIn)
        made.approved = true
        hold(made)
        return made
    }

    /// The account tried first for a resource with none named: one holding a token of another
    /// resource of the same server (borrowed), else the active one.
    func firstAccount(for entry: Held) async throws -> (String, borrowed: Bool) {
        if let sibling = try await options.knownResources.knownResources().first(where: {
            IssuerIdentifier.same($0.issuer, entry.issuer) && $0.resource != entry.resource
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
    func signIn(_ entry: Held, into name: String?, reason: ResourceSignIn.Reason) async throws -> Held {
        return try await options.store.lock.withLock(Self.lockKey(entry), timeout: Self.signInLockTimeout) {
            if let made = try await self.signInMadeMeanwhile(for: entry, reason: reason) { return made }
            let made = try await self.signingIn(entry, into: name, reason: reason)
            try await self.remember(made)
            return made
        }
    }

    /// The lock key of the sign-ins for `entry`'s resource: its client id is no sign-in's.
    static func lockKey(_ entry: Held) -> TokenKey {
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
    func signInMadeMeanwhile(for entry: Held, reason: ResourceSignIn.Reason) async throws -> Held? {
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

    func signingIn(_ entry: Held, into name: String?, reason: ResourceSignIn.Reason) async throws -> Held {
        var entry = entry
        entry.borrowed = false
        entry.authenticator = entry.authenticator.forAccount(name ?? TokenKey.defaultAccount)
        let presenter = try await presenter(signInFor: entry, reason: reason, scopes: entry.scopes)
        if name == nil, let active = options.activeAccounts {
            let result = try await Accounts(entry.authenticator, active: active).login(.browser(presenter))
            entry.authenticator = entry.authenticator.forAccount(result.account)
        } else {
            try await entry.authenticator.login(.browser(presenter))
        }
        return settled(entry)
    }

    /// `entry` with its account fixed, held for this process.
    func settled(_ entry: Held) -> Held {
        var entry = entry
        entry.account = entry.authenticator.key.account
        hold(entry)
        return entry
    }

    func presenter(signInFor entry: Held, reason: ResourceSignIn.Reason, scopes: [String]) async throws
        -> any UserAgentPresenter
    {
        try await presenter(
            ResourceSignIn(
                reason: reason, resource: entry.resource, issuer: entry.issuer,
                account: entry.authenticator.key.account, scopes: scopes,
                redirectPort: entry.authenticator.provider.configuration.loopbackRedirectPort))
    }

    /// A step-up's sign-in for `entry`'s resource, into
    /// the same account, asking for `union` (the scopes held and those the resource lacks) with
    /// `options`; the client registered again first when its registration lacks those scopes; the
    /// resource's token dropped, so that the next is asked for under the new sign-in. `nil` when
    /// the step-up was not agreed.
    ///
    /// One step-up at a time per resource, under the store's lock, as sign-ins are: a caller that
    /// waited uses the wider sign-in another made meanwhile.
    func steppedUp(_ entry: Held, union: [String], options loginOptions: LoginOptions) async throws -> Held? {
        let granted = try await entry.authenticator.currentTokens()?.scopes ?? []
        let missing = union.filter { !granted.contains($0) }
        let reason: ResourceSignIn.Reason = missing.isEmpty ? .strongerSignIn(loginOptions) : .moreScopes(missing)
        return try await options.store.lock.withLock(Self.lockKey(entry), timeout: Self.signInLockTimeout) {
            if !missing.isEmpty, let made = try await self.stepUpMadeMeanwhile(for: entry, missing: missing) {
                return made
            }
            guard let made = try await self.steppingUp(entry, union: union, options: loginOptions, reason: reason)
            else {
                return nil
            }
            try await self.remember(made)
            return made
        }
    }

    /// The wider sign-in another caller made for `entry`'s resource while this one waited: this
    /// process's, else the one its record names (another process's, perhaps with a registration
    /// made again); `nil` when none holds `missing`.
    func stepUpMadeMeanwhile(for entry: Held, missing: [String]) async throws -> Held? {
        func holding(_ candidate: Held) async throws -> Held? {
            guard let scopes = try await candidate.authenticator.currentTokens()?.scopes,
                missing.allSatisfy(scopes.contains)
            else { return nil }
            options.logger.debug("another caller signed in for more scopes meanwhile; using that sign-in")
            return settled(candidate)
        }
        if let current = held.withLock({ $0.first { $0.resource == entry.resource } }),
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

    func steppingUp(_ entry: Held, union: [String], options signIn: LoginOptions, reason: ResourceSignIn.Reason)
        async throws -> Held?
    {
        let asked = ResourceSignIn(
            reason: reason, resource: entry.resource, issuer: entry.issuer,
            account: entry.authenticator.key.account, scopes: union, redirectPort: nil)
        guard try await options.stepsUp(asked) else { return nil }
        var next = entry
        for scope in union where !next.scopes.contains(scope) { next.scopes.append(scope) }
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
        let presenter = try await presenter(signInFor: next, reason: reason, scopes: union)
        try await next.authenticator.login(.browser(presenter, options: signIn), scopes: union)
        if next.authenticator.key != entry.authenticator.key {
            // The narrower client's sign-in in this account is replaced: signed out, not left behind.
            _ = try? await entry.authenticator.logout()
        }
        try await next.authenticator.discardResourceTokens(for: entry.resource)
        return settled(next)
    }

    /// After a known resource's token could not be renewed (`error`), or was refused fresh (`nil`):
    /// the request again without a token, and the metadata its 401 names read again (SEP-2352).
    /// When it names another authorization server, the old server's sign-in for the resource is
    /// forgotten and the person signs in at the new one (registering there: nothing of the old
    /// server's client goes to it); when it names the same one, after `error`, a sign-in again
    /// there. `nil` when nothing changed and no sign-in is due (the refusal stands).
    func reconsidering(_ entry: Held, _ request: HTTPRequest, body: Data?, after error: AuthError?) async throws
        -> Held?
    {
        var probe = request
        probe.headerFields[.authorization] = nil
        probe.headerFields[.dpop] = nil
        let (answer, _) = try await options.transport.send(probe, body: body)
        guard answer.status.code == 401, let url = request.url else {
            if let error { throw error }
            return nil
        }
        let metadata = try await ProtectedResourceMetadata.discover(
            for: url, response: answer, transport: options.transport)
        guard let issuer = metadata.authorizationServers.first else {
            if let error { throw error }
            return nil
        }
        guard !IssuerIdentifier.same(issuer, entry.issuer) else {
            guard let error else { return nil }
            return try await signIn(entry, into: entry.account, reason: .notCovered(error))
        }
        try await options.approvesServer?(issuer, metadata.resource)
        options.logger.notice(
            "the resource moved to another authorization server; signing in there",
            metadata: [
                "resource": "\(Redaction.scrubURL(metadata.resource.absoluteString))",
                "from": "\(Redaction.scrubURL(entry.issuer.absoluteString))",
                "to": "\(Redaction.scrubURL(issuer.absoluteString))",
            ])
        // The old server's tokens for the resource: its own token dropped, and a sign-in made for
        // the resource alone signed out (it serves nothing else).
        if let tokens = try await entry.authenticator.currentTokens(),
            tokens.resources == [entry.resource.absoluteString]
        {
            _ = try? await entry.authenticator.logout()
        } else {
            try? await entry.authenticator.discardResourceTokens(for: entry.resource)
        }
        let challenge = answer.headerFields[values: .wwwAuthenticate].lazy
            .compactMap { BearerChallenge(headerValue: $0) }.first
        let scopes =
            options.scopes ?? challenge?.scope.map { $0.split(separator: " ").map(String.init) }
            ?? metadata.scopesSupported
        let moved = try await adopt(
            resource: metadata.resource, issuer: issuer, scopes: scopes, clientID: nil, account: entry.account)
        return try await signIn(moved, into: moved.account, reason: .firstSignIn)
    }

    /// Keeps what was learned about `entry`'s resource, for later processes.
    func remember(_ entry: Held) async throws {
        try await options.knownResources.remember(
            KnownResource(
                resource: entry.resource, issuer: entry.issuer, account: entry.authenticator.key.account,
                scopes: entry.scopes, clientID: entry.clientID))
    }
}
