import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
internal import NativeAuth

/// The AsyncHTTPClient clients the transports of a process create for themselves: one for each
/// proxy and TLS setting, created when a transport first needs it and shared by every
/// ``AsyncHTTPClientTransport`` with the same settings (so they reuse its kept-alive connections).
///
/// A client is leased: each transport that used it holds one lease, given back when the transport
/// is released; the last lease given back shuts the client down (without blocking), so no client
/// outlives its users and none is deinitialized running (AsyncHTTPClient traps on that in debug
/// builds). A transport alive when the process exits keeps its client to the end: nothing to do.
/// Idle connections close after a minute.
final class SharedHTTPClients: Sendable {
    /// This process's clients.
    static let process = SharedHTTPClients()

    struct Key: Hashable, Sendable {
        var proxy: ProxyServer?
        var tls: TLSSettings
    }

    private let clients = NIOLockedValueBox<[Key: (client: HTTPClient, leases: Int)]>([:])

    /// A lease on the client for requests through `proxy` (or none) with `tls`: the client, and
    /// `leased` is true when this lease is new (the caller gives it back with ``release(_:)``).
    ///
    /// - Parameter held: Whether the caller holds a lease on this key already.
    /// - Throws: `AuthError.Code.configurationInvalid` naming the file when a CA file, trust
    ///   store, client certificate or key cannot be read or used.
    func client(for key: Key, held: Bool) throws -> HTTPClient {
        if let client = clients.withLockedValue({ clients -> HTTPClient? in
            guard let entry = clients[key] else { return nil }
            if !held { clients[key]?.leases += 1 }
            return entry.client
        }) {
            return client
        }
        let configuration = try Self.configuration(proxy: key.proxy, tls: key.tls)
        let (client, unused) = clients.withLockedValue { clients -> (HTTPClient, HTTPClient?) in
            let made = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
                backgroundActivityLogger: Logger(
                    label: "NativeAuth.HTTP.pool", factory: { _ in SwiftLogNoOpLogHandler() }))
            if let entry = clients[key] {
                // Another transport made it meanwhile: use that one, shut this one down.
                if !held { clients[key]?.leases += 1 }
                return (entry.client, made)
            }
            clients[key] = (made, 1)
            return (made, nil)
        }
        unused?.shutdown { _ in }
        return client
    }

    /// Gives back a lease on each of `keys`; a client whose last lease this was is shut down.
    func release(_ keys: some Sequence<Key>) {
        let finished = clients.withLockedValue { clients -> [HTTPClient] in
            var finished: [HTTPClient] = []
            for key in keys {
                guard let entry = clients[key] else { continue }
                if entry.leases > 1 {
                    clients[key]?.leases -= 1
                } else {
                    clients[key] = nil
                    finished.append(entry.client)
                }
            }
            return finished
        }
        for client in finished { client.shutdown { _ in } }
    }

    /// Whether a client for `key` is running, and how many leases it has.
    func leases(of key: Key) -> Int { clients.withLockedValue { $0[key]?.leases ?? 0 } }

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
            try readable(caFile, setting: "ca_file", directoryAllowed: false)
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw AuthError(
                    .configurationInvalid, "the CA file \(caFile) holds no PEM certificate",
                    hint: "pass a file of -----BEGIN CERTIFICATE----- blocks", field: "ca_file", underlying: error)
            }
        }
        switch (settings.clientCertificateFile, settings.clientKeyFile) {
        case (nil, nil):
            break
        case (let certificate?, let key?):
            try readable(certificate, setting: "client_cert", directoryAllowed: false)
            let keyFile = try SecretFile(key, what: "client key")
            guard !keyFile.othersMayAccess else {
                throw AuthError(
                    .configurationInvalid, "the client key \(key) can be read or changed by other users",
                    hint: "run: chmod 600 '\(key)' (and make it yours)", field: "client_key")
            }
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
            } catch {
                throw AuthError(
                    .configurationInvalid, "the client certificate \(certificate) holds no PEM certificate",
                    field: "client_cert", underlying: error)
            }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(keyFile.contents), format: .pem))
            } catch {
                throw AuthError(
                    .configurationInvalid, "the client key \(key) is not a PEM private key",
                    field: "client_key", underlying: error)
            }
        case (nil, _?):
            throw AuthError(.configurationInvalid, "a client key needs its certificate", field: "client_cert")
        case (_?, nil):
            throw AuthError(.configurationInvalid, "a client certificate needs its key", field: "client_key")
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
