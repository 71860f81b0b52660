// With the MCP trait off (the sanitizer builds), this module is empty.
#if MCP
    public import Foundation
    internal import HTTPTypes
    public import Logging
    public import MCP
    public import NativeAuth
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
    /// It is NativeAuth's `ResourceClient` behind the SDK's protocol. From the MCP server's URL alone,
    /// it follows the MCP authorization spec: the server's 401 names
    /// its protected resource metadata (RFC 9728, whose `resource` must be the URL itself); that names
    /// the authorization server, whose metadata is read in MCP's order (`MetadataOrder.oauth`); the
    /// client uses its client ID metadata document where the server takes one, else registers itself
    /// (RFC 7591) with one exact loopback redirect URI; the person signs in through the loopback
    /// presenter, with PKCE and `resource` (RFC 8707), asking for the challenge's scope, else the
    /// metadata's `scopes_supported`; and the request is sent again. What it learned is kept
    /// (`KnownResource`), so that a later process needs neither the 401 nor the browser.
    ///
    /// Tokens are NativeAuth's: kept in the token store given, refreshed once however many
    /// transports and processes need them. A 403 `insufficient_scope` (or a request for a stronger
    /// sign-in) steps up once per operation, as its `StepUpPlan` says: a sign-in for the scopes held
    /// and those the challenge names (else the metadata's), then the request again; a registration
    /// that lacks those scopes is made again for them first.
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

        /// The token to send, the resource it is for, and each operation's step-up plan.
        private struct State {
            var token: String?
            var resource: URL?
            var plans: [String: StepUpPlan] = [:]
        }

        private let options: Options
        private let client: ResourceClient
        private let state = Locked(State())

        /// Creates an authorizer that finds everything from the MCP server's URL (see the type's
        /// discussion).
        public init(options: Options) {
            self.options = options
            var client = ResourceClient.Options(
                clientName: options.clientName, transport: options.transport, store: options.store,
                knownResources: options.knownResources, logger: options.logger)
            client.clientMetadataDocument = options.clientMetadataDocument
            client.account = options.account
            let stepsUp = options.stepsUp
            client.stepsUp = { _ in stepsUp }
            let (timeout, opener) = (options.signInTimeout, options.opener)
            self.client = ResourceClient(options: client) { signIn in
                LoopbackPresenter(
                    configuration: .init(port: signIn.redirectPort ?? 0, timeout: timeout, opener: opener))
            }
        }

        /// Creates an authorizer for an app that configured its authorization server: tokens for
        /// `resource` (the MCP server's URL, RFC 8707) under `authenticator`'s sign-in.
        public convenience init(authenticator: Authenticator, resource: URL, options: Options) {
            self.init(options: options)
            client.use(authenticator, for: resource)
        }

        /// A sign-in, a refresh or a step-up, then the request again: at most three tries in all.
        public var maxAuthorizationAttempts: Int { 3 }

        public func validateEndpointSecurity(for endpoint: URL) throws {
            try EndpointPolicy.validate(endpoint)
        }

        public func authorizationHeader(for endpoint: URL) -> String? {
            state.withLock { state in
                guard let token = state.token, let resource = state.resource,
                    ProtectedResourceMetadata.covers(resource, endpoint)
                else { return nil }
                // Sent as a bearer token: the protocol carries no DPoP proof.
                return "Bearer \(token)"
            }
        }

        public func prepareAuthorization(for endpoint: URL, session: URLSession) async throws {
            if let token = try await client.knownAccessToken(for: endpoint) { cache(token) }
        }

        public func handleChallenge(
            statusCode: Int, headers: [String: String], endpoint: URL, operationKey: String?, session: URLSession
        ) async throws -> Bool {
            var response = HTTPTypes.HTTPResponse(status: .init(code: statusCode))
            for (name, value) in headers {
                if let name = HTTPField.Name(name) { response.headerFields.append(HTTPField(name: name, value: value)) }
            }
            if statusCode == 403 {
                return try await stepUp(response, endpoint: endpoint, operation: operationKey ?? "")
            }
            guard statusCode == 401 else { return false }
            let sent = state.withLock { $0.token }
            cache(try await client.accessToken(for: endpoint, answering: response, refused: sent))
            return true
        }

        /// A 403 asking for a scope (or a stronger sign-in): as the operation's plan says, once per
        /// operation, a sign-in for the scopes held and those asked for (the challenge's, else the
        /// metadata's), and the request again.
        private func stepUp(_ response: HTTPTypes.HTTPResponse, endpoint: URL, operation: String) async throws -> Bool {
            guard options.stepsUp else { return false }
            var plan = state.withLock { $0.plans[operation] } ?? StepUpPlan()
            defer { state.withLock { [plan] in $0.plans[operation] = plan } }
            if plan.steppedUp { options.logger.info("the MCP server refused the operation again after a step-up") }
            guard let token = try await client.steppingUp(for: endpoint, answering: response, plan: &plan) else {
                return false
            }
            cache(token)
            return true
        }

        private func cache(_ token: ResourceToken) {
            state.withLock {
                $0.token = token.accessToken
                $0.resource = token.resource
            }
        }
    }
#endif
