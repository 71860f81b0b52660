// token-service: a service run by swift-service-lifecycle. It signs in as a client (client
// credentials), TokenRenewal keeps the tokens renewed ahead of their expiry, a worker calls an API
// with them every interval, and (with --listen) an HTTP endpoint on 127.0.0.1 answers each GET /
// with the API's answer, fetched with the service's token. SIGTERM or SIGINT stops the group
// gracefully (exit 0): the endpoint and the worker first, the renewal, then the transport, whose
// AsyncHTTPClient clients shut down with it.
//
//     NATIVEAUTH_CLIENT_SECRET=… token-service --issuer URL --client-id ID --api URL [--every MS] [--listen PORT]
//
// It asks for the scope `read` (the project's test server, scripts/test-server, has such a client).
//
// The secret comes from the environment, never the command line. Each call of the worker prints
// one line: `GET URL: STATUS`; the endpoint says `listening on http://127.0.0.1:PORT` on stderr.

import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
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
        let transport = AsyncHTTPClientTransport()
        let authenticator = Authenticator(
            provider: provider, store: MemoryTokenStore(), transport: transport, logger: logger)
        try await authenticator.login(.clientCredentials)

        // A group stops its services in reverse order: the endpoint and the worker first, the
        // transport (its AsyncHTTPClient clients) last.
        var services: [any Service] = [
            TransportShutdown(transport),
            TokenRenewal(authenticator: authenticator, logger: logger),
            Worker(authenticator: authenticator, api: api, every: every),
        ]
        if let port = value("--listen").flatMap(Int.init) {
            services.append(try await Endpoint.bind(port: port, authenticator: authenticator, api: api))
        }
        // Last, so that the group tells it first: it notes when stopping began.
        let stopping = ShutdownClock()
        services.append(stopping)
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
        if let took = stopping.elapsed {
            FileHandle.standardError.write(
                Data(
                    "stopped in \(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000) ms\n"
                        .utf8))
        }
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

/// An HTTP endpoint on 127.0.0.1: each `GET /` is answered with the API's answer (its status and
/// body), fetched with the service's token. The token never leaves the service: the caller of the
/// endpoint gets the API's answer only. Other paths and methods get 404 and 405.
struct Endpoint: Service {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
    let server: NIOAsyncChannel<Connection, Never>
    let authenticator: Authenticator
    let api: URL

    static func bind(port: Int, authenticator: Authenticator, api: URL) async throws -> Endpoint {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        let bound = server.channel.localAddress?.port ?? port
        FileHandle.standardError.write(Data("listening on http://127.0.0.1:\(bound)\n".utf8))
        return Endpoint(server: server, authenticator: authenticator, api: api)
    }

    func run() async throws {
        // Accepting stops at graceful shutdown; the requests in flight finish first.
        let channel = server.channel
        try await withThrowingDiscardingTaskGroup { group in
            try await withGracefulShutdownHandler {
                try? await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { try? await serve(connection) }
                    }
                }
            } onGracefulShutdown: {
                channel.close(promise: nil)
            }
        }
    }

    private func serve(_ connection: Connection) async throws {
        try await connection.executeThenClose { inbound, outbound in
            for try await part in inbound {
                guard case .head(let head) = part else { continue }
                let (status, body) = await answer(head)
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json")
                headers.add(name: "Content-Length", value: String(body.count))
                headers.add(name: "Connection", value: "close")
                try await outbound.write(
                    .head(HTTPResponseHead(version: head.version, status: status, headers: headers)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                try await outbound.write(.end(nil))
                return
            }
        }
    }

    private func answer(_ head: HTTPRequestHead) async -> (HTTPResponseStatus, Data) {
        guard head.uri == "/" else { return (.notFound, Data(#"{"error":"not_found"}"#.utf8)) }
        guard head.method == .GET else { return (.methodNotAllowed, Data(#"{"error":"method_not_allowed"}"#.utf8)) }
        do {
            let (response, body) = try await authenticator.send(HTTPRequest(method: .get, url: api))
            return (HTTPResponseStatus(statusCode: Int(response.status.code)), body)
        } catch {
            // The error's text names no token; the caller learns only that the upstream failed.
            return (.badGateway, Data(#"{"error":"upstream_failed"}"#.utf8))
        }
    }
}

/// Notes when the group's graceful shutdown began (a signal), so that the service can say how long
/// stopping took: every service, the endpoint's requests in flight, and the transport's clients.
final class ShutdownClock: Service, Sendable {
    private let began = NIOLockedValueBox<ContinuousClock.Instant?>(nil)

    func run() async throws {
        try? await gracefulShutdown()
        began.withLockedValue { $0 = .now }
    }

    /// From the start of the graceful shutdown to now.
    var elapsed: Duration? {
        began.withLockedValue { $0 }.map { .now - $0 }
    }
}
