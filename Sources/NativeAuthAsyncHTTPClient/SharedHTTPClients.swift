import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
internal import NativeAuth

/// The AsyncHTTPClient clients the transports of a process create for themselves: one for each
/// proxy and TLS setting, created when a transport first needs it and shared by every
/// ``AsyncHTTPClientTransport`` with the same settings (so they reuse its kept-alive connections).
///
/// A client is leased: each transport that used it holds one lease, given back when the transport
/// is released. A client whose last lease is given back is shut down (without blocking) once it
/// has had none for ``idleShutdown``, so that transports made one after another (an authenticator
/// per request, an account after another) share it and its connections; none outlives its users
/// by more, and none is deinitialized running (AsyncHTTPClient traps on that in debug builds). A
/// client in use when the process exits is kept to the end: nothing to do.
final class SharedHTTPClients: Sendable {
    /// This process's clients.
    static let process = SharedHTTPClients(idleShutdown: .seconds(3))

    struct Key: Hashable, Sendable {
        var proxy: ProxyServer?
        var tls: TLSSettings
    }

    private struct Entry {
        var client: HTTPClient
        var leases: Int
        /// Counts the times the leases fell to none: a shutdown scheduled then happens only if it
        /// is still the last time.
        var idleSince = 0
    }

    /// How long a client without leases waits before it is shut down.
    let idleShutdown: Duration
    private let clients = Locked<[Key: Entry]>([:])

    init(idleShutdown: Duration) { self.idleShutdown = idleShutdown }

    /// A client for requests through `key`'s proxy (or none) with its TLS settings, with a new
    /// lease on it unless the caller `held` one already (it gives it back with ``release(_:)``).
    ///
    /// - Throws: `AuthError.Code.configurationInvalid` naming the file when a CA file, trust
    ///   store, client certificate or key cannot be read or used.
    func client(for key: Key, held: Bool) throws -> HTTPClient {
        if let client = clients.withLock({ clients -> HTTPClient? in
            guard let entry = clients[key] else { return nil }
            if !held { clients[key]?.leases += 1 }
            return entry.client
        }) {
            return client
        }
        let configuration = try Self.configuration(proxy: key.proxy, tls: key.tls)
        let (client, unused) = clients.withLock { clients -> (HTTPClient, HTTPClient?) in
            let made = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
                backgroundActivityLogger: Logger(
                    label: "NativeAuth.HTTP.pool", factory: { _ in SwiftLogNoOpLogHandler() }))
            if let entry = clients[key] {
                // Another transport made it meanwhile: use that one, shut this one down.
                if !held { clients[key]?.leases += 1 }
                return (entry.client, made)
            }
            clients[key] = Entry(client: made, leases: 1)
            return (made, nil)
        }
        unused?.shutdown { _ in }
        return client
    }

    /// Gives back a lease on each of `keys`; a client left without leases is shut down after
    /// ``idleShutdown``, unless a transport leased it again meanwhile.
    func release(_ keys: some Sequence<Key>) {
        let idle = clients.withLock { clients -> [(Key, Int)] in
            var idle: [(Key, Int)] = []
            for key in keys {
                guard var entry = clients[key] else { continue }
                entry.leases -= 1
                if entry.leases == 0 {
                    entry.idleSince += 1
                    idle.append((key, entry.idleSince))
                }
                clients[key] = entry
            }
            return idle
        }
        guard !idle.isEmpty else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + idleShutdown.timeInterval) { [self] in
            let finished = clients.withLock { clients -> [HTTPClient] in
                idle.compactMap { key, since in
                    guard let entry = clients[key], entry.leases == 0, entry.idleSince == since else { return nil }
                    clients[key] = nil
                    return entry.client
                }
            }
            for client in finished { client.shutdown { _ in } }
        }
    }

    /// Gives back a lease on each of `keys` now, and shuts down at once (waiting for it) each client
    /// left without leases: a transport that stops with its service group
    /// (``AsyncHTTPClientTransport/shutdown()``).
    func releaseNow(_ keys: some Sequence<Key>) async {
        let finished = clients.withLock { clients -> [HTTPClient] in
            var finished: [HTTPClient] = []
            for key in keys {
                guard var entry = clients[key] else { continue }
                entry.leases -= 1
                if entry.leases == 0 {
                    clients[key] = nil
                    finished.append(entry.client)
                } else {
                    clients[key] = entry
                }
            }
            return finished
        }
        for client in finished { try? await client.shutdown() }
    }

    /// How many leases `key`'s client has, and whether it runs.
    func state(of key: Key) -> (leases: Int, running: Bool) {
        clients.withLock { ($0[key]?.leases ?? 0, $0[key] != nil) }
    }

    private static func configuration(proxy: ProxyServer?, tls: TLSSettings) throws -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: try tlsConfiguration(tls),
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(30)),
            connectionPool: .init(idleTimeout: .seconds(60)),
            proxy: proxy.map(Self.proxy),
            decompression: .disabled)
        // A connection that cannot be made fails the request at once (as a network error the
        // caller may retry), instead of being retried in the background until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    private static func proxy(_ server: ProxyServer) -> HTTPClient.Configuration.Proxy {
        switch server.kind {
        case .socks5:
            return .socksServer(host: server.host, port: server.port)
        case .http:
            let authorization = server.username.map { user in
                HTTPClient.Authorization.basic(username: user, password: server.password ?? "")
            }
            return .server(host: server.host, port: server.port, authorization: authorization)
        }
    }

    private static func tlsConfiguration(_ settings: TLSSettings) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let store = settings.trustStore {
            try readable(store, setting: "SSL_CERT_FILE / SSL_CERT_DIR", directoryAllowed: true)
            tls.trustRoots = .file(store)
        }
        if let caFile = settings.caFile {
            try readable(caFile, setting: Setting.caFile.key, directoryAllowed: false)
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw AuthError(
                    .configurationInvalid, "the CA file \(caFile) holds no PEM certificate",
                    hint: "pass a file of -----BEGIN CERTIFICATE----- blocks", field: Setting.caFile.key,
                    underlying: error)
            }
        }
        switch (settings.clientCertificateFile, settings.clientKeyFile) {
        case (nil, nil):
            break
        case (let certificate?, let key?):
            try readable(certificate, setting: Setting.clientCertificate.key, directoryAllowed: false)
            let keyFile = try SecretFile(key, what: "client key")
            guard !keyFile.othersMayAccess else {
                throw AuthError(
                    .configurationInvalid, "the client key \(key) can be read or changed by other users",
                    hint: "run: chmod 600 '\(key)' (and make it yours)", field: Setting.clientKey.key)
            }
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
            } catch {
                throw AuthError(
                    .configurationInvalid, "the client certificate \(certificate) holds no PEM certificate",
                    field: Setting.clientCertificate.key, underlying: error)
            }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(keyFile.contents), format: .pem))
            } catch {
                throw AuthError(
                    .configurationInvalid, "the client key \(key) is not a PEM private key",
                    field: Setting.clientKey.key, underlying: error)
            }
        case (nil, _?):
            throw AuthError(
                .configurationInvalid, "a client key needs its certificate", field: Setting.clientCertificate.key)
        case (_?, nil):
            throw AuthError(.configurationInvalid, "a client certificate needs its key", field: Setting.clientKey.key)
        }
        return tls
    }

    private static func readable(_ path: String, setting: String, directoryAllowed: Bool) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
            FileManager.default.isReadableFile(atPath: path), directoryAllowed || !isDirectory.boolValue
        else {
            throw AuthError(
                .configurationInvalid, "the file \(path) (\(setting)) does not exist or cannot be read",
                field: setting.contains("SSL_") ? nil : setting)
        }
    }
}
