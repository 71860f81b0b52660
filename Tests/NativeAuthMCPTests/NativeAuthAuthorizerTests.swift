// With the MCP trait off (the sanitizer builds), this module is empty.
#if MCP
    import Foundation
    import HTTPTypes
    import MCP
    import NativeAuth
    import NativeAuthMCP
    import NativeAuthPresenters
    import NativeAuthTesting
    import TestSupport
    import Testing

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// NativeAuthAuthorizer's own decisions, against the sandbox (the interplay with the MCP SDKs runs
    /// in MCPServerTests): where a token may go, and that a scope challenge steps up once.
    @Suite(.testLogging) struct NativeAuthAuthorizerTests {
        func authorizer(_ sandbox: SandboxAuthorizationServer, directory: TemporaryDirectory) async throws
            -> (NativeAuthAuthorizer, Authenticator)
        {
            let auth = Authenticator(
                provider: try GenericOIDCProvider(
                    configuration: ProviderConfiguration(
                        issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID,
                        scopes: ["openid", "profile"])),
                store: MemoryTokenStore(), transport: sandbox.transport)
            try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
            var options = NativeAuthAuthorizer.Options(
                clientName: "authorizer-tests", transport: sandbox.transport, directory: directory.path + "/store",
                opener: RedirectFollowingBrowser())
            options.store = auth.store
            options.signInTimeout = .seconds(20)
            return (
                NativeAuthAuthorizer(authenticator: auth, resource: sandbox.resourceURL("mcp"), options: options), auth
            )
        }

        @Test func aTokenGoesOnlyToItsResourceOverHTTPSOrLoopback() async throws {
            var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
            configuration.protectedResources = ["mcp"]
            let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
            defer { Task { await sandbox.stop() } }
            let directory = try TemporaryDirectory()
            let (authorizer, _) = try await authorizer(sandbox, directory: directory)
            let resource = sandbox.resourceURL("mcp")
            try await authorizer.prepareAuthorization(for: resource, session: URLSession.shared)
            #expect(authorizer.authorizationHeader(for: resource)?.hasPrefix("Bearer ") == true)
            let elsewhere = try #require(URL(string: "https://other.example/mcp"))
            #expect(authorizer.authorizationHeader(for: elsewhere) == nil, "another server gets no token")
            #expect(throws: AuthError.self) {
                try authorizer.validateEndpointSecurity(for: try #require(URL(string: "http://mcp.example/mcp")))
            }
            try authorizer.validateEndpointSecurity(for: resource)
        }

        @Test func aScopeChallengeStepsUpOncePerOperationThenTheRefusalStands() async throws {
            var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
            configuration.protectedResources = ["mcp"]
            configuration.scopesSupported += ["tools:call", "tools:admin"]
            let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
            defer { Task { await sandbox.stop() } }
            let directory = try TemporaryDirectory()
            let (authorizer, auth) = try await authorizer(sandbox, directory: directory)
            let resource = sandbox.resourceURL("mcp")
            let challenge = ["WWW-Authenticate": #"Bearer error="insufficient_scope", scope="tools:admin""#]
            let before = sandbox.requestCount(.authorization)
            #expect(
                try await authorizer.handleChallenge(
                    statusCode: 403, headers: challenge, endpoint: resource, operationKey: "tools/call",
                    session: URLSession.shared))
            #expect(sandbox.requestCount(.authorization) == before + 1, "one step-up sign-in")
            let asked = sandbox.lastAuthorizationQuery.first(named: "scope")?.split(separator: " ").map(String.init)
            #expect(Set(asked ?? []) == ["openid", "profile", "tools:admin"], "the union: \(asked ?? [])")
            #expect(try await auth.currentTokens()?.scopes.contains("tools:admin") == true)
            // The same operation refused again: no second sign-in, the refusal stands.
            #expect(
                try await !authorizer.handleChallenge(
                    statusCode: 403, headers: challenge, endpoint: resource, operationKey: "tools/call",
                    session: URLSession.shared))
            // A 403 that is not a scope challenge is not stepped up.
            #expect(
                try await !authorizer.handleChallenge(
                    statusCode: 403, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#],
                    endpoint: resource,
                    operationKey: "tools/list", session: URLSession.shared))
            #expect(sandbox.requestCount(.authorization) == before + 1)
        }
    }
#endif
