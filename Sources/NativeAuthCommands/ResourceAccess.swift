internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
@_spi(Provider) internal import NativeAuth
internal import NativeAuthAgent
internal import NativeAuthKeyring
internal import NativeAuthPresenters

/// A protected resource that a command signs in for at the server its metadata names (RFC 9728):
/// found by its 401 now, or known from an earlier call (`KnownResource`).
struct ResourceTarget {
    var resource: URL
    /// The authorization server the metadata named.
    var issuer: URL
    /// The scopes to ask for: the challenge's, else the metadata's `scopes_supported`.
    var scopes: [String]
    /// The account that holds its tokens, when it is known.
    var account: String?
    /// The client id configured for ``issuer`` when it became known (see `KnownResource.clientID`).
    var clientID: String?

    init(resource: URL, issuer: URL, scopes: [String], account: String? = nil, clientID: String? = nil) {
        self.resource = resource
        self.issuer = issuer
        self.scopes = scopes
        self.account = account
        self.clientID = clientID
    }

    init(_ known: KnownResource) {
        self.init(
            resource: known.resource, issuer: known.issuer, scopes: known.scopes, account: known.account,
            clientID: known.clientID)
    }
}

extension CommandOptions {
    /// Where the records of known resources are kept: beside the token files (for the keyring
    /// too), in memory with `--token-storage none`. Read without opening the token storage.
    func knownResourceStore(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(AuthError) -> any KnownResourceStore {
        let layers = try layers(environment: environment, profile: try select(environment: environment).profile?.name)
        if let choice = try layers.read(.tokenStorage), choice == .none { return MemoryKnownResourceStore() }
        let directory = try layers.read(.store) ?? FileTokenStore.defaultDirectory(environment: environment)
        return FileKnownResourceStore(directory: directory)
    }

    /// The token storage the settings choose, opened without a provider configuration.
    func openStorage(environment: [String: String] = ProcessInfo.processInfo.environment) async throws
        -> TokenStorage
    {
        let layers = try layers(environment: environment, profile: try select(environment: environment).profile?.name)
        let directory = try layers.read(.store)
        return try await CommandStorage.open(
            try layers.read(.tokenStorage) ?? (directory == nil ? .auto : .file), fileDirectory: directory,
            environment: environment)
    }

    /// The issuer the settings name (flags, environment, `--config`, profile), if any: read alone,
    /// so that a configuration missing something else still says where the client's credentials
    /// belong.
    func configuredIssuer(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        configured(.issuer, environment: environment)
    }

    /// The value the settings give `setting`, read alone; `nil` when none, or a wrong one.
    func configured<Value>(
        _ setting: Setting<Value>, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Value? {
        guard let selection = try? select(environment: environment),
            let layers = try? layers(environment: environment, profile: selection.profile?.name)
        else { return nil }
        return (try? layers.read(setting)) ?? nil
    }

    /// The accounts of `target.issuer`, for signing in there for `target.resource`: the server's
    /// metadata in MCP's order (unless `--metadata-order` says otherwise), PKCE with S256 announced
    /// (MCP's MUST), the target's scopes (unless `--scope` does), and the client registered there
    /// unless a client id is configured for it.
    ///
    /// Unless the configured issuer is that server, none of the configured client's credentials
    /// go there (its id, secret or secret file, assertion key, certificate, initial access token),
    /// from any layer: the tool is a public client of its own there. With no issuer configured,
    /// a client id and secret in the environment, a configuration file or a profile were given
    /// for no server in particular, and a server nobody configured gets none of them.
    func prepare(
        for target: ResourceTarget,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> PreparedAccount {
        var environment = environment
        var settings = SettingOverrides()
        settings.set(.issuer, to: target.issuer)
        settings.set(.resource, to: [target.resource])
        settings.set(.registerClient, to: true)
        settings.set(.requirePKCE, to: true)
        if flag(.metadataOrder) == nil { settings.set(.metadataOrder, to: MetadataOrder.oauth) }
        if flag(.scope) == nil { settings.set(.scope, to: target.scopes) }
        let home = configuredIssuer(environment: environment).map { IssuerIdentifier.same($0, target.issuer) } ?? false
        if !home {
            for setting in APIDestination.clientCredentialSettings { settings.clear(setting) }
            environment["NATIVEAUTH_INITIAL_ACCESS_TOKEN"] = nil
            // The id its administrator gave the client there, kept when it became known.
            if let clientID = target.clientID { settings.set(.clientID, to: clientID) }
        }
        // Registered for every scope the resource lists (and those asked for), so that a later
        // step-up to one of them is a sign-in, not a registration anew.
        var registration = target.scopes
        for scope in (flag(.scope) ?? "").split(separator: " ").map(String.init) where !registration.contains(scope) {
            registration.append(scope)
        }
        do {
            return try await prepare(
                settings: settings, environment: environment, use: .describe, registers: true,
                registrationScopes: registration)
        } catch var error as AuthError where error.code == .registrationFailed {
            error.message =
                "the API's authorization server is \(Redaction.scrubURL(target.issuer.absoluteString)); "
                + error.message
            throw error
        }
    }

    /// Sends `request` to the protected resource at its URL through NativeAuth's
    /// `ResourceClient`: known from an earlier call, else found by its 401 (RFC 9728), signing in
    /// at the server its metadata names as this tool (`prepare(for:)`), in the browser.
    ///
    /// - Parameters:
    ///   - stepUp: Whether a 403 `insufficient_scope` leads to a sign-in for more scopes.
    ///   - approvesServer: Asked before the first request to the server a resource's metadata
    ///     names (the configured client's credentials stay home: see `prepare(for:)`).
    ///   - lending: Whether an existing sign-in not made for the API may get its token.
    func send(
        _ request: HTTPRequest,
        body: Data?,
        stepUp: StepUpConsent = .never,
        lending: SignInLending,
        approvesServer: (@Sendable (_ issuer: URL, _ resource: URL) async throws -> Void)? = nil,
        streamingTo sink: ResponseBodySink? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> (HTTPResponse, Data) {
        let resources = try await resourceClient(
            stepUp: stepUp, approvesServer: approvesServer, lending: lending, environment: environment)
        return try await CommandSupport.cancellingOnSignals {
            try await resources.send(request, body: body, streamingTo: sink)
        }
    }

    /// The token of the protected resource at `url`, known from an earlier call, else found by its
    /// 401 (`token --resource URL` with nothing configured), signing in when needed.
    func resourceToken(
        for url: URL, lending: SignInLending, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> ResourceToken {
        let resources = try await resourceClient(
            stepUp: .never, approvesServer: nil, lending: lending, environment: environment)
        return try await CommandSupport.cancellingOnSignals { try await resources.accessToken(for: url) }
    }

    /// NativeAuth's `ResourceClient` for this tool: its settings' storage, transport and account,
    /// the authenticator at each server made by `prepare(for:)`, and the loopback presenter.
    private func resourceClient(
        stepUp: StepUpConsent,
        approvesServer: (@Sendable (_ issuer: URL, _ resource: URL) async throws -> Void)?,
        lending: SignInLending,
        environment: [String: String]
    ) async throws -> ResourceClient {
        // Borrowing from an agent, nothing signs in here or reads a store: an API found by its
        // metadata is not asked through the agent (yet).
        if AgentSocket.named(in: environment) != nil {
            throw AuthError(
                .configurationInvalid,
                "with \(AgentSocket.environmentVariable) set, an API is called with the agent's tokens of the"
                    + " configured issuer, and none was configured (or the API was found by its metadata)",
                hint: "give --issuer and --client-id, and --resource for an API with tokens of its own",
                field: Setting.issuer.key
            )
        }
        let storage = try await openStorage(environment: environment)
        var client = ResourceClient.Options(
            clientName: Tool.toolName, transport: try transportChoice().makeTransport(logger: Self.logger),
            store: storage.store, knownResources: try knownResourceStore(environment: environment),
            logger: Self.logger)
        client.activeAccounts = storage.activeAccounts
        client.account = try select(environment: environment).account?.name
        if let account = client.account { try Accounts.validate(name: account) }
        if let issuer = configuredIssuer(environment: environment),
            let clientID = configured(.clientID, environment: environment)
        {
            client.configuredClient = (issuer, clientID)
        }
        client.approvesServer = approvesServer
        client.sharesSignIn = { try await lending.lends($0) }
        client.stepsUp = { signIn in
            guard stepUp != .never else { return false }
            let shown = Redaction.scrubURL(signIn.resource.absoluteString)
            if case .strongerSignIn = signIn.reason {
                CommandSupport.notice("\(shown) asks for a stronger or more recent sign-in: signing in again")
            } else {
                let missing = if case .moreScopes(let missing) = signIn.reason { missing } else { signIn.scopes }
                CommandSupport.notice(
                    "\(shown) wants the scope \(missing.joined(separator: " ")): signing in again for"
                        + " \(signIn.scopes.joined(separator: " "))")
            }
            return try await stepUp.agrees()
        }
        let options = self
        client.authenticatorAt = { server in
            try await options.prepare(
                for: ResourceTarget(
                    resource: server.resource, issuer: server.issuer, scopes: server.scopes, clientID: server.clientID),
                environment: environment
            ).authenticator
        }
        return ResourceClient(options: client) { signIn in
            let shown = Redaction.scrubURL(signIn.resource.absoluteString)
            switch signIn.reason {
            case .firstSignIn:
                CommandSupport.notice(
                    "\(shown) takes tokens from \(Redaction.scrubURL(signIn.issuer.absoluteString)): signing in there"
                        + " for it")
            case .notCovered(let error):
                CommandSupport.notice(
                    "the sign-in tried does not cover \(shown): \(error.message); signing in for it as account"
                        + " \(signIn.account)")
            case .moreScopes, .strongerSignIn: break
            }
            return LoopbackPresenter(
                configuration: .init(
                    port: signIn.redirectPort ?? 0, timeout: .seconds(300), opener: SystemBrowserOpener()))
        }
    }

    private static var logger: Logger { CommandSupport.makeLogger(label: Tool.toolName) }
}

/// What `status` says about the known resources.
enum KnownResourceStatus {
    /// Each record with the expiry of its token, as `status` prints them.
    static func lines(_ records: [KnownResource], tokens: [String: ResourceToken], now: Date) -> [String] {
        guard !records.isEmpty else { return [] }
        return ["Resources:"]
            + records.map { record in
                let token = tokens[record.resource.absoluteString]
                let expiry =
                    token.map { token in
                        token.expiresAt.map { $0 > now ? "token until \($0.formatted(.iso8601))" : "token expired" }
                            ?? "token without an expiry"
                    } ?? "no token kept"
                return "  \(Redaction.scrubURL(record.resource.absoluteString)): from"
                    + " \(Redaction.scrubURL(record.issuer.absoluteString)), account \(record.account); \(expiry)"
            }
    }

    /// The records as `status --json` lists them.
    static func json(_ records: [KnownResource], tokens: [String: ResourceToken]) -> JSONValue {
        .array(
            records.map { record in
                let token = tokens[record.resource.absoluteString]
                return .object([
                    "resource": .string(record.resource.absoluteString),
                    "issuer": .string(record.issuer.absoluteString), "account": .string(record.account),
                    "scope": .array(record.scopes.map(JSONValue.string)),
                    "expires_at": token?.expiresAt.map { .string($0.formatted(.iso8601)) } ?? .null,
                ])
            })
    }

    /// The kept token of each record, by resource: from the sign-in of its account at its issuer
    /// (whichever client signed in there).
    static func tokens(of records: [KnownResource], in store: any TokenStore) async throws -> [String: ResourceToken] {
        guard !records.isEmpty else { return [:] }
        let keys = try await store.keys()
        var found: [String: ResourceToken] = [:]
        for record in records {
            for key in keys where key.issuer == record.issuer.absoluteString && key.account == record.account {
                if let token = try await store.load(key)?.resourceTokens.filter({ $0.resource == record.resource })
                    .max(by: { $0.issuedAt < $1.issuedAt })
                {
                    found[record.resource.absoluteString] = token
                }
            }
        }
        return found
    }
}
