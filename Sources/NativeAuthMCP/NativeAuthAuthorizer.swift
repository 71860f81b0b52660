public import Foundation
internal import HTTPTypes
public import Logging
public import MCP
internal import NIOConcurrencyHelpers
@_spi(Provider) public import NativeAuth
public import NativeAuthPresenters

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Authorizes the MCP Swift SDK's `HTTPClientTransport` with NativeAuth: its discovery, client
/// registration, stores and one refresh across processes.
///
/// ```swift
/// let authorizer = NativeAuthAuthorizer(options: .init(clientName: "my-agent", transport: transport))
/// let transport = HTTPClientTransport(endpoint: url, streaming: false, authorizer: authorizer)
/// try await client.connect(transport: transport)
/// ```
///
/// From the MCP server's URL alone, it follows the MCP authorization spec: the server's 401 names
/// its protected resource metadata (RFC 9728, whose `resource` must be the URL itself); that names
/// the authorization server, whose metadata is read in MCP's order (`MetadataOrder.oauth`); the
/// client uses its client ID metadata document where the server takes one, else registers itself
/// (RFC 7591) with one exact loopback redirect URI; the person signs in through the loopback
/// presenter, with PKCE and `resource` (RFC 8707), asking for the challenge's scope, else the
/// metadata's `scopes_supported`; and the request is sent again. What it learned is kept
/// (`KnownResource`), so that a later process needs neither the 401 nor the browser.
///
/// Tokens are NativeAuth's: kept in the token store given, refreshed once however many
/// transports and processes need them. A 403 `insufficient_scope` steps up once per operation: a
/// sign-in for the scopes held and those the challenge names (else the metadata's), then the
/// request again.
///
/// The protocol carries only an `Authorization` header, so tokens are sent as bearer tokens: a
/// server that requires DPoP cannot be reached through it (NativeAuth's own `send` proves
/// possession).
public final class NativeAuthAuthorizer: HTTPClientAuthorizer {
    /// Where the authorizer keeps things, and how it signs in.
    public struct Options: Sendable {
        /// The client's name, as registered (RFC 7591 `client_name`), and the key of its kept
        /// registration.
        public var clientName: String
        /// The client's ID metadata document, used as its client id where the server takes one.
        public var clientMetadataDocument: URL?
        /// Where tokens and registrations are kept.
        public var store: any TokenStore
        /// Where what was learned about each MCP server is kept.
        public var knownResources: any KnownResourceStore
        /// The HTTP transport for discovery and token requests.
        public var transport: any HTTPTransport
        /// How the person's browser is opened for a sign-in; `nil`: the URL is printed only.
        public var opener: (any BrowserOpener)?
        /// How long a sign-in may take.
        public var signInTimeout: Duration
        /// Whether a 403 `insufficient_scope` may start a sign-in for more scopes.
        public var stepsUp: Bool
        /// The account whose sign-in holds the tokens.
        public var account: String
        /// Logs discovery and sign-in steps (never a token).
        public var logger: Logger

        /// Options for `clientName`, keeping tokens and records in files under `directory`
        /// (default: the file token store's).
        public init(
            clientName: String,
            transport: any HTTPTransport,
            directory: String? = nil,
            opener: (any BrowserOpener)? = SystemBrowserOpener(),
            logger: Logger = Logger(label: "NativeAuthMCP")
        ) {
            self.clientName = clientName
            self.store = FileTokenStore(directory: directory)
            self.knownResources = FileKnownResourceStore(directory: directory)
            self.transport = transport
            self.opener = opener
            self.signInTimeout = .seconds(300)
            self.stepsUp = true
            self.account = TokenKey.defaultAccount
            self.logger = logger
        }
    }

    /// What the authorizer learned: the MCP server's authenticator and resource, the header to
    /// send, and the operations already stepped up.
    private struct State {
        var authenticator: Authenticator?
        var resource: URL?
        var scopes: [String] = []
        var issuer: URL?
        /// The client id the app configured (kept with the record), `nil` for a registered client.
        var configuredClientID: String?
        var token: String?
        var tokenType = "Bearer"
        var steppedUp: Set<String> = []
    }

    private let options: Options
    private let state = NIOLockedValueBox(State())

    /// Creates an authorizer that finds everything from the MCP server's URL (see the type's
    /// discussion).
    public init(options: Options) {
        self.options = options
    }

    /// Creates an authorizer for an app that configured its authorization server: tokens for
    /// `resource` (the MCP server's URL, RFC 8707) under `authenticator`'s sign-in.
    public init(authenticator: Authenticator, resource: URL, options: Options) {
        self.options = options
        state.withLockedValue {
            $0.authenticator = authenticator
            $0.resource = resource
            $0.issuer = authenticator.provider.configuration.issuer
            $0.scopes = authenticator.provider.configuration.scopes
            $0.configuredClientID = authenticator.provider.configuration.clientID
        }
    }

    /// A sign-in, a refresh or a step-up, then the request again: at most three tries in all.
    public var maxAuthorizationAttempts: Int { 3 }

    public func validateEndpointSecurity(for endpoint: URL) throws {
        try EndpointPolicy.validate(endpoint)
    }

    public func authorizationHeader(for endpoint: URL) -> String? {
        state.withLockedValue { state in
            guard let token = state.token, let resource = state.resource,
                Self.covers(resource, endpoint)
            else { return nil }
            return "\(state.tokenType) \(token)"
        }
    }

    public func prepareAuthorization(for endpoint: URL, session: URLSession) async throws {
        guard let (authenticator, resource) = try await known(for: endpoint) else { return }
        try await cache(authenticator.resourceToken(for: resource))
    }

    public func handleChallenge(
        statusCode: Int, headers: [String: String], endpoint: URL, operationKey: String?, session: URLSession
    ) async throws -> Bool {
        var response = HTTPTypes.HTTPResponse(status: .init(code: statusCode))
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { response.headerFields.append(HTTPField(name: name, value: value)) }
        }
        let challenge = response.headerFields[values: .wwwAuthenticate].lazy
            .compactMap { BearerChallenge(headerValue: $0) }.first
        if statusCode == 403 {
            return try await stepUp(challenge, endpoint: endpoint, operation: operationKey ?? "")
        }
        guard statusCode == 401 else { return false }
        let sent = state.withLockedValue { $0.token }
        let (authenticator, resource): (Authenticator, URL)
        if let found = try await known(for: endpoint) {
            (authenticator, resource) = found
        } else {
            (authenticator, resource) = try await discover(endpoint, response: response, challenge: challenge)
        }
        if let sent { _ = try await authenticator.discardAccessToken(sent) }
        do {
            try await cache(authenticator.resourceToken(for: resource))
        } catch let error as AuthError where error.isLoginRequired {
            try await signIn(authenticator, scopes: nil)
            try await cache(authenticator.resourceToken(for: resource))
        }
        try await remember()
        return true
    }

    // MARK: - The steps

    /// The authenticator and resource for `endpoint`: learned in this process, else kept from an
    /// earlier one (`KnownResource`).
    private func known(for endpoint: URL) async throws -> (Authenticator, URL)? {
        if let held = state.withLockedValue({ state -> (Authenticator, URL)? in
            guard let authenticator = state.authenticator, let resource = state.resource else { return nil }
            return (authenticator, resource)
        }) {
            return Self.covers(held.1, endpoint) ? held : nil
        }
        guard let record = try await options.knownResources.knownResource(covering: endpoint) else { return nil }
        let authenticator = try await makeAuthenticator(
            issuer: record.issuer, resource: record.resource, scopes: record.scopes, clientID: record.clientID)
        state.withLockedValue { $0.configuredClientID = record.clientID }
        return (
            adopt(authenticator, resource: record.resource, issuer: record.issuer, scopes: record.scopes),
            record.resource
        )
    }

    /// From the 401 to an authenticator at the server the metadata names.
    private func discover(_ endpoint: URL, response: HTTPTypes.HTTPResponse, challenge: BearerChallenge?) async throws
        -> (Authenticator, URL)
    {
        let metadata = try await ProtectedResourceMetadata.discover(
            for: endpoint, response: response, transport: options.transport)
        guard let issuer = metadata.authorizationServers.first else {
            throw AuthError(
                .configurationInvalid, "the MCP server's protected resource metadata names no authorization server",
                hint: "configure its authorization server, and create the authorizer with an Authenticator")
        }
        let scopes = challenge?.scope.map { $0.split(separator: " ").map(String.init) } ?? metadata.scopesSupported
        options.logger.info(
            "the MCP server takes tokens from its authorization server",
            metadata: ["issuer": "\(Redaction.scrubURL(issuer.absoluteString))"])
        let authenticator = try await makeAuthenticator(
            issuer: issuer, resource: metadata.resource, scopes: scopes, clientID: nil)
        return (adopt(authenticator, resource: metadata.resource, issuer: issuer, scopes: scopes), metadata.resource)
    }

    /// An authenticator at `issuer` for `resource`: the configured client id, else the client's
    /// metadata document or a registration there (kept in the store, reused by later processes).
    private func makeAuthenticator(issuer: URL, resource: URL, scopes: [String], clientID: String?) async throws
        -> Authenticator
    {
        var configuration = ProviderConfiguration(issuer: issuer, clientID: clientID ?? "", scopes: scopes)
        configuration.resources = [resource]
        configuration.metadataOrder = .oauth
        configuration.clientMetadataDocument = options.clientMetadataDocument
        let base = Authenticator(
            provider: try GenericOIDCProvider(configuration: configuration), store: options.store,
            transport: options.transport, account: options.account, logger: options.logger)
        if clientID != nil { return base }
        let client = ClientMetadata(
            clientName: options.clientName, redirectURIs: try ClientMetadata.loopbackRedirectURIs(),
            scope: scopes.isEmpty ? nil : scopes.joined(separator: " "),
            softwareID: options.clientName, softwareVersion: NativeAuthVersion.current,
            metadataDocument: options.clientMetadataDocument)
        return try await base.registeringClient(client)
    }

    private func adopt(_ authenticator: Authenticator, resource: URL, issuer: URL, scopes: [String]) -> Authenticator {
        state.withLockedValue {
            $0.authenticator = authenticator
            $0.resource = resource
            $0.issuer = issuer
            $0.scopes = scopes
        }
        return authenticator
    }

    /// The person signs in, in the browser, through the loopback port the client registered.
    private func signIn(_ authenticator: Authenticator, scopes: [String]?) async throws {
        let presenter = LoopbackPresenter(
            configuration: .init(
                port: authenticator.provider.configuration.loopbackRedirectPort ?? 0, timeout: options.signInTimeout,
                opener: options.opener))
        try await authenticator.login(presenter: presenter, scopes: scopes)
    }

    /// A 403 `insufficient_scope`: once per operation, a sign-in for the scopes held and those
    /// asked for (the challenge's, else the metadata's), and the request again.
    private func stepUp(_ challenge: BearerChallenge?, endpoint: URL, operation: String) async throws -> Bool {
        guard options.stepsUp, challenge?.error == "insufficient_scope",
            let (authenticator, resource) = try await known(for: endpoint)
        else { return false }
        let first = state.withLockedValue { $0.steppedUp.insert(operation).inserted }
        guard first else {
            options.logger.info("the MCP server refused the operation again after a step-up")
            return false
        }
        let held = try await authenticator.currentTokens()?.scopes ?? []
        let asked =
            challenge?.scope.map { $0.split(separator: " ").map(String.init) } ?? state.withLockedValue(\.scopes)
        var union = held
        for scope in asked where !union.contains(scope) { union.append(scope) }
        try await signIn(authenticator, scopes: union)
        // The resource's token was asked for under the narrower sign-in.
        _ = try await authenticator.lifecycle.removeResourceTokens(for: resource)
        try await cache(authenticator.resourceToken(for: resource))
        state.withLockedValue { $0.scopes = union }
        try await remember()
        return true
    }

    private func cache(_ token: ResourceToken) {
        state.withLockedValue {
            $0.token = token.accessToken
            // Sent as a bearer token: the protocol carries no DPoP proof.
            $0.tokenType = "Bearer"
        }
    }

    /// Keeps what was learned, for the next process.
    private func remember() async throws {
        let record: KnownResource? = state.withLockedValue { state in
            guard let authenticator = state.authenticator, let resource = state.resource, let issuer = state.issuer
            else { return nil }
            return KnownResource(
                resource: resource, issuer: issuer, account: authenticator.key.account, scopes: state.scopes,
                clientID: state.configuredClientID)
        }
        if let record { try await options.knownResources.remember(record) }
    }

    /// Whether `resource` is `url` or a parent of it, on the same origin.
    private static func covers(_ resource: URL, _ url: URL) -> Bool {
        ProtectedResourceMetadata.covers(resource, url)
    }
}
