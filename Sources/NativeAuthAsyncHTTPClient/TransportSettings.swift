internal import Foundation
public import NativeAuth

// The settings of the transports' trust and choice, declared once: a command line makes each an
// option, an environment variable and a configuration key; this module's errors name their keys.

extension Setting where Value == String {
    /// `ca_file`: PEM certificates to trust besides the system's.
    public static let caFile = Setting(
        "ca_file",
        help: "PEM certificates to trust in addition to the system's (a private CA, a TLS-inspecting proxy's).",
        valueName: "file", group: .transport, isPath: true, parse: .text)
    /// `client_cert`: a PEM client certificate (mutual TLS).
    public static let clientCertificate = Setting(
        "client_cert", help: "A PEM client certificate for servers that ask for one (mutual TLS).", valueName: "file",
        group: .transport, isPath: true, parse: .text)
    /// `client_key`: the PEM private key of `client_cert`.
    public static let clientKey = Setting(
        "client_key", help: "The PEM private key of the client certificate (only you may read it).", valueName: "file",
        group: .transport, isPath: true, parse: .text)
}

extension Setting where Value == StandardTransport.Kind {
    /// `http_transport`: which HTTP implementation sends the requests.
    public static let httpTransport = Setting(
        "http_transport",
        help: "The HTTP implementation: asynchttpclient (the default on Linux) or urlsession (the default on Apple"
            + " platforms).",
        valueName: "asynchttpclient|urlsession", group: .transport, parse: .named("HTTP transport"))
}
