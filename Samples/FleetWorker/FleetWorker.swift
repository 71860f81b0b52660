import ArgumentParser
import Foundation
import HTTPTypes
import Logging
import NIOSSL
import NativeAuth
import NativeAuthAsyncHTTPClient
import NativeAuthPostgres
import NativeAuthPresenters
import PostgresNIO

/// A service that N instances run against one PostgreSQL: each calls a protected API in a loop with
/// one shared account's tokens (a person's, or the client's own from the client credentials
/// grant), and the access token is renewed once for all of them.
///
/// The database and the secrets come from the environment, never from the command line (another
/// user can read a process's arguments): `FLEET_DATABASE_URL`
/// (`postgres://user:password@host:port/database`; TLS with the server's certificate and name
/// verified unless the host is loopback, `?sslrootcert=FILE` for a private CA, and
/// `?sslmode=prefer|disable` only on loopback),
/// `FLEET_SEALING_KEY` (32 bytes in base64: `openssl rand -base64 32`) and, for a confidential
/// client, `FLEET_CLIENT_SECRET`.
@main
struct FleetWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-worker",
        abstract: "Call a protected API from many instances with one shared account's tokens (PostgreSQL).",
        discussion: """
            Environment: FLEET_DATABASE_URL (postgres://user:password@host:port/database; off loopback TLS is \
            required and the server's certificate and name verified, ?sslrootcert=FILE names a private CA, \
            ?sslmode=prefer or disable only on loopback) and \
            FLEET_SEALING_KEY (base64 of 32 bytes; `openssl rand -base64 32`). Every instance needs the same key. \
            FLEET_CLIENT_SECRET: the client's secret, for a confidential client (and `login --client-credentials`).
            """,
        subcommands: [Login.self, Work.self, Logout.self],
        defaultSubcommand: Work.self
    )
}

/// What every subcommand shares: the provider, the account and the database.
struct Connection: ParsableArguments {
    @Option(help: "The authorization server's issuer URL.")
    var issuer: String

    @Option(name: .customLong("client-id"), help: "The OAuth client id.")
    var clientID: String

    @Option(help: "The shared account's name.")
    var account = TokenKey.defaultAccount

    @Option(parsing: .upToNextOption, help: "Scopes to ask for at sign-in.")
    var scopes: [String] = ["openid", "offline_access"]

    @Option(name: .customLong("sealing-key-id"), help: "The id stored beside each set FLEET_SEALING_KEY seals.")
    var sealingKeyID = "k1"

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "warning"

    @Option(
        name: .customLong("file-store"),
        help: ArgumentHelp(
            "Keep the tokens in files under this directory instead of PostgreSQL: one machine only, to compare.",
            valueName: "directory"))
    var fileStore: String?

    var logger: Logger {
        var logger = Logger(label: "fleet-worker") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
        return logger
    }

    /// Runs `body` with an authenticator on the fleet's store: PostgreSQL, with a running client and a
    /// listening store (or files, with `--file-store`).
    func withAuthenticator<T: Sendable>(
        _ body: @Sendable (Authenticator, PostgresTokenStore?) async throws -> T
    ) async throws -> T {
        let environment = ProcessInfo.processInfo.environment
        guard let issuer = URL(string: issuer), issuer.scheme != nil else {
            throw ValidationError("--issuer is not a URL")
        }
        let logger = self.logger
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: issuer, clientID: clientID, clientSecret: environment["FLEET_CLIENT_SECRET"], scopes: scopes))
        if let fileStore {
            let store = FileTokenStore(directory: fileStore)
            return try await body(
                Authenticator(
                    provider: provider, store: store,
                    transport: StandardTransport.platformDefault(logger: logger), account: account, logger: logger), nil
            )
        }
        guard let url = environment["FLEET_DATABASE_URL"] else {
            throw ValidationError("set FLEET_DATABASE_URL to postgres://user:password@host:port/database")
        }
        guard let sealingKey = environment["FLEET_SEALING_KEY"] else {
            throw ValidationError("set FLEET_SEALING_KEY to 32 bytes in base64 (openssl rand -base64 32)")
        }
        var configuration = try Self.databaseConfiguration(url)
        // A few connections per instance (the listener, two for locks, one for the reads and writes
        // inside them): a fleet of N instances then needs N × 4 of the server's connections, not
        // postgres-nio's default N × 20.
        configuration.options.maximumConnections = 4
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let keys = try SealingKeys(current: SealingKey(id: sealingKeyID, base64: sealingKey))
        let store = PostgresTokenStore(
            client: client, keys: keys, configuration: .init(maximumLockConnections: 2), logger: logger)
        let authenticator = Authenticator(
            provider: provider, store: store,
            transport: StandardTransport.platformDefault(logger: logger), account: account, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            // Listening first: from then on, a valid token costs no database round trip.
            let deadline = ContinuousClock.now + .seconds(10)
            while !store.isListening && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            return try await body(authenticator, store)
        }
    }

    /// Whether `host` is this machine: `localhost`, `127.0.0.0/8` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return host == "localhost" || host == "::1"
            || (octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil })
    }

    /// The client settings a `postgres://` URL names; the password is never printed.
    static func databaseConfiguration(_ text: String) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
            let host = url.host, !host.isEmpty, let user = url.user
        else {
            throw ValidationError("FLEET_DATABASE_URL is not postgres://user:password@host:port/database")
        }
        let database = String(url.path.drop { $0 == "/" })
        // Off loopback, TLS is required and the server's certificate and name verified: with
        // `prefer`, a network attacker who refuses TLS is sent the password in the clear.
        let loopback = isLoopback(host)
        let mode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? (loopback ? "prefer" : "verify-full")
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        if let roots = url.queryItems?.first(where: { $0.name == "sslrootcert" })?.value, !roots.isEmpty {
            tlsConfiguration.trustRoots = .file(roots)
        }
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable", "prefer":
            guard loopback else {
                throw ValidationError(
                    "sslmode=\(mode) is allowed only for a loopback host: on a network, whoever refuses TLS is sent the"
                        + " database password. Leave sslmode out (verify-full), or name the CA with sslrootcert=FILE")
            }
            tls = mode == "disable" ? .disable : .prefer(tlsConfiguration)
        // postgres-nio verifies the certificate and the host name in either: `require` is as strict
        // as libpq's `verify-full`.
        case "require", "verify-ca", "verify-full": tls = .require(tlsConfiguration)
        default:
            throw ValidationError("sslmode must be verify-full, require, or on loopback prefer or disable, not \(mode)")
        }
        return PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: database.isEmpty ? nil : database, tls: tls)
    }
}

/// Signs the shared account in once, in a browser (or as the client itself); every instance then
/// uses its tokens.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign the shared account in (opens a browser), or get the client's own tokens.")

    @OptionGroup var connection: Connection

    @Flag(
        name: .customLong("client-credentials"),
        help: "Get tokens for the client itself (client credentials grant, FLEET_CLIENT_SECRET); no browser.")
    var clientCredentials = false

    func run() async throws {
        if clientCredentials && ProcessInfo.processInfo.environment["FLEET_CLIENT_SECRET"] == nil {
            throw ValidationError("--client-credentials needs the client's secret in FLEET_CLIENT_SECRET")
        }
        let clientCredentials = clientCredentials
        // No person behind the client's own tokens: no ID token, no offline access to ask for.
        let clientScopes = connection.scopes.filter { $0 != "openid" && $0 != "offline_access" }
        let subject = try await connection.withAuthenticator { authenticator, _ in
            if clientCredentials {
                // Renewed with the same grant when it expires: the workers need only the secret.
                return try await authenticator.login(.clientCredentials, scopes: clientScopes).subject
            }
            return try await authenticator.login(.browser(LoopbackPresenter())).subject
        }
        print("Signed in\(subject.map { " as \($0)" } ?? ""); every instance now uses these tokens.")
    }
}

/// Signs the shared account out everywhere: every instance's next call says a sign-in is needed.
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign the shared account out on every instance.")

    @OptionGroup var connection: Connection

    func run() async throws {
        let result = try await connection.withAuthenticator { authenticator, _ in
            try await authenticator.logout()
        }
        print(result.removedTokens ? "Signed out on every instance." : "Not signed in; nothing to sign out.")
    }
}

/// The service: callers in parallel, each calling the API with the shared account's tokens.
struct Work: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Call the API from concurrent callers; print a summary as one JSON line."
    )

    @OptionGroup var connection: Connection

    @Option(help: "The protected API to call (GET).")
    var api: String

    @Option(help: "How many callers run at once.")
    var callers = 4

    @Option(help: "Calls per caller; 0 to call until stopped (or signed out, with --until-signed-out).")
    var calls = 10

    @Option(name: .customLong("interval-ms"), help: "Pause between one caller's calls, in milliseconds.")
    var intervalMilliseconds = 0

    @Option(
        name: .customLong("start-at"),
        help: "Start calling at this time (Unix milliseconds), so that many instances start together.")
    var startAt: Int64?

    @Flag(help: "Call until the account is signed out (anywhere), then exit 0.")
    var untilSignedOut = false

    func run() async throws {
        guard let api = URL(string: api), api.scheme != nil else { throw ValidationError("--api is not a URL") }
        let callers = max(1, self.callers)
        let calls = calls
        let interval = Duration.milliseconds(max(0, intervalMilliseconds))
        let untilSignedOut = untilSignedOut
        let startAt = startAt
        let summary = try await connection.withAuthenticator { authenticator, store in
            if let startAt {
                let wait = Double(startAt) / 1000 - Date().timeIntervalSince1970
                if wait > 0 { try await Task.sleep(for: .milliseconds(Int64(wait * 1000))) }
            }
            let started = ContinuousClock.now
            let tally = try await withThrowingTaskGroup(of: Tally.self) { group in
                for _ in 0..<callers {
                    group.addTask {
                        var tally = Tally()
                        var done = 0
                        while calls == 0 || done < calls {
                            done += 1
                            do {
                                let (response, _) = try await authenticator.send(HTTPRequest(method: .get, url: api))
                                if response.status.code == 200 {
                                    tally.succeeded += 1
                                } else {
                                    tally.failed["http_\(response.status.code)", default: 0] += 1
                                }
                            } catch let error as AuthError {
                                tally.failed[error.code.rawValue, default: 0] += 1
                                if untilSignedOut && error.code == .loginRequired {
                                    tally.signedOut = true
                                    return tally
                                }
                            }
                            if Task.isCancelled { break }
                            if interval > .zero { try await Task.sleep(for: interval) }
                        }
                        return tally
                    }
                }
                return try await group.reduce(into: Tally()) { $0.add($1) }
            }
            return tally.summary(elapsed: ContinuousClock.now - started, statistics: store?.statistics)
        }
        print(summary)
        let ok = untilSignedOut ? summary.contains("\"signed_out\":true") : !summary.contains("\"failed\":{\"")
        if !ok { throw ExitCode(1) }
    }
}

/// What the callers of one instance saw.
struct Tally: Sendable {
    var succeeded = 0
    var failed: [String: Int] = [:]
    var signedOut = false

    mutating func add(_ other: Tally) {
        succeeded += other.succeeded
        failed.merge(other.failed, uniquingKeysWith: +)
        signedOut = signedOut || other.signedOut
    }

    /// One JSON line: the counts, the elapsed time and the store's statistics.
    func summary(elapsed: Duration, statistics: PostgresTokenStore.Statistics?) -> String {
        let failures = failed.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        var line =
            "{\"succeeded\":\(succeeded),\"failed\":{\(failures)},\"signed_out\":\(signedOut),"
            + "\"elapsed_us\":\(Self.microseconds(elapsed))"
        if let statistics {
            line +=
                ",\"database_reads\":\(statistics.databaseReads),\"database_writes\":\(statistics.databaseWrites),"
                + "\"revisions_from_memory\":\(statistics.revisionsFromMemory),\"locks_taken\":\(statistics.locksTaken),"
                + "\"longest_lock_wait_us\":\(Self.microseconds(statistics.longestLockWait))"
        }
        return line + "}"
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}
