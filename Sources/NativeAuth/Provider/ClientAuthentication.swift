/// How the client proves its identity at the token endpoint (RFC 6749 §2.3, OIDC Core §9).
public enum ClientAuthentication: String, Sendable, CaseIterable {
    /// No secret: a public client sends only `client_id` (native apps, RFC 8252 §8.4).
    case none
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// HTTP Basic with the form-encoded `client_id` and `client_secret` (RFC 6749 §2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// Mutual TLS with a certificate a CA issued (RFC 8705 §2.1): the transport's client
    /// certificate (`--client-cert`) proves the client; the form carries `client_id` alone.
    case tlsClientAuth = "tls_client_auth"
    /// Mutual TLS with a self-signed certificate registered with the server (RFC 8705 §2.2).
    case selfSignedTLSClientAuth = "self_signed_tls_client_auth"
    /// A JWT the client signs with its private key (RFC 7523 §2.2, OIDC Core §9):
    /// ``ProviderConfiguration/clientAssertionKey``. No secret is sent.
    case privateKeyJWT = "private_key_jwt"
    /// A JWT signed with the client secret as an HMAC-SHA256 key (OIDC Core §9): the secret itself
    /// is not sent.
    case clientSecretJWT = "client_secret_jwt"

    /// Reads `none`, `post`, `basic`, `tls`, `self_signed_tls`, `private_key_jwt`, `secret_jwt`
    /// or the full metadata names; `nil` for anything else.
    public init?(name: String) {
        switch name.lowercased() {
        case "none": self = .none
        case "post", "client_secret_post": self = .clientSecretPost
        case "basic", "client_secret_basic": self = .clientSecretBasic
        case "tls", "tls_client_auth": self = .tlsClientAuth
        case "self_signed_tls", "self_signed_tls_client_auth": self = .selfSignedTLSClientAuth
        case "key_jwt", "private_key_jwt": self = .privateKeyJWT
        case "secret_jwt", "client_secret_jwt": self = .clientSecretJWT
        default: return nil
        }
    }

    /// Whether the client proves itself with its TLS client certificate (RFC 8705).
    public var usesMutualTLS: Bool { self == .tlsClientAuth || self == .selfSignedTLSClientAuth }

    /// Whether the client proves itself with a signed JWT (`client_assertion`, RFC 7523 §2.2).
    public var usesAssertion: Bool { self == .privateKeyJWT || self == .clientSecretJWT }
}

extension ClientAuthentication {
    /// The method the standard ``AuthProvider/prepare(_:metadata:)`` uses: the configured one;
    /// without one, `private_key_jwt` for a client with a ``ProviderConfiguration/clientAssertionKey``,
    /// `none` for a client without a secret, else the first of the metadata's
    /// `token_endpoint_auth_methods_supported` that a secret serves (`client_secret_basic`,
    /// `client_secret_post`, `client_secret_jwt`), `client_secret_basic` when the metadata does not
    /// say (the OIDC default).
    ///
    /// - Parameters:
    ///   - configuration: The client's registration.
    ///   - metadata: The provider's metadata.
    /// - Returns: The method.
    public static func standard(for configuration: ProviderConfiguration, metadata: ProviderMetadata)
        -> ClientAuthentication
    {
        if let configured = configuration.clientAuthentication { return configured }
        if configuration.clientAssertionKey != nil { return .privateKeyJWT }
        guard let secret = configuration.clientSecret, !secret.isEmpty else { return .none }
        for name in metadata.tokenEndpointAuthMethodsSupported ?? [] {
            if let method = ClientAuthentication(name: name),
                [.clientSecretBasic, .clientSecretPost, .clientSecretJWT].contains(method)
            {
                return method
            }
        }
        return .clientSecretBasic
    }
}

/// What the client assertions of `private_key_jwt` and `client_secret_jwt` name as their audience
/// (`aud`, RFC 7523 §3).
public enum ClientAssertionAudience: String, Sendable, CaseIterable {
    /// The token endpoint the assertion is sent to: what RFC 7523 §3 and OIDC Core §9 say, and the
    /// default.
    case tokenEndpoint = "token_endpoint"
    /// The issuer: for servers that want it (RFC 7523 §3 allows it; some, Okta's org server among
    /// them, check `aud` against the issuer).
    case issuer
}
