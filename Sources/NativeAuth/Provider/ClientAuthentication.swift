/// How the client proves its identity at the token endpoint (RFC 6749 §2.3, OIDC Core §9).
public enum ClientAuthentication: String, Sendable, CaseIterable {
    /// No secret: a public client sends only `client_id` (native apps, RFC 8252 §8.4).
    case none
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// HTTP Basic with the form-encoded `client_id` and `client_secret` (RFC 6749 §2.3.1).
    case clientSecretBasic = "client_secret_basic"

    /// Reads `none`, `post`, `basic` or the full metadata names; `nil` for anything else.
    public init?(name: String) {
        switch name.lowercased() {
        case "none": self = .none
        case "post", "client_secret_post": self = .clientSecretPost
        case "basic", "client_secret_basic": self = .clientSecretBasic
        default: return nil
        }
    }
}

extension ClientAuthentication {
    /// The method the standard ``AuthProvider/prepare(_:metadata:)`` uses: the configured one;
    /// without one, `none` for a client without a secret, else the first of the metadata's
    /// `token_endpoint_auth_methods_supported` that NativeAuth supports, `client_secret_basic` when
    /// the metadata does not say (the OIDC default).
    ///
    /// - Parameters:
    ///   - configuration: The client's registration.
    ///   - metadata: The provider's metadata.
    /// - Returns: The method.
    public static func standard(for configuration: ProviderConfiguration, metadata: ProviderMetadata)
        -> ClientAuthentication
    {
        if let configured = configuration.clientAuthentication { return configured }
        guard let secret = configuration.clientSecret, !secret.isEmpty else { return .none }
        for name in metadata.tokenEndpointAuthMethodsSupported ?? [] {
            if let method = ClientAuthentication(name: name), method != .none { return method }
        }
        return .clientSecretBasic
    }
}
