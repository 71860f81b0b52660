// swift-tools-version: 6.1
// NativeAuth's samples: a CLI per provider, `nativeauth` with every provider, the demo and its
// sandbox, a custom provider, an MCP client, an OpenAPI client, a service, a fleet worker, and an
// adapter of the public sender for a stack of one's own (HTTPClientAdapter). A package of its own
// with a path dependency on the root, as a program that uses NativeAuth would have: the root's
// manifest builds the library, and nothing only a sample needs. scripts/test.sh builds it into the
// root's build directory (the modules both build are compiled once), where the root's process
// tests find the CLIs.
import PackageDescription

// SwiftPM names a path dependency after its folder; this package sits in the root package's.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "nativeauth"

func nativeAuth(_ names: String...) -> [Target.Dependency] {
    names.map { .product(name: $0, package: root) }
}
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")

/// A provider's sample CLI: the commands of NativeAuthCommands with that provider registered.
func providerCLI(_ name: String, provider: String, path: String) -> Target {
    .executableTarget(
        name: name, dependencies: nativeAuth("NativeAuth", "NativeAuthCommands", provider) + [argumentParser],
        path: path)
}

/// A provider `nativeauth` links when its trait is on.
func traitProvider(_ trait: String) -> Target.Dependency {
    .product(name: "NativeAuth" + trait, package: root, condition: .when(traits: [trait]))
}

let providers = ["GitHub", "Cognito", "Google", "Entra", "Keycloak", "GitLab", "Auth0", "Okta"]
let providerTraits: Set<Trait> = Set(
    providers.map { Trait.trait(name: $0, description: "Link NativeAuth\($0) into nativeauth.") }
        + [Trait.default(enabledTraits: Set(providers))])
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "NativeAuthSamples",
    platforms: [.macOS(.v15)],
    // Which provider modules the all-providers `nativeauth` CLI links: `swift build --traits Cognito`
    // builds it with Cognito only (plus the generic OIDC provider, which is always there).
    traits: providerTraits,
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", from: "0.12.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The OpenAPI sample's transport (the generated client's code is committed: see NotesClient).
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "oidc-login", dependencies: nativeAuth("NativeAuth", "NativeAuthCommands") + [argumentParser],
            path: "OIDCLogin"),
        providerCLI("github-login", provider: "NativeAuthGitHub", path: "GitHubLogin"),
        providerCLI("cognito-login", provider: "NativeAuthCognito", path: "CognitoLogin"),
        providerCLI("google-login", provider: "NativeAuthGoogle", path: "GoogleLogin"),
        providerCLI("entra-login", provider: "NativeAuthEntra", path: "EntraLogin"),
        providerCLI("keycloak-login", provider: "NativeAuthKeycloak", path: "KeycloakLogin"),
        providerCLI("gitlab-login", provider: "NativeAuthGitLab", path: "GitLabLogin"),
        providerCLI("auth0-login", provider: "NativeAuthAuth0", path: "Auth0Login"),
        providerCLI("okta-login", provider: "NativeAuthOkta", path: "OktaLogin"),
        .executableTarget(
            name: "nativeauth",
            dependencies: nativeAuth("NativeAuth", "NativeAuthCommands") + providers.map(traitProvider)
                + [argumentParser],
            path: "NativeAuthCLI"),
        // The demo and the sandbox, apart from `nativeauth` so that a shipped CLI does not link the
        // sandbox authorization server.
        .executableTarget(
            name: "nativeauth-demo",
            dependencies: nativeAuth(
                "NativeAuth", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters", "NativeAuthCommands",
                "NativeAuthTesting", "LenientJSON")
                + [httpTypes, .product(name: "HTTPTypesFoundation", package: "swift-http-types"), argumentParser],
            path: "NativeAuthDemo"),
        // The custom-provider sample: a provider module for a fictional in-house server, and its CLI.
        // (The root's InitechProviderTests build the module's sources as a fixture of their own.)
        .target(
            name: "InitechProvider", dependencies: nativeAuth("NativeAuth", "LenientJSON") + [httpTypes],
            path: "CustomProvider/InitechProvider"),
        .executableTarget(
            name: "initech-login",
            dependencies: ["InitechProvider"] + nativeAuth("NativeAuth", "NativeAuthCommands") + [argumentParser],
            path: "CustomProvider/InitechLogin"),
        // An MCP client of the official Swift SDK, authorized by NativeAuthMCP.
        .executableTarget(
            name: "mcp-client-sample",
            dependencies: nativeAuth("NativeAuth", "NativeAuthMCP", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters")
                + [.product(name: "MCP", package: "swift-sdk")],
            path: "MCPClient"),
        // The client swift-openapi-generator 1.14.3 made of NotesClient/openapi.yaml (committed;
        // `scripts/generate-openapi` makes it again, and says why it is not the build plugin).
        .target(
            name: "NotesAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), httpTypes],
            path: "NotesClient/NotesAPI"),
        .executableTarget(
            name: "notes-client",
            dependencies: ["NotesAPI"]
                + nativeAuth("NativeAuth", "NativeAuthOpenAPI", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters")
                + [
                    .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                    .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                ],
            path: "NotesClient/NotesClient"),
        // A service on a ServiceGroup: TokenRenewal and a worker calling an API, stopped by SIGTERM.
        .executableTarget(
            name: "token-service",
            dependencies: nativeAuth("NativeAuth", "NativeAuthServices", "NativeAuthAsyncHTTPClient") + [
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"), httpTypes,
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "TokenService"),
        // N instances against one PostgreSQL, calling an API with one shared account's tokens.
        .executableTarget(
            name: "fleet-worker",
            dependencies: nativeAuth(
                "NativeAuth", "NativeAuthAsyncHTTPClient", "NativeAuthPresenters", "NativeAuthPostgres")
                + [
                    .product(name: "PostgresNIO", package: "postgres-nio"),
                    .product(name: "NIOSSL", package: "swift-nio-ssl"), argumentParser, httpTypes,
                    .product(name: "Logging", package: "swift-log"),
                ],
            path: "FleetWorker"),
        // NativeAuth's sender behind a stack of one's own (AsyncHTTPClient's HTTPClient), on public
        // API only: what a Vapor, gRPC or WebSocket adapter is made of.
        .target(
            name: "HTTPClientAdapter",
            dependencies: nativeAuth("NativeAuth") + [
                .product(name: "AsyncHTTPClient", package: "async-http-client"), httpTypes,
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "HTTPClientAdapter/Sources"),
        .testTarget(
            name: "HTTPClientAdapterTests",
            dependencies: ["HTTPClientAdapter"] + nativeAuth("NativeAuth", "NativeAuthTesting") + [
                .product(name: "AsyncHTTPClient", package: "async-http-client"), httpTypes,
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "HTTPClientAdapter/Tests"),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + settings
}
