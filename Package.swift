// swift-tools-version: 6.1
// NativeAuth: the core, its edges, the provider modules, the test kit and their tests. The sample
// programs (a CLI per provider, `nativeauth`, the demo) are a package of their own, Samples/, with a
// path dependency on this one, as Benchmarks/ and Fuzz/ are.
import PackageDescription

func product(_ name: String, _ package: String) -> Target.Dependency { .product(name: name, package: package) }
let crypto = product("Crypto", "swift-crypto")
let cryptoExtras = product("CryptoExtras", "swift-crypto")
let httpTypes = product("HTTPTypes", "swift-http-types")
let httpTypesFoundation = product("HTTPTypesFoundation", "swift-http-types")
let jwtKit = product("JWTKit", "jwt-kit")
let logging = product("Logging", "swift-log")
let nioConcurrency = product("NIOConcurrencyHelpers", "swift-nio")
let nio: [Target.Dependency] = ["NIOCore", "NIOPosix", "NIOHTTP1"].map { product($0, "swift-nio") }
let openAPIRuntime = product("OpenAPIRuntime", "swift-openapi-runtime")
let serviceLifecycle = product("ServiceLifecycle", "swift-service-lifecycle")

/// The optional parts, each a trait (on by default): the sanitizer builds turn them off, and the
/// module compiles to nothing without its dependency.
let postgres = product("PostgresNIO", "postgres-nio").when(trait: "Postgres")
let mcp = product("MCP", "swift-sdk").when(trait: "MCP")

/// The provider modules: each an app may link on its own.
let providers = ["GitHub", "Cognito", "Google", "Entra", "Keycloak", "GitLab", "Auth0", "Okta"]
/// Every library product, each with its one target.
let libraries =
    [
        "LenientJSON", "NativeAuth", "NativeAuthURLSession", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters",
        "NativeAuthCommands", "NativeAuthAWS", "NativeAuthKeyring", "NativeAuthPostgres", "NativeAuthMCP",
        "NativeAuthOpenAPI", "NativeAuthServices", "NativeAuthAgent", "NativeAuthTesting",
    ] + providers.map { "NativeAuth" + $0 }

/// A test target of `module` (named `moduleTests`), with the project's TestSupport.
func tests(_ module: String, _ dependencies: [Target.Dependency] = [], path: String? = nil) -> Target {
    .testTarget(
        name: module + "Tests",
        dependencies: [.target(name: module)] + (module == "NativeAuth" ? [] : ["NativeAuth"])
            + ["TestSupport", "LenientJSON"] + dependencies, path: path)
}

let package = Package(
    name: "NativeAuth",
    platforms: [.macOS(.v15)],
    products: libraries.map { .library(name: $0, targets: [$0]) } + [
        // `swift package scaffold-provider --name Acme`: a provider module and its tests.
        .plugin(name: "ScaffoldProvider", targets: ["ScaffoldProvider"])
    ],
    traits: [
        .trait(name: "Postgres", description: "NativeAuthPostgres: tokens in PostgreSQL for a fleet (postgres-nio)."),
        .trait(
            name: "MCP", description: "NativeAuthMCP: the MCP Swift SDK's authorizer (modelcontextprotocol/swift-sdk)."),
        .default(enabledTraits: ["Postgres", "MCP"]),
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
        // The OpenAPI tests' transport (swift-openapi-async-http-client's).
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]),
        .target(name: "LenientJSON", dependencies: ["CJansson"]),
        .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        // libsecret in plain C types, with cancellable calls (see its header for why).
        .target(
            name: "CNativeAuthSecret",
            dependencies: [.target(name: "CLibSecret", condition: .when(platforms: [.linux]))]
        ),
        // File status for FileTokenStore, read in C (see its header for why).
        .target(name: "CNativeAuthPOSIX"),
        // The core: no swift-nio module, no TLS library, no terminal code.
        .target(
            name: "NativeAuth",
            dependencies: [
                "LenientJSON", "CNativeAuthPOSIX", httpTypes, logging, product("Configuration", "swift-configuration"),
                crypto, cryptoExtras, jwtKit, product("Tracing", "swift-distributed-tracing"),
                product("CoreMetrics", "swift-metrics"),
            ]),
        .target(name: "NativeAuthURLSession", dependencies: ["NativeAuth", httpTypes, httpTypesFoundation, logging]),
        .target(
            name: "NativeAuthAsyncHTTPClient",
            dependencies: [
                "NativeAuth",
                // StandardTransport's default on Apple platforms; on Linux it is left out.
                .target(
                    name: "NativeAuthURLSession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                product("AsyncHTTPClient", "async-http-client"), httpTypes, logging, nioConcurrency,
                product("NIOSSL", "swift-nio-ssl"),
            ] + nio),
        // The presenters of a terminal program: loopback redirect, paste, print-URL, the browser.
        .target(
            name: "NativeAuthPresenters", dependencies: ["NativeAuth", "CNativeAuthPOSIX", httpTypes, logging] + nio),
        .target(
            name: "NativeAuthKeyring",
            dependencies: [
                "NativeAuth", "LenientJSON", .target(name: "CNativeAuthSecret", condition: .when(platforms: [.linux])),
            ]),
        // Tokens in PostgreSQL, shared by a fleet of instances, each refreshed once.
        .target(
            name: "NativeAuthPostgres",
            dependencies: ["NativeAuth", "LenientJSON", crypto, logging, serviceLifecycle, postgres]),
        // Temporary AWS credentials for the sign-in's ID token (STS AssumeRoleWithWebIdentity).
        .target(name: "NativeAuthAWS", dependencies: ["NativeAuth", "LenientJSON", httpTypes]),
        // The MCP Swift SDK's HTTPClientAuthorizer, with NativeAuth's discovery, registration and stores.
        .target(name: "NativeAuthMCP", dependencies: ["NativeAuth", "NativeAuthPresenters", httpTypes, logging, mcp]),
        // A swift-openapi-runtime ClientMiddleware: generated OpenAPI clients with NativeAuth's tokens.
        .target(
            name: "NativeAuthOpenAPI", dependencies: ["NativeAuth", openAPIRuntime, httpTypes, httpTypesFoundation]),
        // swift-service-lifecycle services: TokenRenewal renews a service's tokens ahead of expiry.
        .target(name: "NativeAuthServices", dependencies: ["NativeAuth", serviceLifecycle, logging]),
        // A token agent on a Unix socket (forwarded over SSH like ssh-agent), and its client.
        .target(
            name: "NativeAuthAgent",
            dependencies: ["NativeAuth", "LenientJSON", logging, product("NIOExtras", "swift-nio-extras")] + nio),
        // The commands the sample CLIs are made of, on all of the above.
        .target(
            name: "NativeAuthCommands",
            dependencies: [
                "NativeAuth", "NativeAuthAWS", "CNativeAuthPOSIX", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters",
                "NativeAuthKeyring", "NativeAuthAgent", "LenientJSON",
                product("ArgumentParser", "swift-argument-parser"),
                product("Configuration", "swift-configuration"), logging, httpTypes,
            ]),
        // For tests of apps and provider modules: the sandbox, a local HTTP server, fakes, conformance.
        .target(
            name: "NativeAuthTesting",
            dependencies: [
                "NativeAuth", "NativeAuthURLSession", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters",
                "LenientJSON",
                crypto, cryptoExtras, httpTypes, httpTypesFoundation, logging, nioConcurrency,
                product("NIOSSL", "swift-nio-ssl"),
            ] + nio),
        .plugin(
            name: "ScaffoldProvider",
            capability: .command(
                intent: .custom(
                    verb: "scaffold-provider",
                    description: "Write a provider module for NativeAuth, with a test against a local server."),
                permissions: [.writeToPackageDirectory(reason: "It writes the new provider module and its tests.")])),

        // What the project's own tests share: processes, scripted input, and NativeAuthTesting.
        .target(
            name: "TestSupport",
            dependencies: [
                "NativeAuth", "NativeAuthTesting", "LenientJSON", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters",
                "NativeAuthURLSession", nioConcurrency, logging, cryptoExtras,
            ],
            path: "Tests/TestSupport"),
        // Fixtures built from the samples' sources under names of their own: the generated client of
        // the Notes API (Samples/NotesClient), and the custom provider (Samples/CustomProvider).
        .target(
            name: "NotesAPIFixture", dependencies: [openAPIRuntime, httpTypes], path: "Samples/NotesClient/NotesAPI"),
        .target(
            name: "InitechProviderFixture", dependencies: ["NativeAuth", "LenientJSON", httpTypes],
            path: "Samples/CustomProvider/InitechProvider"),
        .testTarget(name: "LenientJSONTests", dependencies: ["LenientJSON"]),
        tests(
            "NativeAuth",
            [crypto, jwtKit, httpTypes, logging, nioConcurrency] + [
                product("InMemoryTracing", "swift-distributed-tracing"), product("MetricsTestKit", "swift-metrics"),
            ]),
        tests("NativeAuthPresenters", ["CNativeAuthPOSIX", crypto, httpTypes, nioConcurrency] + nio),
        tests(
            "NativeAuthAsyncHTTPClient",
            [
                product("AsyncHTTPClient", "async-http-client"), "NativeAuthServices", serviceLifecycle, httpTypes,
                logging,
                nioConcurrency,
            ]),
        tests("NativeAuthCommands", [product("ArgumentParser", "swift-argument-parser")]),
        tests("NativeAuthAWS", ["NativeAuthCommands", httpTypes]),
        tests("NativeAuthKeyring", [nioConcurrency]),
        // Against a real PostgreSQL started by scripts/postgres (NATIVEAUTH_POSTGRES_URL).
        tests("NativeAuthPostgres", [postgres, crypto, httpTypes, logging, nioConcurrency, serviceLifecycle]),
        tests("NativeAuthMCP", ["NativeAuthAsyncHTTPClient", "NativeAuthPresenters", httpTypes, mcp]),
        tests(
            "NativeAuthOpenAPI",
            [
                "NativeAuthAsyncHTTPClient", "NotesAPIFixture", httpTypes, openAPIRuntime,
                product("OpenAPIAsyncHTTPClient", "swift-openapi-async-http-client"),
            ]),
        tests("NativeAuthServices", [serviceLifecycle, httpTypes, logging]),
        tests("NativeAuthAgent", [httpTypes, logging]),
        tests("NativeAuthTesting", [httpTypes, httpTypesFoundation, nioConcurrency]),
        // The custom provider's own tests (the sample's CLI, initech-login, is built by Samples/).
        .testTarget(
            name: "InitechProviderTests",
            dependencies: ["InitechProviderFixture", "NativeAuth", "TestSupport", "LenientJSON", nioConcurrency]),
        // Against the real authorization servers started by scripts/test-server, with the sample CLIs.
        .testTarget(
            name: "NativeAuthIntegrationTests",
            dependencies: [
                "NativeAuth", "NativeAuthOpenAPI", "NotesAPIFixture", "TestSupport", "LenientJSON", crypto, httpTypes,
                nioConcurrency, openAPIRuntime, product("OpenAPIAsyncHTTPClient", "swift-openapi-async-http-client"),
            ]),
        // The child of FileTokenStoreCrashTests: saves token sets in a loop until it is killed.
        .executableTarget(
            name: "TokenStoreCrashWriter", dependencies: ["NativeAuth", "NativeAuthKeyring", "TestSupport"],
            path: "Tests/TokenStoreCrashWriter"),
        // Runs parse, encode and error paths so that CI can check them under valgrind for leaks.
        .executableTarget(
            name: "LenientJSONLeakCheck", dependencies: ["LenientJSON"], path: "Tests/LenientJSONLeakCheck"),
    ]
        + providers.map { name in
            .target(
                name: "NativeAuth" + name,
                dependencies: ["NativeAuth", "LenientJSON", httpTypes])
        }
        + providers.map { name in
            tests("NativeAuth" + name, [crypto, jwtKit, httpTypes, httpTypesFoundation, nioConcurrency])
        }
)

extension Target.Dependency {
    /// The dependency, only when `trait` is on.
    func when(trait: String) -> Target.Dependency {
        guard case .productItem(let name, let package, let moduleAliases, _) = self else { return self }
        return .productItem(
            name: name, package: package, moduleAliases: moduleAliases, condition: .when(traits: [trait]))
    }
}

// One strictness for every target (Swift 6 language mode comes with the tools version).
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
