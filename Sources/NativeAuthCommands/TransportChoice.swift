internal import Foundation
internal import HTTPTypes
internal import LenientJSON
internal import Logging
internal import NativeAuth

/// The HTTP transport a command uses, and its trust: `ca_file`, `client_cert` and `client_key`
/// (flags `--ca-file`, `--client-cert`, `--client-key`, variables `NATIVEAUTH_CA_FILE`, …, or
/// keys in a configuration file or profile), and `http_transport` (`asynchttpclient` or
/// `urlsession`, default the platform's). `SSL_CERT_FILE`/`SSL_CERT_DIR` and the proxy variables
/// are read as curl reads them.
struct TransportChoice {
    /// The configuration keys it takes out of the settings.
    static let keys = ["ca_file", "client_cert", "client_key", "http_transport"]

    var kind: StandardTransport.Kind
    var tls: TLSSettings

    /// Takes ``keys`` out of `object`.
    ///
    /// - Throws: `AuthError` for an unknown transport or a key that is not a string.
    init(taking object: inout JSONObject) throws(AuthError) {
        func take(_ key: String) throws(AuthError) -> String? {
            defer { object[key] = nil }
            do {
                return try object.string(key)
            } catch {
                throw AuthError(.configurationInvalid, "\(key) must be a string", field: key)
            }
        }
        tls = TLSSettings.environment
        tls.caFile = try take("ca_file")
        tls.clientCertificateFile = try take("client_cert")
        tls.clientKeyFile = try take("client_key")
        let name = try take("http_transport")
        guard
            let kind = name.map({ StandardTransport.Kind(rawValue: $0.lowercased()) }) ?? StandardTransport.defaultKind
        else {
            throw AuthError(
                .configurationInvalid, "unknown HTTP transport '\(name ?? "")'",
                hint: "use asynchttpclient or urlsession", field: "http_transport")
        }
        self.kind = kind
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
