import Foundation

/// Which certificates a transport trusts, and which certificate it shows (mutual TLS).
///
/// - The system's trust store is the default. `SSL_CERT_FILE` (a PEM bundle) or `SSL_CERT_DIR`
///   (a directory of hashed PEM files) replace it, as OpenSSL and curl read them.
/// - ``caFile`` (`--ca-file`, `ca_file`) adds certificates to that trust: a private CA, or the
///   CA of a TLS-inspecting gateway, on top of the public ones.
/// - ``clientCertificateFile`` and ``clientKeyFile`` (`--client-cert`, `--client-key`) are shown to
///   servers that ask for a client certificate. The key file must be readable by its owner only,
///   like a token file.
public struct TLSSettings: Sendable, Hashable {
    /// The trust store that replaces the system's: a PEM bundle or a directory, or `nil` for the
    /// system's.
    public var trustStore: String?
    /// PEM certificates trusted in addition to ``trustStore``.
    public var caFile: String?
    /// The PEM client certificate (chain) for mutual TLS.
    public var clientCertificateFile: String?
    /// The PEM private key of ``clientCertificateFile``.
    public var clientKeyFile: String?

    /// Creates settings; every parameter defaults to the system's behaviour.
    ///
    /// - Parameters:
    ///   - trustStore: A PEM bundle or a directory of certificates replacing the system's.
    ///   - caFile: PEM certificates trusted in addition.
    ///   - clientCertificateFile: The PEM client certificate for mutual TLS.
    ///   - clientKeyFile: Its PEM private key.
    public init(
        trustStore: String? = nil, caFile: String? = nil, clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil
    ) {
        self.trustStore = trustStore
        self.caFile = caFile
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
    }

    /// The settings this process's environment gives (see ``init(environment:)``).
    public static var environment: TLSSettings { TLSSettings(environment: ProcessInfo.processInfo.environment) }

    /// The settings an environment gives: `SSL_CERT_FILE`, else `SSL_CERT_DIR`, as the trust store.
    ///
    /// - Parameter environment: A process environment.
    public init(environment: [String: String]) {
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let directory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(trustStore: file ?? directory)
    }
}
