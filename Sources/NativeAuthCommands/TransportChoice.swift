internal import Foundation
internal import HTTPTypes
internal import Logging
internal import NativeAuth
internal import NativeAuthAsyncHTTPClient

/// The HTTP transport a command uses, and its trust: the settings `ca_file`, `client_cert`,
/// `client_key` and `http_transport` (`asynchttpclient` or `urlsession`, default the platform's).
/// `SSL_CERT_FILE`/`SSL_CERT_DIR` and the proxy variables are read as curl reads them.
struct TransportChoice {
    var kind: StandardTransport.Kind
    var tls: TLSSettings

    /// The transport the layers describe.
    ///
    /// - Throws: `AuthError` for an unknown transport.
    init(_ layers: SettingLayers) throws(AuthError) {
        tls = TLSSettings.environment
        tls.caFile = try layers.read(.caFile)
        tls.clientCertificateFile = try layers.read(.clientCertificate)
        tls.clientKeyFile = try layers.read(.clientKey)
        kind = try layers.read(.httpTransport) ?? StandardTransport.defaultKind
    }

    /// The transport, logging to `logger`. A setting it cannot honour fails the first request.
    func makeTransport(logger: Logger) -> any HTTPTransport {
        do {
            return try StandardTransport.make(kind, tls: tls, logger: logger)
        } catch {
            return FailingTransport(error: error)
        }
    }
}

/// A transport whose every request fails with one configuration error: so that a command that
/// sends nothing (`status`, `logout` of a local sign-in) still runs.
private struct FailingTransport: HTTPTransport {
    var error: AuthError

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        throw error
    }
}
