// token-service: a service run by swift-service-lifecycle. It signs in as a client (client
// credentials), TokenRenewal keeps the tokens renewed ahead of their expiry, and a worker calls an
// API with them every interval, until SIGTERM or SIGINT stops the group gracefully (exit 0).
//
//     NATIVEAUTH_CLIENT_SECRET=… token-service --issuer URL --client-id ID --api URL [--every MS]
//
// It asks for the scope `read` (the project's test server, scripts/test-server, has such a client).
//
// The secret comes from the environment, never the command line. Each call prints one line:
// `GET URL: STATUS`.

import Foundation
import HTTPTypes
import Logging
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthServices
import ServiceLifecycle
import UnixSignals

@main
struct TokenService {
    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        guard let issuer = value("--issuer").flatMap(URL.init(string:)), let clientID = value("--client-id"),
            let api = value("--api").flatMap(URL.init(string:)),
            let secret = ProcessInfo.processInfo.environment["NATIVEAUTH_CLIENT_SECRET"]
        else {
            throw AuthError(
                .configurationInvalid,
                "usage: NATIVEAUTH_CLIENT_SECRET=… token-service --issuer URL --client-id ID --api URL [--every MS]")
        }
        let every = Duration.milliseconds(Int(value("--every") ?? "") ?? 1000)
        var logger = Logger(label: "token-service")
        logger.logLevel = .info

        var registry = ProviderRegistry()
        try registry.register(GenericOIDCProvider.self)
        let provider = try registry.makeProvider(
            ProviderConfiguration(issuer: issuer, clientID: clientID, clientSecret: secret, scopes: ["read"]))
        let authenticator = Authenticator(
            provider: provider, store: MemoryTokenStore(), transport: AsyncHTTPClientTransport(), logger: logger)
        try await authenticator.loginWithClientCredentials()

        let group = ServiceGroup(
            services: [
                TokenRenewal(authenticator: authenticator, logger: logger),
                Worker(authenticator: authenticator, api: api, every: every),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        try await group.run()
    }
}

/// Calls the API every `every` with the service's token, until graceful shutdown.
struct Worker: Service {
    let authenticator: Authenticator
    let api: URL
    let every: Duration

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    let (response, _) = try await authenticator.send(HTTPRequest(method: .get, url: api))
                    FileHandle.standardOutput.write(Data("GET \(api.absoluteString): \(response.status.code)\n".utf8))
                    try await Task.sleep(for: every)
                }
            }
        } catch is CancellationError {
            return
        } catch let error as AuthError where error.code == .cancelled {
            return  // a request in flight when the group stopped
        }
    }
}
