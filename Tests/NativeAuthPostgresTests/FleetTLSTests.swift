// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    import Foundation
    import TestSupport
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// An IPv4 address of this machine that is not loopback, if it has one.
    private let networkAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
                continue
            }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard
                getnameinfo(
                    address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0,
                    NI_NUMERICHOST) == 0
            else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }()

    /// `fleet-worker`'s database connection off loopback (review L5): with `sslmode=prefer` as the
    /// default, a network attacker who refused TLS and asked for the password in clear text got it.
    /// The attacker here is `scripts/lib/tls_refusing_postgres.py` on this machine's own non-loopback
    /// address; no PostgreSQL is needed, but it runs with the PostgreSQL suites (once, in their step of
    /// scripts/test.sh).
    /// Whether this machine has PostgreSQL's step off loopback.
    private let fleetTLSAvailable = TestDatabase.isAvailable && networkAddress != nil

    @Suite(.testLogging, .enabled(if: fleetTLSAvailable, "PostgreSQL's step, off loopback"))
    struct FleetTLSTests {
        @Test func offLoopbackThePasswordNeverGoesInClearText() async throws {
            let host = try #require(networkAddress)
            let directory = try TemporaryDirectory()
            let record = directory.path + "/passwords"
            let attacker = try RunningCommand(
                "/usr/bin/python3", [repositoryRoot.path + "/scripts/lib/tls_refusing_postgres.py", host, record])
            defer { attacker.stop() }
            let port = try await attacker.line { Int($0) != nil }
            let password = "fleet-password-\(UUID().uuidString)"
            let arguments = ["logout", "--issuer", "https://issuer.example", "--client-id", "fleet"]
            func work(_ query: String) async throws -> CommandResult {
                try await run(
                    cliPath("fleet-worker"), arguments,
                    environment: [
                        "FLEET_DATABASE_URL": "postgres://fleet:\(password)@\(host):\(port)/fleet\(query)",
                        "FLEET_SEALING_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                    ])
            }
            // The default off loopback: TLS required, so the refusal ends the connection.
            let byDefault = try await work("")
            #expect(byDefault.status != 0)
            #expect(!byDefault.stderr.contains(password) && !byDefault.stdout.contains(password))
            // Asking for less is refused before anything is sent.
            for mode in ["prefer", "disable"] {
                let weaker = try await work("?sslmode=\(mode)")
                #expect(weaker.status != 0 && weaker.stderr.contains("only for a loopback host"), "\(weaker.stderr)")
            }
            let sent = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            #expect(!sent.contains(password), "the password went to the attacker in clear text")
        }
    }
#endif
