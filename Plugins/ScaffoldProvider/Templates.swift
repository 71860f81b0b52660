/// The files the plugin writes, and what it prints. Generated code follows the project's
/// swift-format configuration (`swift format lint --strict` passes on it).
enum Templates {
    static func provider(_ request: ScaffoldRequest) -> String {
        let type = request.typeName
        // Only the fixed-endpoints provider has Foundation types (URL) in its public declarations, and
        // uses the provider-author helpers (`@_spi(Provider)`: the endpoint policy, `applying`).
        let imports =
            switch request.mode {
            case .discovery: "import Foundation\npublic import NativeAuth"
            case .fixedEndpoints: "public import Foundation\n@_spi(Provider) public import NativeAuth"
            }
        let header = #"""
            // \#(type): NativeAuth's provider for \#(request.name), written by `swift package scaffold-provider`.
            //
            // Every hook of AuthProvider has a default (the standard OAuth 2.0 / OpenID Connect behaviour).
            // Each hook is listed below at its place with what its default does: implement the ones where
            // \#(request.name) differs, and delete the comments of the others. The guide "Writing a provider"
            // in NativeAuth's documentation walks through each of them.
            \#(imports)

            """#
        let body: String
        switch request.mode {
        case .discovery(let defaultIssuer): body = discoveryProvider(request, defaultIssuer: defaultIssuer)
        case .fixedEndpoints: body = fixedEndpointsProvider(request)
        }
        return header + body + "\n" + commonHooks(request) + errorMapper(request)
    }

    private static func discoveryProvider(_ request: ScaffoldRequest, defaultIssuer: String?) -> String {
        let type = request.typeName
        let issuerLine: String
        let initBody: String
        if let defaultIssuer {
            issuerLine = #"""
                    /// The issuer used when the configuration names none.
                    public static let defaultIssuer = "\#(defaultIssuer)"


                """#
            initBody = #"""
                        var configuration = configuration
                        if configuration.issuer == nil {
                            guard let issuer = URL(string: Self.defaultIssuer) else {
                                throw AuthError.invalid(.issuer, "is not a URL: \(Self.defaultIssuer)")
                            }
                            configuration.issuer = issuer
                        }
                        self.configuration = configuration
                """#
        } else {
            issuerLine = ""
            initBody = #"""
                        // A missing setting throws an error naming it (field "issuer"): a CLI says where
                        // to set it (--issuer, NATIVEAUTH_ISSUER or "issuer" in a config file).
                        guard configuration.issuer != nil else { throw AuthError.missing(.issuer) }
                        self.configuration = configuration
                """#
        }
        return #"""

            /// \#(request.name)'s authorization server, found through OpenID Connect discovery.
            ///
            /// Register it at start-up, then build it by its id:
            ///
            /// ```swift
            /// var registry = ProviderRegistry()
            /// try registry.register(\#(type).self)
            /// let provider = try registry.makeProvider(configuration)  // "provider": "\#(request.id)"
            /// ```
            public struct \#(type): AuthProvider {
                /// The registry id: `"provider": "\#(request.id)"` in a configuration, `--provider \#(request.id)` in a CLI.
                public static let id = "\#(request.id)"

            \#(issuerLine)    /// The configuration the provider was built from.
                public let configuration: ProviderConfiguration

                /// Builds the provider. A setting that is missing or wrong throws
                /// `AuthError(.configurationInvalid, …)` naming it (`AuthError.missing`,
                /// `AuthError.invalid`); settings of your own are declared in `settings` and read with
                /// `configuration.value(of:)`.
                ///
                /// - Parameter configuration: The client's registration.
                public init(configuration: ProviderConfiguration) throws {
            \#(initBody)
                }

                // The configuration keys of your own (a tenant, a region), declared once: a CLI built with
                // NativeAuthCommands offers an option, an environment variable and a hint for each.
                // Default: none.
                // public static let settings: [ProviderSetting] = [ProviderSetting("tenant", help: "…")]

                // The name tokens are stored under. Default: the issuer.
                // public var tokenIssuer: String { … }

                // Where the endpoints come from. Default: `loader.discover()`, OpenID Connect discovery
                // from the issuer (then RFC 8414), with an exact issuer check and the configuration's
                // endpoint overrides on top. Change the result here when \#(request.name) lacks something
                // (`@_spi(Provider) import NativeAuth` for the loader).
                // public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata { … }

            """#
    }

    private static func fixedEndpointsProvider(_ request: ScaffoldRequest) -> String {
        let type = request.typeName
        return #"""

            /// \#(request.name)'s authorization server, at fixed endpoints on its host (no discovery).
            ///
            /// Register it at start-up, then build it by its id:
            ///
            /// ```swift
            /// var registry = ProviderRegistry()
            /// try registry.register(\#(type).self)
            /// let provider = try registry.makeProvider(configuration)  // "provider": "\#(request.id)"
            /// ```
            public struct \#(type): AuthProvider {
                /// The registry id: `"provider": "\#(request.id)"` in a configuration, `--provider \#(request.id)` in a CLI.
                public static let id = "\#(request.id)"

                /// The host used when the configuration has no `host` setting.
                public static let defaultHost = "https://id.\#(request.id).example"

                /// `host`: where \#(request.name)'s server runs. A CLI built with NativeAuthCommands offers
                /// `--host`, `NATIVEAUTH_HOST` and `"host"` in a config file for it.
                public static let host = ProviderSetting("host", help: "\#(request.name)'s host (default: \(defaultHost)).")

                /// The configuration keys of \#(request.name)'s own.
                public static let settings: [ProviderSetting] = [host]

                /// The configuration the provider was built from.
                public let configuration: ProviderConfiguration
                /// The host the endpoints are on.
                public let host: URL

                /// Builds the provider; `host` defaults to ``defaultHost``. A setting that is missing or
                /// wrong throws `AuthError(.configurationInvalid, …)` naming it.
                ///
                /// - Parameter configuration: The client's registration.
                public init(configuration: ProviderConfiguration) throws {
                    let text = try configuration.value(of: Self.host) ?? Self.defaultHost
                    guard let host = URL(string: text), host.host != nil, host.scheme == "https" || host.scheme == "http"
                    else {
                        throw AuthError.invalid(Self.host, "is not a URL", hint: "set it like \(Self.defaultHost)")
                    }
                    self.configuration = configuration
                    self.host = host
                }

                // The name tokens are stored under. Default: the issuer, else the provider id; here the host.
                public var tokenIssuer: String { host.absoluteString }

                // Where the endpoints come from. Default: OpenID Connect discovery from the issuer.
                // \#(request.name) has no discovery: the endpoints are fixed paths on the host (change them
                // to \#(request.name)'s), with the configuration's endpoint overrides on top.
                public func loadMetadata(_ loader: MetadataLoader) async throws -> ProviderMetadata {
                    guard let authorize = URL(string: host.absoluteString + "/oauth/authorize"),
                        let token = URL(string: host.absoluteString + "/oauth/token")
                    else {
                        throw AuthError.invalid(Self.host, "cannot form endpoint URLs: \(host)")
                    }
                    try EndpointPolicy.validate(token)
                    return ProviderMetadata(
                        issuer: nil,
                        authorizationEndpoint: authorize,
                        tokenEndpoint: token,
                        codeChallengeMethodsSupported: ["S256"]
                    )
                    .applying(configuration.endpoints)
                }

            """#
    }

    private static func commonHooks(_ request: ScaffoldRequest) -> String {
        #"""
            // Extra authorization parameters (`prompt`, `audience`, a tenant). Default: none. The ones
            // NativeAuth sets itself (`state`, `code_challenge`, `redirect_uri`, …) cannot be replaced.
            // public func authorizationParameters(for request: AuthorizationRequest.Parameters) -> [FormField] { … }

            // Headers and client authentication of requests to the token, device authorization and
            // revocation endpoints. `request.operation` and `request.grant` say what the request is for.
            // Default: `Accept: application/json` and the standard client authentication: the configured
            // method; else `none` without a client secret, else the first method of the metadata's
            // `token_endpoint_auth_methods_supported` that NativeAuth supports (`client_secret_basic`
            // when it does not say). Changing the form or headers needs `@_spi(Provider) import NativeAuth`.
            // public func prepare(_ request: inout OAuthRequest, metadata: ProviderMetadata) { … }

            // How an answer's body is encoded. Default: JSON. A server that answers form-encoded (GitHub)
            // reads it here (this hook takes an `HTTPResponse`: `import HTTPTypes`, from swift-http-types).
            // public func parseBody(_ body: Data, of response: HTTPResponse) throws -> JSONObject? { … }

            // Where the fields of an answer are (token, device authorization, userinfo: `operation` says
            // which). Default: at the top, with the standard names. A server that wraps them
            // (`{"data": {…}}`) unwraps them here; one that names them otherwise renames them.
            // An `error` member, or an HTTP error, never gets here: it goes through `errorMapper`.
            // public func fields(of object: JSONObject, for operation: AuthOperation) throws -> JSONObject { … }

            // How ID tokens are checked. Default: every check (signature against the JWKS, `iss`, `aud`,
            // `exp`, `nonce`, …) with a 60-second leeway. Turn a check off only for a server that cannot
            // comply, and say why.
            // public var idTokenValidation: IDTokenValidationOptions { … }

            // The page that ends the session at the provider. Default: OpenID Connect RP-Initiated Logout
            // at the metadata's `end_session_endpoint` with `id_token_hint`, `post_logout_redirect_uri`,
            // `client_id` and `state`, which returns to the app (`.returnsToApp(url)`); `nil` when there
            // is no such endpoint. A logout page that ends on a page of its own is `.endsElsewhere(url)`:
            // a CLI then opens it and waits for nothing.
            // public func endSession(_ parameters: EndSessionParameters) -> EndSession? { … }

            // \#(request.name)'s error dialect. Default: `StandardErrorMapper` (RFC 6749 §5.2, RFC 6750 §3,
            // and the usual HTTP failures). \#(request.typeName)ErrorMapper hands it everything it does not map.
            public var errorMapper: any ErrorMapper { \#(request.typeName)ErrorMapper() }
        }

        """#
    }

    private static func errorMapper(_ request: ScaffoldRequest) -> String {
        #"""

        /// Maps the failures only \#(request.name) has; returns `nil` for the rest, which the standard
        /// mapper then handles.
        public struct \#(request.typeName)ErrorMapper: ErrorMapper {
            /// Creates the mapper.
            public init() {}

            /// Maps a failure of \#(request.name)'s own, or returns `nil`.
            ///
            /// Look at `failure.response`, `failure.body` and `failure.oauthError`. Keep the server's
            /// error code in `oauthError`, use `.loginRequired` only when no refresh can help, and never
            /// put a token or the body into the text. For example, a server that says
            /// `{"error": "session_gone"}` for a dead refresh token:
            ///
            /// ```swift
            /// if failure.oauthError?.error == "session_gone" {
            ///     return AuthError(.loginRequired, "the session ended", hint: "sign in again", oauthError: "session_gone")
            /// }
            /// ```
            ///
            /// - Parameter failure: What went wrong.
            /// - Returns: The error, or `nil` for the standard mapping.
            public func map(_ failure: AuthFailure) -> AuthError? {
                nil
            }
        }

        """#
    }
}

extension Templates {
    static func tests(_ request: ScaffoldRequest) -> String {
        let type = request.typeName
        let discovery: String
        let configuration: String
        switch request.mode {
        case .discovery:
            discovery = #"""
                        case ("GET", "/.well-known/openid-configuration"):
                            let issuer = request.serverURL.absoluteString
                            return .json(
                                """
                                {"issuer": "\(issuer)", "authorization_endpoint": "\(issuer)/authorize",
                                 "token_endpoint": "\(issuer)/token", "response_types_supported": ["code"],
                                 "code_challenge_methods_supported": ["S256"]}
                                """
                            )

                """#
            configuration = #"""
                            provider: \#(type).id,
                            issuer: server.url(""),
                            clientID: "test-client",
                            scopes: ["profile"]
                """#
        case .fixedEndpoints:
            discovery = ""
            configuration = #"""
                            provider: \#(type).id,
                            clientID: "test-client",
                            scopes: ["profile"],
                            additional: ["host": .string(server.url("").absoluteString)]
                """#
        }
        let tokenPath =
            switch request.mode {
            case .discovery: "/token"
            case .fixedEndpoints: "/oauth/token"
            }
        return #"""
            // Tests of \#(type) against a stand-in for \#(request.name)'s server (NativeAuthTesting's
            // TestHTTPServer, in memory: no socket, so the tests are quick). Make the stand-in answer exactly like
            // \#(request.name) does (copy its answers from its documentation or a recorded exchange, with the
            // tokens replaced), then add a test for each of its quirks.
            import \#(type)
            import Foundation
            import LenientJSON
            import NativeAuth
            import NativeAuthTesting
            import Testing

            /// The stand-in. It accepts the code `code-1` with a PKCE verifier, and rotates refresh tokens.
            private func startStandIn() async throws -> TestHTTPServer {
                try await TestHTTPServer.start(.inMemory) { request in
                    switch (request.method, request.path) {
            \#(discovery)        case ("POST", "\#(tokenPath)"):
                        let form = request.form
                        switch form.first(named: "grant_type") {
                        case "authorization_code":
                            guard form.first(named: "code") == "code-1", form.first(named: "code_verifier") != nil else {
                                return .json(#"{"error": "invalid_grant", "error_description": "bad code"}"#, status: 400)
                            }
                            return .json(
                                #"{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-1"}"#
                            )
                        case "refresh_token":
                            guard form.first(named: "refresh_token") == "rt-1" else {
                                return .json(#"{"error": "invalid_grant"}"#, status: 400)
                            }
                            return .json(
                                #"{"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#
                            )
                        default:
                            return .json(#"{"error": "unsupported_grant_type"}"#, status: 400)
                        }
                    default:
                        return .text("not found", status: 404)
                    }
                }
            }

            /// Runs `body` with the stand-in and an authenticator for it, and stops the server afterwards.
            private func withStandIn(
                _ body: (Authenticator) async throws -> Void
            ) async throws {
                let server = try await startStandIn()
                do {
                    let configuration = ProviderConfiguration(
            \#(configuration)
                    )
                    // As an app does at start-up: register the provider, then build it by its id.
                    var registry = ProviderRegistry()
                    try registry.register(\#(type).self)
                    let provider = try registry.makeProvider(configuration)
                    let authenticator = Authenticator(
                        provider: provider, store: MemoryTokenStore(), transport: server.transport)
                    try await body(authenticator)
                } catch {
                    await server.stop()
                    throw error
                }
                await server.stop()
            }

            @Test func signsInRefreshesAndSignsOut() async throws {
                try await withStandIn { authenticator in
                    let presenter = AutoApprovingPresenter { parameters in
                        // The authorization request as \#(request.name) would see it.
                        #expect(parameters.first(named: "code_challenge_method") == "S256")
                        #expect(parameters.first(named: "client_id") == "test-client")
                        return "code-1"
                    }
                    let tokens = try await authenticator.login(.browser(presenter))
                    #expect(tokens.accessToken == "at-1")
                    #expect(tokens.refreshToken == "rt-1")
                    #expect(try await authenticator.accessToken() == "at-1")

                    let refreshed = try await authenticator.refresh()
                    #expect(refreshed.accessToken == "at-2")
                    #expect(refreshed.refreshToken == "rt-2")

                    try await authenticator.logout()
                    #expect(try await authenticator.currentTokens() == nil)
                }
            }

            @Test func aRefusedCodeStoresNothing() async throws {
                try await withStandIn { authenticator in
                    let presenter = AutoApprovingPresenter { _ in "not-the-code" }
                    let error = try await #require(throws: AuthError.self) {
                        try await authenticator.login(.browser(presenter))
                    }
                    #expect(error.code == .tokenExchangeFailed)
                    #expect(error.oauthError == "invalid_grant")
                    #expect(try await authenticator.currentTokens() == nil)
                }
            }

            """#
    }

    static func instructions(_ request: ScaffoldRequest, dependencies: Dependencies) -> String {
        let path = request.customPath ? ",\n        path: \"\(request.modulePath)\"" : ""
        let nativeAuth = dependencies.reference("NativeAuth")
        let testing = dependencies.reference("NativeAuthTesting")
        let json = dependencies.reference("LenientJSON")
        let missing =
            dependencies.missingDependency
            ? """

            This package does not depend on NativeAuth yet: add it to `dependencies:` too, and use its
            package identity in `package:` above.

            """ : ""
        return """

            Add the module and its tests to Package.swift: append these lines at the end of the file (or move
            the two entries into its `targets:` list).

            package.targets += [
                .target(
                    name: "\(request.moduleName)",
                    dependencies: [\(nativeAuth)]\(path)
                ),
                .testTarget(
                    name: "\(request.testModuleName)",
                    dependencies: [
                        "\(request.moduleName)",
                        \(nativeAuth),
                        \(testing),
                        \(json),
                    ]
                ),
            ]
            \(missing)
            Then:
              swift test --filter \(request.testModuleName)     runs the provider against its local stand-in
              try registry.register(\(request.typeName).self)   registers it at start-up (provider id "\(request.id)")
            The guide "Writing a provider" in NativeAuth's documentation covers each hook.
            """
    }
}
