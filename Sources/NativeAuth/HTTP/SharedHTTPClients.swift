import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The process's AsyncHTTPClient clients: one for each proxy and TLS setting, created when first
/// needed and kept for the life of the process, so that every ``AsyncHTTPClientTransport`` with
/// the same settings reuses the same kept-alive connections.
///
/// They are never shut down: they live in a global that is never deinitialized, so a process can
/// exit at any moment (AsyncHTTPClient traps when a client that was not shut down is deinitialized).
/// Idle connections close after a minute.
final class SharedHTTPClients: Sendable {
    /// This process's clients.
    static let process = SharedHTTPClients()

    private struct Key: Hashable {
        var proxy: ProxyServer?
        var tls: TLSSettings
    }

    private let clients = NIOLockedValueBox<[Key: HTTPClient]>([:])

    /// The client for requests through `proxy` (or none) with `tls`.
    ///
    /// - Throws: ``AuthError/Code/configurationInvalid`` naming the file when a CA file, trust
    ///   store, client certificate or key cannot be read or used.
    func client(proxy: ProxyServer?, tls: TLSSettings) throws -> HTTPClient {
        let key = Key(proxy: proxy, tls: tls)
        if let client = clients.withLockedValue({ $0[key] }) { return client }
        let configuration = try Self.configuration(proxy: proxy, tls: tls)
        return clients.withLockedValue { clients in
            if let client = clients[key] { return client }
            let client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
                backgroundActivityLogger: Logger(
                    label: "NativeAuth.HTTP.pool", factory: { _ in SwiftLogNoOpLogHandler() }))
            clients[key] = client
            return client
        }
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
