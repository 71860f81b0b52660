public import Foundation

extension AuthError {
    /// The error for a request that got no response: ``Code/timeout`` for `URLError.timedOut`,
    /// ``Code/certificateUntrusted`` for a server certificate that is not trusted, ``Code/network``
    /// otherwise. Only the host is named, never the URL's path or query.
    public static func transport(_ error: URLError, host: String?) -> AuthError {
        let target = host.map { " \($0)" } ?? " the server"
        // FoundationNetworking reports libcurl's verification failure as code -1 with curl's text.
        let curlText = error.localizedDescription
        let certificateCodes: [URLError.Code] = [
            .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot,
        ]
        if certificateCodes.contains(error.code) || curlText.hasPrefix("SSL certificate problem") {
            let reason = curlText.hasPrefix("SSL certificate problem: ") ? curlText.dropFirst(25) : "unknown issuer"
            return AuthError(
                .certificateUntrusted, "the server's certificate is not trusted: \(reason) (\(host ?? "the server"))",
                hint:
                    "use the asynchttpclient `http_transport` with a `ca_file` (URLSession takes no CA file on Linux)",
                isRetryable: false, underlying: error)
        }
        if error.code == .timedOut {
            return AuthError(
                .timeout,
                "no answer from\(target) in time",
                isRetryable: true,
                underlying: error
            )
        }
        return AuthError(
            .network,
            "could not reach\(target): \(error.code.summary)",
            hint: "check the network connection and the server's address",
            isRetryable: true,
            underlying: error
        )
    }
}

extension URLError.Code {
    /// A short phrase for the common codes, the number for the rest.
    fileprivate var summary: String {
        switch self {
        case .cannotFindHost, .dnsLookupFailed: "the host name could not be resolved"
        case .cannotConnectToHost: "the connection was refused"
        case .notConnectedToInternet: "there is no network connection"
        case .networkConnectionLost: "the connection was lost"
        case .secureConnectionFailed: "the TLS connection failed"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            "the server's TLS certificate is not trusted"
        case .badServerResponse: "the server's answer is not valid HTTP"
        default: "URLError \(rawValue)"
        }
    }
}
