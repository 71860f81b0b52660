public import Logging
public import NativeAuth

#if canImport(NativeAuthURLSession)
    internal import NativeAuthURLSession
#endif

/// The transport NativeAuthCommands' tools use: ``AsyncHTTPClientTransport`` on Linux (proxies,
/// custom trust, client certificates, kept-alive connections), NativeAuthURLSession's
/// `URLSessionTransport` on Apple platforms, where either can be chosen. On Linux URLSession is
/// left out: FoundationNetworking would bring libcurl and some forty libraries into every start
/// of a tool (7 MB of memory) for a transport without proxies or a private CA.
public enum StandardTransport {
    /// Which implementation.
    public enum Kind: String, Sendable, CaseIterable {
        /// ``AsyncHTTPClientTransport``.
        case asyncHTTPClient = "asynchttpclient"
        /// `URLSessionTransport`.
        case urlSession = "urlsession"
    }

    /// This platform's default: ``Kind/asyncHTTPClient`` on Linux, ``Kind/urlSession`` elsewhere.
    public static var defaultKind: Kind {
        #if os(Linux)
            .asyncHTTPClient
        #else
            .urlSession
        #endif
    }

    /// This platform's default transport with the environment's proxy and trust settings.
    ///
    /// - Parameter logger: Where request summaries go, at debug level.
    public static func platformDefault(logger: Logger = Logger(label: "NativeAuth.HTTP")) -> any HTTPTransport {
        #if canImport(NativeAuthURLSession) && !os(Linux)
            URLSessionTransport(logger: logger)
        #else
            AsyncHTTPClientTransport(logger: logger)
        #endif
    }

    /// A transport of `kind` with the environment's proxy settings and the given trust.
    ///
    /// - Parameters:
    ///   - kind: Which implementation; default ``defaultKind``.
    ///   - tls: The certificates trusted and shown; default the environment's (`SSL_CERT_FILE`).
    ///   - logger: Where request summaries go, at debug level.
    /// - Throws: `AuthError.Code.configurationInvalid` when `tls` asks `URLSessionTransport`
    ///   for what it cannot do (a CA file or a client certificate), and for `URLSessionTransport`
    ///   on Linux.
    public static func make(
        _ kind: Kind = defaultKind,
        tls: TLSSettings = .environment,
        logger: Logger = Logger(label: "NativeAuth.HTTP")
    ) throws(AuthError) -> any HTTPTransport {
        switch kind {
        case .asyncHTTPClient:
            let transport = AsyncHTTPClientTransport(configuration: .init(tls: tls), logger: logger)
            logger.trace(
                "HTTP transport",
                metadata: [
                    "transport": "AsyncHTTPClient",
                    "https_proxy": "\(transport.configuration.proxy.httpsProxy.map(\.description) ?? "none")",
                    "http_proxy": "\(transport.configuration.proxy.httpProxy.map(\.description) ?? "none")",
                    "no_proxy": "\(transport.configuration.proxy.noProxy.joined(separator: ","))",
                    "ca_file": "\(tls.caFile ?? "none")",
                    "client_certificate": "\(tls.clientCertificateFile == nil ? "none" : "set")",
                ])
            return transport
        case .urlSession:
            #if canImport(NativeAuthURLSession) && !os(Linux)
                guard tls.caFile == nil, tls.clientCertificateFile == nil, tls.clientKeyFile == nil else {
                    throw AuthError(
                        .configurationInvalid,
                        "the URLSession transport cannot use a CA file or a client certificate",
                        hint: "use the asynchttpclient `http_transport`", field: Setting.httpTransport.key)
                }
                logger.trace("HTTP transport", metadata: ["transport": "URLSession"])
                return URLSessionTransport(logger: logger)
            #else
                throw AuthError(
                    .configurationInvalid, "the URLSession transport is not in this build on Linux",
                    hint: "use the asynchttpclient `http_transport` (the default): it has proxies and a private CA",
                    field: Setting.httpTransport.key)
            #endif
        }
    }
}
