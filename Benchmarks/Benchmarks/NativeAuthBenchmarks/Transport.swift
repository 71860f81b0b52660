import Benchmark
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthTesting
import NativeAuthURLSession

// The transports against the floor: a bare GET on loopback, kept alive, to the same in-process
// server, through `URLSessionTransport`, `AsyncHTTPClientTransport`, and a raw SwiftNIO HTTP/1.1
// client on one connection (what any HTTP client on NIO costs at least). The three run in each
// iteration, in an order that turns, so that all see the same machine.

private struct TransportState: Sendable {
    var server: TestHTTPServer
    var urlSession: URLSessionTransport
    var asyncHTTPClient: AsyncHTTPClientTransport
    var raw: RawHTTPClient
}

private let transports = Fixture<TransportState>()

let urlSessionNanoseconds = BenchmarkMetric.custom("URLSessionTransport GET (ns)", useScalingFactor: false)
let asyncHTTPClientNanoseconds = BenchmarkMetric.custom("AsyncHTTPClientTransport GET (ns)", useScalingFactor: false)
let rawNIONanoseconds = BenchmarkMetric.custom("raw NIO HTTP/1.1 GET (ns)", useScalingFactor: false)

func transportBenchmarks() {
    Benchmark(
        "transport: bare GET on loopback",
        configuration: .init(
            metrics: [.wallClock, .throughput, urlSessionNanoseconds, asyncHTTPClientNanoseconds, rawNIONanoseconds],
            maxDuration: .seconds(10), maxIterations: 5_000,
            setup: {
                let server = try await TestHTTPServer.start { _ in .json(#"{"sub": "sandbox-user-alice"}"#) }
                transports.set(
                    TransportState(
                        server: server, urlSession: URLSessionTransport(),
                        asyncHTTPClient: AsyncHTTPClientTransport(configuration: .init(proxy: .none)),
                        raw: try await RawHTTPClient.connect(port: server.port)))
            },
            teardown: {
                if let state = try? transports.get() {
                    try? await state.raw.close()
                    await state.server.stop()
                }
                transports.set(nil)
            })
    ) { benchmark in
        let state = try transports.get()
        let request = HTTPRequest(method: .get, url: state.server.url("/resource"))
        let clock = ContinuousClock()
        func timed(_ body: () async throws -> Int) async throws -> Int {
            let start = clock.now
            let bytes = try await body()
            let elapsed = clock.now - start
            guard bytes > 0 else { throw BenchmarkFailure("an empty answer") }
            return elapsed.nanoseconds
        }
        let runs: [(BenchmarkMetric, () async throws -> Int)] = [
            (urlSessionNanoseconds, { try await state.urlSession.send(request, body: nil).1.count }),
            (asyncHTTPClientNanoseconds, { try await state.asyncHTTPClient.send(request, body: nil).1.count }),
            (rawNIONanoseconds, { try await state.raw.get("/resource") }),
        ]
        let first = benchmark.currentIteration % runs.count
        for index in 0..<runs.count {
            let (metric, run) = runs[(first + index) % runs.count]
            benchmark.measurement(metric, try await timed(run))
        }
    }
}

/// The floor: one kept-alive HTTP/1.1 connection, a GET written and its answer read, nothing else.
private final class RawHTTPClient: Sendable {
    private let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
    private let stream: StreamBox

    private final class StreamBox: @unchecked Sendable {
        // Used by one benchmark iteration at a time.
        var iterator: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
        let writer: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
        init(
            _ iterator: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator,
            _ writer: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
        ) {
            self.iterator = iterator
            self.writer = writer
        }
    }

    private init(_ channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>) {
        self.channel = channel
        self.stream = StreamBox(channel.inbound.makeAsyncIterator(), channel.outbound)
    }

    static func connect(port: Int) async throws -> RawHTTPClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return RawHTTPClient(channel)
    }

    /// Sends a GET and reads the whole answer; returns the body's size.
    func get(_ path: String) async throws -> Int {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: "127.0.0.1")
        try await stream.writer.write(contentsOf: [.head(head), .end(nil)])
        var bytes = 0
        while let part = try await stream.iterator.next() {
            switch part {
            case .head: continue
            case .body(let buffer): bytes += buffer.readableBytes
            case .end: return bytes
            }
        }
        throw BenchmarkFailure("the raw connection closed")
    }

    func close() async throws {
        stream.writer.finish()
        try await channel.channel.close()
    }
}
