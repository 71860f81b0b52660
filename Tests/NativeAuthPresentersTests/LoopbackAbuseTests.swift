import Foundation
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

// Linux only: the accounting reads /proc.
#if os(Linux)
    import Glibc

    /// Hostile clients of the loopback receiver: garbage, oversized headers, slow requests, wrong paths
    /// and states, many connections at once. The real callback must still get through, and nothing may
    /// be left open afterwards.
    @Suite(.testLogging, .enabled(if: stressTestsEnabled, "NATIVEAUTH_STRESS_TESTS=1 runs it"))
    struct LoopbackAbuseTests {
        private static let state = "the-real-state"

        private static func handler(_ callback: AuthorizationCallback) -> CallbackDisposition<AuthorizationResponse> {
            guard case .redirect(let url) = callback else { return .ignore }
            let fields = FormURLEncoding.decode(url.query ?? "")
            guard fields.first(named: "state") == state else { return .ignore }
            return .complete(.success(AuthorizationResponse(code: fields.first(named: "code") ?? "", issuer: nil)))
        }

        private static func presenter(lifetime: Duration, maximumConnections: Int = 64) -> LoopbackPresenter {
            LoopbackPresenter(
                configuration: .init(
                    timeout: .seconds(120),
                    opener: nil,
                    output: OutputRecorder().output,
                    connectionLifetime: lifetime,
                    maximumConnections: maximumConnections
                )
            )
        }

        @Test func tenThousandHostileRequestsThenTheRealCallbackCompletes() async throws {
            let before = ProcessResources.now()
            let session = try await Self.presenter(lifetime: .seconds(2)).beginSession()
            let port = try #require(session.redirectURI.port)
            #expect(Sockets.onPort(port) == 1, "the listener")
            let signIn = Task {
                try await session.authorize(try #require(URL(string: "https://idp.example/authorize"))) {
                    Self.handler($0)
                }
            }

            // Slow requests that never finish, held open while the rest goes on.
            let slow = await offCooperativePool {
                (0..<40).compactMap { _ -> Int32? in
                    guard let socket = RawClient.connect(port: port) else { return nil }
                    _ = RawClient.send(socket, Array("GET /callback?state=".utf8))
                    return socket
                }
            }
            #expect(slow.count == 40)

            // 9,500 hostile requests on 8 threads, then a burst of 500 connections opened at once.
            let threads = 8
            let perThread = 9_500 / threads + 1
            let tallies = await withTaskGroup(of: [Int: Int].self) { group in
                for thread in 0..<threads {
                    group.addTask {
                        await offCooperativePool {
                            var tally: [Int: Int] = [:]
                            for n in (thread * perThread)..<min(9_500, (thread + 1) * perThread) {
                                tally[RawClient.exchange(port: port, Hostile.request(n)), default: 0] += 1
                            }
                            return tally
                        }
                    }
                }
                return await group.reduce(into: [Int: Int]()) { $0.merge($1, uniquingKeysWith: +) }
            }
            let burst = await offCooperativePool { RawClient.burst(port: port, count: 500) }
            let statuses = tallies.merging(burst, uniquingKeysWith: +)
            #expect(statuses.values.reduce(0, +) == 10_000)
            #expect(statuses[200] == nil, "no hostile request was taken for the callback")

            // The slow requests were cut at their deadline.
            let cut = await offCooperativePool { slow.filter { RawClient.closedByPeer($0, within: 5) }.count }
            for socket in slow { close(socket) }
            #expect(cut == slow.count, "every slow request is closed by the receiver")

            // The real callback still gets through.
            let real = await offCooperativePool {
                RawClient.exchange(
                    port: port, Array("GET /callback?code=good&state=\(Self.state) HTTP/1.1\r\n\r\n".utf8))
            }
            #expect(real == 200)
            #expect(try await signIn.value.code == "good")

            // Nothing of this receiver is left open, and memory stayed bounded.
            let leftOpen = await Sockets.waitUntilNoneOnPort(port)
            let after = ProcessResources.now()
            print(
                "loopback abuse: \(statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key == 0 ? "closed" : String($0.key))" }.joined(separator: ", ")); "
                    + "\(cut)/\(slow.count) slow requests cut; sockets on the port after: \(leftOpen); "
                    + "descriptors \(before.descriptors) → \(after.descriptors); RSS \(before.rssKiB / 1024) → \(after.rssKiB / 1024) MiB"
            )
            #expect(leftOpen == 0, "no descriptor of the receiver or its connections is left")
            #expect(after.rssKiB - before.rssKiB < 64 * 1024, "memory stays bounded")
        }

        @Test func pastTheCapTheOldestConnectionIsClosedAndTheCallbackGetsThrough() async throws {
            let session = try await Self.presenter(lifetime: .seconds(60), maximumConnections: 8).beginSession()
            let port = try #require(session.redirectURI.port)
            let signIn = Task {
                try await session.authorize(try #require(URL(string: "https://idp.example/authorize"))) {
                    Self.handler($0)
                }
            }
            let idle = await offCooperativePool { (0..<8).compactMap { _ in RawClient.connect(port: port) } }
            #expect(idle.count == 8)
            // Eight idle connections fill the cap: the callback's connection closes the oldest.
            let real = await offCooperativePool {
                RawClient.exchange(
                    port: port, Array("GET /callback?code=capped&state=\(Self.state) HTTP/1.1\r\n\r\n".utf8))
            }
            let oldestClosed = await offCooperativePool { RawClient.closedByPeer(idle[0], within: 5) }
            for socket in idle { close(socket) }
            #expect(real == 200)
            #expect(oldestClosed)
            #expect(try await signIn.value.code == "capped")
            #expect(await Sockets.waitUntilNoneOnPort(port) == 0)
        }

        @Test func anIdleConnectionIsClosedAtItsDeadline() async throws {
            let session = try await Self.presenter(lifetime: .milliseconds(300)).beginSession()
            let port = try #require(session.redirectURI.port)
            let signIn = Task {
                try await session.authorize(try #require(URL(string: "https://idp.example/authorize"))) {
                    Self.handler($0)
                }
            }
            let closed = await offCooperativePool { () -> Bool in
                guard let socket = RawClient.connect(port: port) else { return false }
                defer { close(socket) }
                return RawClient.closedByPeer(socket, within: 5)
            }
            #expect(closed)
            let real = await offCooperativePool {
                RawClient.exchange(
                    port: port, Array("GET /callback?code=late&state=\(Self.state) HTTP/1.1\r\n\r\n".utf8))
            }
            #expect(real == 200)
            #expect(try await signIn.value.code == "late")
        }
    }

    /// The hostile requests, by number: garbage, wrong paths, wrong states, wrong methods, oversized
    /// headers (100 KiB, and 1 MiB for every tenth of those).
    private enum Hostile {
        static func request(_ n: Int) -> [UInt8] {
            switch n % 5 {
            case 0:
                var generator = SeededGenerator(seed: UInt64(n))
                let count = Int.random(in: 16...512, using: &generator)
                return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } + Array("\r\n\r\n".utf8)
            case 1:
                return Array("GET /other/\(n) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            case 2:
                return Array("GET /callback?code=evil&state=forged-\(n) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            case 3:
                return Array("POST /callback?code=evil HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".utf8)
            default:
                let size = n % 50 == 4 ? 1 << 20 : 100 << 10
                return Array("GET /callback?code=big&state=big HTTP/1.1\r\nX-Big: ".utf8)
                    + [UInt8](repeating: UInt8(ascii: "a"), count: size) + Array("\r\n\r\n".utf8)
            }
        }
    }

    /// A small deterministic generator (SplitMix64), so a failing request can be made again.
    private struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Blocking TCP clients, for threads of their own.
    private enum RawClient {
        /// A connected socket to 127.0.0.1:`port` with 5-second send and receive timeouts.
        static func connect(port: Int) -> Int32? {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else { return nil }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(socket)
                return nil
            }
            return socket
        }

        /// Sends everything, or stops at the first error (the receiver may close first).
        static func send(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let result = bytes.withUnsafeBytes { raw in
                    Glibc.send(socket, raw.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL))
                }
                if result <= 0 { return false }
                sent += result
            }
            return true
        }

        /// Reads the answer to its end; its status code, or 0 when the receiver closed without one.
        static func readStatus(_ socket: Int32) -> Int {
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while answer.count < 65_536 {
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                answer += buffer[..<count]
            }
            let text = String(decoding: answer.prefix(12), as: UTF8.self)
            guard text.hasPrefix("HTTP/1.") else { return 0 }
            return Int(text.dropFirst(9).prefix(3)) ?? 0
        }

        /// One request on a new connection; its status (0: closed without an answer, or no connection).
        static func exchange(port: Int, _ bytes: [UInt8]) -> Int {
            guard let socket = connect(port: port) else { return 0 }
            defer { close(socket) }
            _ = send(socket, bytes)
            return readStatus(socket)
        }

        /// Opens `count` connections first, then sends a wrong-state request on each and reads the answers.
        static func burst(port: Int, count: Int) -> [Int: Int] {
            let sockets = (0..<count).compactMap { _ in connect(port: port) }
            var tally: [Int: Int] = [0: count - sockets.count]
            for socket in sockets {
                _ = send(socket, Array("GET /callback?code=x&state=burst HTTP/1.1\r\n\r\n".utf8))
            }
            for socket in sockets {
                tally[readStatus(socket), default: 0] += 1
                close(socket)
            }
            return tally.filter { $0.value > 0 }
        }

        /// Whether the receiver closes the connection (end of stream or reset) within `seconds`.
        static func closedByPeer(_ socket: Int32, within seconds: Int) -> Bool {
            var poll = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, Int32(seconds * 1_000)) == 1 else { return false }
            var byte: UInt8 = 0
            let count = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
            return count == 0 || (count < 0 && errno == ECONNRESET)
        }
    }

    /// This process's sockets on a TCP port, from `/proc/self/fd` and `/proc/net/tcp{,6}`.
    private enum Sockets {
        /// Open descriptors of this process that are TCP sockets with `port` at either end.
        static func onPort(_ port: Int) -> Int {
            let inodes = inodes(port: port)
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.filter { name in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                    target.hasPrefix("socket:[")
                else { return false }
                return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
            }.count
        }

        /// Polls for up to 5 seconds (closing is asynchronous) and returns what is still open.
        static func waitUntilNoneOnPort(_ port: Int) async -> Int {
            for _ in 0..<100 {
                if onPort(port) == 0 { return 0 }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return onPort(port)
        }

        private static func inodes(port: Int) -> Set<String> {
            var found = Set<String>()
            let hexPort = String(format: "%04X", port)
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
                for line in text.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ")
                    guard fields.count > 9 else { continue }
                    let local = fields[1].split(separator: ":").last
                    let remote = fields[2].split(separator: ":").last
                    if local == Substring(hexPort) || remote == Substring(hexPort), fields[9] != "0" {
                        found.insert(String(fields[9]))
                    }
                }
            }
            return found
        }
    }

    /// The process's open descriptors and resident memory.
    private struct ProcessResources {
        var descriptors: Int
        var rssKiB: Int

        static func now() -> ProcessResources {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let rss =
                status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            return ProcessResources(descriptors: descriptors, rssKiB: rss)
        }
    }
#endif
