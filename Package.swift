// swift-tools-version: 6.1

import PackageDescription

let package = Package(
    name: "NativeAuth",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LenientJSON", targets: ["LenientJSON"]),
        .library(name: "NativeAuth", targets: ["NativeAuth"]),
        // URLSession's transport: Apple platforms' own; on Linux it links FoundationNetworking and
        // libcurl, so the core and the tools leave it out there.
        .library(name: "NativeAuthURLSession", targets: ["NativeAuthURLSession"]),
        // The AsyncHTTPClient transport (proxies, a private CA, client certificates): the default
        // of NativeAuthCommands' tools on Linux.
        .library(name: "NativeAuthAsyncHTTPClient", targets: ["NativeAuthAsyncHTTPClient"]),
        // The presenters of a terminal program: loopback redirect, paste, print-URL, the browser.
        .library(name: "NativeAuthPresenters", targets: ["NativeAuthPresenters"]),
        .library(name: "NativeAuthCommands", targets: ["NativeAuthCommands"]),
        // Temporary AWS credentials for the sign-in's ID token (STS AssumeRoleWithWebIdentity).
        .library(name: "NativeAuthAWS", targets: ["NativeAuthAWS"]),
        // Tokens in the OS keyring: the Secret Service (libsecret) on Linux, the Keychain on Apple platforms.
        .library(name: "NativeAuthKeyring", targets: ["NativeAuthKeyring"]),
        // Tokens in PostgreSQL, shared by a fleet of instances, each refreshed once (postgres-nio).
        .library(name: "NativeAuthPostgres", targets: ["NativeAuthPostgres"]),
        .library(name: "NativeAuthGitHub", targets: ["NativeAuthGitHub"]),
        .library(name: "NativeAuthCognito", targets: ["NativeAuthCognito"]),
        .library(name: "NativeAuthGoogle", targets: ["NativeAuthGoogle"]),
        .library(name: "NativeAuthEntra", targets: ["NativeAuthEntra"]),
        .library(name: "NativeAuthKeycloak", targets: ["NativeAuthKeycloak"]),
        .library(name: "NativeAuthGitLab", targets: ["NativeAuthGitLab"]),
        .library(name: "NativeAuthAuth0", targets: ["NativeAuthAuth0"]),
        .library(name: "NativeAuthOkta", targets: ["NativeAuthOkta"]),
        // The MCP Swift SDK's HTTPClientAuthorizer, with NativeAuth's discovery, registration and stores.
        .library(name: "NativeAuthMCP", targets: ["NativeAuthMCP"]),
        // A swift-openapi-runtime ClientMiddleware: generated OpenAPI clients with NativeAuth's tokens.
        .library(name: "NativeAuthOpenAPI", targets: ["NativeAuthOpenAPI"]),
        // swift-service-lifecycle services: TokenRenewal renews a service's tokens ahead of expiry.
        .library(name: "NativeAuthServices", targets: ["NativeAuthServices"]),
        // A token agent on a Unix socket (forwarded over SSH like ssh-agent), and its client.
        .library(name: "NativeAuthAgent", targets: ["NativeAuthAgent"]),
        // For tests of apps and provider modules: a local HTTP server and an approving presenter.
        .library(name: "NativeAuthTesting", targets: ["NativeAuthTesting"]),
        // `swift package scaffold-provider --name Acme`: a provider module and its tests.
        .plugin(name: "ScaffoldProvider", targets: ["ScaffoldProvider"]),
    ],
    // Which provider modules the all-providers `nativeauth` CLI links: `swift build --traits Cognito`
    // builds it with Cognito only (plus the generic OIDC provider, which is always there).
    traits: [
        .trait(name: "GitHub", description: "Link NativeAuthGitHub into nativeauth."),
        .trait(name: "Cognito", description: "Link NativeAuthCognito into nativeauth."),
        .trait(name: "Google", description: "Link NativeAuthGoogle into nativeauth."),
        .trait(name: "Entra", description: "Link NativeAuthEntra (Microsoft Entra ID) into nativeauth."),
        .trait(name: "Keycloak", description: "Link NativeAuthKeycloak into nativeauth."),
        .trait(name: "GitLab", description: "Link NativeAuthGitLab into nativeauth."),
        .trait(name: "Auth0", description: "Link NativeAuthAuth0 into nativeauth."),
        .trait(name: "Okta", description: "Link NativeAuthOkta into nativeauth."),
        .default(enabledTraits: ["GitHub", "Cognito", "Google", "Entra", "Keycloak", "GitLab", "Auth0", "Okta"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Spans and metrics (both already in the graph through AsyncHTTPClient and postgres-nio).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The agent's length-prefixed frames (already in the graph through AsyncHTTPClient).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Settings read in layers (flags, environment, files); no trait: configuration files are
        // read with LenientJSON.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", from: "0.12.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The OpenAPI sample's transport (the generated client's code is committed: see Samples/NotesClient).
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
        ),
        .target(name: "LenientJSON", dependencies: ["CJansson"]),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        // libsecret in plain C types, with cancellable calls (see its header for why).
        .target(
            name: "CNativeAuthSecret",
            dependencies: [.target(name: "CLibSecret", condition: .when(platforms: [.linux]))]
        ),
        .target(
            name: "NativeAuthKeyring",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .target(name: "CNativeAuthSecret", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "NativeAuthPostgres",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // File status for FileTokenStore, read in C (see its header for why).
        .target(name: "CNativeAuthPOSIX"),
        .target(
            name: "NativeAuth",
            dependencies: [
                "LenientJSON",
                "CNativeAuthPOSIX",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "NativeAuthURLSession",
            dependencies: [
                "NativeAuth",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NativeAuthAsyncHTTPClient",
            dependencies: [
                "NativeAuth",
                // StandardTransport's default on Apple platforms; on Linux it is left out.
                .target(
                    name: "NativeAuthURLSession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "NativeAuthPresenters",
            dependencies: [
                "NativeAuth",
                "CNativeAuthPOSIX",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Provider modules: each an app may link on its own.
        .target(
            name: "NativeAuthGitHub",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(name: "NativeAuthCognito", dependencies: ["NativeAuth", "LenientJSON"]),
        .target(name: "NativeAuthGoogle", dependencies: ["NativeAuth"]),
        .target(name: "NativeAuthKeycloak", dependencies: ["NativeAuth", "LenientJSON"]),
        .target(name: "NativeAuthGitLab", dependencies: ["NativeAuth"]),
        .target(name: "NativeAuthOkta", dependencies: ["NativeAuth", "LenientJSON"]),
        .target(name: "NativeAuthAuth0", dependencies: ["NativeAuth"]),
        .target(name: "NativeAuthEntra", dependencies: ["NativeAuth", "LenientJSON"]),
        // Bridges to cloud providers' credentials: an edge of its own (it reads STS's XML).
        .target(
            name: "NativeAuthAWS",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "NativeAuthCommands",
            dependencies: [
                "NativeAuth",
                "NativeAuthAWS",
                "CNativeAuthPOSIX",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "NativeAuthKeyring",
                "NativeAuthAgent",
                "LenientJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The sample CLIs are executables, not products: their binaries are named like the target.
        .executableTarget(
            name: "oidc-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/OIDCLogin"
        ),
        .executableTarget(
            name: "github-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthGitHub",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/GitHubLogin"
        ),
        .executableTarget(
            name: "cognito-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthCognito",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/CognitoLogin"
        ),
        .executableTarget(
            name: "google-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthGoogle",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/GoogleLogin"
        ),
        .executableTarget(
            name: "entra-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthEntra",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/EntraLogin"
        ),
        .executableTarget(
            name: "keycloak-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthKeycloak",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/KeycloakLogin"
        ),
        .executableTarget(
            name: "gitlab-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthGitLab",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/GitLabLogin"
        ),
        .executableTarget(
            name: "auth0-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthAuth0",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/Auth0Login"
        ),
        .executableTarget(
            name: "okta-login",
            dependencies: [
                "NativeAuth",
                "NativeAuthOkta",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/OktaLogin"
        ),
        .executableTarget(
            name: "nativeauth",
            dependencies: [
                "NativeAuth",
                "NativeAuthCommands",
                .target(name: "NativeAuthGitHub", condition: .when(traits: ["GitHub"])),
                .target(name: "NativeAuthCognito", condition: .when(traits: ["Cognito"])),
                .target(name: "NativeAuthGoogle", condition: .when(traits: ["Google"])),
                .target(name: "NativeAuthEntra", condition: .when(traits: ["Entra"])),
                .target(name: "NativeAuthKeycloak", condition: .when(traits: ["Keycloak"])),
                .target(name: "NativeAuthGitLab", condition: .when(traits: ["GitLab"])),
                .target(name: "NativeAuthAuth0", condition: .when(traits: ["Auth0"])),
                .target(name: "NativeAuthOkta", condition: .when(traits: ["Okta"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/NativeAuthCLI"
        ),
        // An MCP client of the official Swift SDK, authorized by NativeAuthMCP.
        .target(
            name: "NativeAuthMCP",
            dependencies: [
                "NativeAuth",
                "NativeAuthPresenters",
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NativeAuthAgent",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ]
        ),
        .target(
            name: "NativeAuthServices",
            dependencies: [
                "NativeAuth",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A service on a ServiceGroup: TokenRenewal and a worker calling an API, stopped by SIGTERM.
        .executableTarget(
            name: "token-service",
            dependencies: [
                "NativeAuth",
                "NativeAuthServices",
                "NativeAuthAsyncHTTPClient",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Samples/TokenService"
        ),
        .target(
            name: "NativeAuthOpenAPI",
            dependencies: [
                "NativeAuth",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        // The client swift-openapi-generator 1.14.3 made of Samples/NotesClient/openapi.yaml
        // (committed; `scripts/generate-openapi` makes it again, and says why it is not the build plugin).
        .target(
            name: "NotesAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Samples/NotesClient/NotesAPI"
        ),
        .executableTarget(
            name: "notes-client",
            dependencies: [
                "NativeAuth",
                "NativeAuthOpenAPI",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "NotesAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ],
            path: "Samples/NotesClient/NotesClient"
        ),
        .executableTarget(
            name: "mcp-client-sample",
            dependencies: [
                "NativeAuth",
                "NativeAuthMCP",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                .product(name: "MCP", package: "swift-sdk"),
            ],
            path: "Samples/MCPClient"
        ),
        // N instances against one PostgreSQL, calling an API with one shared account's tokens.
        .executableTarget(
            name: "fleet-worker",
            dependencies: [
                "NativeAuth",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "NativeAuthPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/FleetWorker"
        ),
        // The demo and the sandbox, apart from `nativeauth` so that a shipped CLI does not link the
        // sandbox authorization server.
        .executableTarget(
            name: "nativeauth-demo",
            dependencies: [
                "NativeAuth",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "NativeAuthCommands",
                "NativeAuthTesting",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/NativeAuthDemo"
        ),
        // The custom-provider sample: a provider module for a fictional in-house server, and its CLI.
        .target(
            name: "InitechProvider",
            dependencies: [
                "NativeAuth",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Samples/CustomProvider/InitechProvider"
        ),
        .executableTarget(
            name: "initech-login",
            dependencies: [
                "InitechProvider",
                "NativeAuth",
                "NativeAuthCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/CustomProvider/InitechLogin"
        ),
        // A real HTTP server on loopback (SwiftNIO) and an approving presenter, for anyone's tests.
        .target(
            name: "NativeAuthTesting",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuth",
                "NativeAuthURLSession",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "LenientJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .plugin(
            name: "ScaffoldProvider",
            capability: .command(
                intent: .custom(
                    verb: "scaffold-provider",
                    description: "Write a provider module for NativeAuth, with a test against a local server."
                ),
                permissions: [.writeToPackageDirectory(reason: "It writes the new provider module and its tests.")]
            )
        ),
        // What the project's own tests share: processes, scripted input, and NativeAuthTesting.
        .target(
            name: "TestSupport",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"), "NativeAuth", "NativeAuthTesting", "LenientJSON",
                "NativeAuthAsyncHTTPClient", "NativeAuthPresenters", "NativeAuthURLSession",
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "LenientJSONTests", dependencies: ["LenientJSON"]),
        .testTarget(
            name: "NativeAuthMCPTests",
            dependencies: [
                "NativeAuthMCP",
                "NativeAuth",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthPresenters",
                "NativeAuthTesting",
                "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MCP", package: "swift-sdk"),
            ]
        ),
        .testTarget(
            name: "NativeAuthAgentTests",
            dependencies: [
                "NativeAuthAgent",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NativeAuthServicesTests",
            dependencies: [
                "NativeAuthServices",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NativeAuthOpenAPITests",
            dependencies: [
                "NativeAuthOpenAPI",
                "NativeAuth",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthTesting",
                "NotesAPI",
                "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ]
        ),
        .testTarget(
            name: "NativeAuthGoogleTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthGoogle",
                "NativeAuth",
                "TestSupport",
                "LenientJSON",
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        .testTarget(
            name: "NativeAuthOktaTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthOkta",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthAuth0Tests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthAuth0",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthGitLabTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthGitLab",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthKeycloakTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthKeycloak",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthEntraTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthEntra",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthCognitoTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthCognito",
                "NativeAuth",
                "TestSupport",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "NativeAuthTestingTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthTesting",
                "TestSupport",
                "NativeAuth",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "InitechProviderTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"), "InitechProvider", "NativeAuth",
                "NativeAuthTesting", "TestSupport", "LenientJSON",
            ]
        ),
        .testTarget(
            name: "NativeAuthGitHubTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuthGitHub",
                "NativeAuth",
                "TestSupport",
                "LenientJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "NativeAuthTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "NativeAuth",
                "NativeAuthAWS",
                "NativeAuthAsyncHTTPClient",
                "NativeAuthCommands",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "TestSupport",
                "LenientJSON",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "NativeAuthServices",
            ]
        ),
        // The keyring stores: their shared logic in memory, and (NATIVEAUTH_KEYRING_TESTS=1) a real
        // gnome-keyring-daemon on a private bus (scripts/keyring-daemon).
        .testTarget(
            name: "NativeAuthKeyringTests",
            dependencies: [
                "NativeAuthKeyring",
                "NativeAuth",
                "TestSupport",
                "LenientJSON",
            ]
        ),
        // Against a real PostgreSQL started by scripts/postgres (NATIVEAUTH_POSTGRES_URL).
        .testTarget(
            name: "NativeAuthPostgresTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                "NativeAuthPostgres",
                "NativeAuth",
                "NativeAuthTesting",
                "TestSupport",
                "LenientJSON",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Against the real authorization server started by scripts/test-server (django-oauth-toolkit).
        .testTarget(
            name: "NativeAuthIntegrationTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                "NativeAuth",
                "NativeAuthOpenAPI",
                "NotesAPI",
                "TestSupport",
                "LenientJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ]
        ),
        // Runs parse, encode and error paths so that CI can check them under valgrind for leaks.
        // The child of FileTokenStoreCrashTests: saves token sets in a loop until it is killed.
        .executableTarget(
            name: "TokenStoreCrashWriter",
            dependencies: ["NativeAuth", "NativeAuthKeyring", "TestSupport"],
            path: "Tests/TokenStoreCrashWriter"
        ),
        .executableTarget(
            name: "LenientJSONLeakCheck",
            dependencies: ["LenientJSON"],
            path: "Tests/LenientJSONLeakCheck"
        ),
    ]
)

// One strictness for every target (Swift 6 language mode comes with the tools version).
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}

// scripts/test.sh builds and tests under ThreadSanitizer and AddressSanitizer with
// NATIVEAUTH_WITHOUT_POSTGRES=1, which leaves NativeAuthPostgres, its tests and postgres-nio out: that
// suite needs the real database and runs once, unsanitized, and postgres-nio would add minutes to
// each sanitizer build for no test that runs there.
if Context.environment["NATIVEAUTH_WITHOUT_POSTGRES"] == "1" {
    let postgresTargets: Set = ["NativeAuthPostgres", "NativeAuthPostgresTests", "fleet-worker"]
    package.products.removeAll { $0.name == "NativeAuthPostgres" }
    package.targets.removeAll { postgresTargets.contains($0.name) }
    package.dependencies.removeAll {
        if case .sourceControl(_, let location, _) = $0.kind { return "\(location)".contains("postgres-nio") }
        return false
    }
}

// NATIVEAUTH_WITHOUT_MCP=1 (the sanitizer builds) leaves NativeAuthMCP, its sample and the MCP
// Swift SDK out: its test runs the sample against the official MCP server once, unsanitized.
if Context.environment["NATIVEAUTH_WITHOUT_MCP"] == "1" {
    let mcpTargets: Set = ["NativeAuthMCP", "NativeAuthMCPTests", "mcp-client-sample"]
    package.products.removeAll { $0.name == "NativeAuthMCP" }
    package.targets.removeAll { mcpTargets.contains($0.name) }
    package.dependencies.removeAll {
        if case .sourceControl(_, let location, _) = $0.kind { return "\(location)".contains("swift-sdk") }
        return false
    }
}

// scripts/test.sh's sanitizer builds also set NATIVEAUTH_WITHOUT_EXECUTABLES=1: the sample CLIs and
// the test helpers that run as processes are left out, and so are the suites that start them (they
// ran above, unsanitized); every library module and every in-process test is still built and run
// under both sanitizers.
if Context.environment["NATIVEAUTH_WITHOUT_EXECUTABLES"] == "1" {
    package.targets.removeAll { $0.type == .executable }
}
