internal import Foundation
internal import HTTPTypes
internal import LenientJSON
@_spi(Provider) internal import NativeAuth
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

    /// The name of an account of its own, for when the sign-in tried first does not cover it:
    /// its host, port and path (`127.0.0.1:8000/mcp`).
    var ownAccountName: String {
        var name = (resource.host ?? "resource") + (resource.port.map { ":\($0)" } ?? "") + resource.path
        while name.hasSuffix("/") { name.removeLast() }
        return String(name.prefix(200))
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
    /// metadata in MCP's order (unless `--metadata-order` says otherwise), the target's scopes
    /// (unless `--scope` does), and the client registered there unless a client id is configured.
    /// When the configured issuer is another server, none of the configured client's credentials
    /// go there (its id, secret, assertion key, certificate, initial access token): the tool is a
    /// public client of its own there.
    func prepare(
        for target: ResourceTarget,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> PreparedAccount {
        var environment = environment
        var settings = [
            Setting.issuer.key: target.issuer.absoluteString, Setting.resource.key: target.resource.absoluteString,
            Setting.registerClient.key: "true",
        ]
        if flag(.metadataOrder) == nil { settings[Setting.metadataOrder.key] = MetadataOrder.oauth.rawValue }
        if flag(.scope) == nil { settings[Setting.scope.key] = target.scopes.joined(separator: " ") }
        if let configured = configuredIssuer(environment: environment),
            configured.absoluteString != target.issuer.absoluteString
        {
            for key in APIDestination.clientCredentialKeys { settings[key] = "" }
            environment["NATIVEAUTH_INITIAL_ACCESS_TOKEN"] = nil
            // The id its administrator gave the client there, kept when it became known.
            if let clientID = target.clientID { settings[Setting.clientID.key] = clientID }
        } else if configuredIssuer(environment: environment) == nil, let clientID = target.clientID {
            settings[Setting.clientID.key] = clientID
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

    /// Sends `request` with a token for `target.resource`, and keeps which account holds it.
    ///
    /// The account tried first, without a browser: the one known for the resource, else the one
    /// named (`--account`), else the account of another known resource of the same server (a
    /// server may issue a token for another resource under the same sign-in, RFC 8707 §2.2), else
    /// the one a sign-in would use. When it holds no sign-in, the person signs in there; when its
    /// sign-in does not cover the resource (the server refuses the target or scope, or the sign-in
    /// ended), the person signs in for the resource in an account of its own, so that the sign-in
    /// tried stays as it was.
    func send(
        _ request: HTTPRequest,
        body: Data?,
        to target: ResourceTarget,
        stepUp: StepUpConsent = .never,
        streamingTo sink: ResponseBodySink? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> (HTTPResponse, Data) {
        let prepared = try await prepare(for: target, environment: environment)
        let records = try knownResourceStore(environment: environment)
        let resource = target.resource
        let accounts = prepared.accounts
        let chosen = target.account ?? prepared.named?.name
        var first = chosen ?? prepared.account
        if chosen == nil,
            let sibling = try await records.knownResources().first(where: {
                $0.issuer.absoluteString == target.issuer.absoluteString && $0.resource != resource
            })
        {
            first = sibling.account
        }
        // A client id configured for that server is kept with the record (it is not a secret), so
        // that the URL alone finds it again; a registered client is kept with the tokens.
        let configuredClient =
            configuredIssuer(environment: environment)?.absoluteString == target.issuer.absoluteString
            ? configured(.clientID, environment: environment) : nil
        let clientID = target.clientID ?? configuredClient
        let shown = Redaction.scrubURL(resource.absoluteString)
        let held = try await accounts.authenticator(for: first).currentTokens() != nil
        /// The account the request was last sent under.
        var used = first
        func answer(under name: String) async throws -> (HTTPResponse, Data) {
            used = name
            return try await accounts.authenticator(for: name).send(
                request, body: body, for: resource, streamingTo: sink)
        }
        /// The answer under the sign-in tried first, or `nil` when it does not cover the resource.
        func underHeldSignIn() async throws -> (HTTPResponse, Data)? {
            guard held else { return nil }
            do {
                return try await answer(under: first)
            } catch let error as AuthError
                where error.isLoginRequired || ["invalid_target", "invalid_scope"].contains(error.oauthError ?? "")
            {
                CommandSupport.notice("the sign-in of account \(first) does not cover \(shown): \(error.message)")
                return nil
            }
        }
        /// The answer under the sign-in tried first, else under a new one.
        func signedInAnswer() async throws -> (HTTPResponse, Data) {
            if let covered = try await underHeldSignIn() { return covered }
            CommandSupport.notice(
                "\(shown) takes tokens from \(Redaction.scrubURL(target.issuer.absoluteString)): signing in there for it"
            )
            if let chosen {
                return try await answer(under: try await TokenSupply.browserSignIn(prepared, into: chosen))
            } else if held {
                return try await answer(
                    under: try await TokenSupply.browserSignIn(prepared, into: target.ownAccountName))
            }
            return try await answer(under: try await TokenSupply.browserSignIn(prepared).account)
        }
        var scopes = target.scopes
        let result: (HTTPResponse, Data)
        do {
            result = try await signedInAnswer()
        } catch let error as AuthError where error.code == .insufficientScope {
            // A 403 insufficient_scope: one more sign-in for the scopes it lacks, and the request once more.
            let port = prepared.authenticator.provider.configuration.loopbackRedirectPort ?? 0
            guard let presenter = stepUp.presenter(port: port),
                let widened = try await steppedUp(
                    missing: error.missingScopes, target: target, account: used, prepared: prepared,
                    presenter: presenter)
            else { throw error }
            scopes = widened
            do {
                result = try await answer(under: used)
            } catch var again as AuthError where again.code == .insufficientScope {
                again.message +=
                    "; still refused after a sign-in for \(widened.joined(separator: " ")), not asking again"
                throw again
            }
        }
        // A resource that refuses its own fresh token is not worth remembering.
        if result.0.status.code != 401 {
            try await records.remember(
                KnownResource(
                    resource: resource, issuer: target.issuer, account: used, scopes: scopes, clientID: clientID))
        }
        return result
    }

    /// After a 403 `insufficient_scope` (RFC 6750 §3.1, `missing`: the scopes its challenge
    /// named): the person signs in again, into the same account, for the scopes it holds and
    /// those the challenge names, else those the resource's
    /// metadata lists (a challenge that names none, as the MCP SDKs' servers send); the resource's
    /// token is dropped, so that the next is asked for under the wider sign-in. Returns the scopes
    /// asked for, or `nil` when the sign-in lacks none of them: never a loop.
    private func steppedUp(
        missing named: [String]?, target: ResourceTarget, account: String, prepared: PreparedAccount,
        presenter: any UserAgentPresenter
    ) async throws -> [String]? {
        let authenticator = prepared.accounts.authenticator(for: account)
        let held = try await authenticator.currentTokens()?.scopes ?? []
        let asked = named ?? target.scopes
        let missing = asked.filter { !held.contains($0) }
        guard !missing.isEmpty else { return nil }
        let union = held + missing
        CommandSupport.notice(
            "\(Redaction.scrubURL(target.resource.absoluteString)) wants the scope \(missing.joined(separator: " ")):"
                + " signing in again for \(union.joined(separator: " "))")
        _ = try await CommandSupport.cancellingOnSignals {
            try await authenticator.login(presenter: presenter, scopes: union)
        }
        _ = try await authenticator.lifecycle.removeResourceTokens(for: target.resource)
        return union
    }
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
