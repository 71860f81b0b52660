public import Foundation
public import LenientJSON

/// A provider's endpoints and capabilities: from discovery (OIDC Discovery 1.0, RFC 8414), from a
/// provider module's static knowledge, and from the configuration's overrides.
public struct ProviderMetadata: Sendable {
    /// The issuer the metadata belongs to; `nil` for providers without one (GitHub).
    public var issuer: String?
    /// Where the person is sent to sign in.
    public var authorizationEndpoint: URL
    /// Where codes and refresh tokens are exchanged for tokens.
    public var tokenEndpoint: URL
    /// The userinfo endpoint.
    public var userInfoEndpoint: URL?
    /// The JWKS document with the keys that sign ID tokens.
    public var jwksURI: URL?
    /// The revocation endpoint (RFC 7009).
    public var revocationEndpoint: URL?
    /// The end-session endpoint (OIDC RP-Initiated Logout).
    public var endSessionEndpoint: URL?
    /// The device authorization endpoint (RFC 8628).
    public var deviceAuthorizationEndpoint: URL?
    /// The dynamic client registration endpoint (RFC 7591, `registration_endpoint`).
    public var registrationEndpoint: URL?
    /// The pushed authorization request endpoint (RFC 9126, `pushed_authorization_request_endpoint`):
    /// where the authorization request is sent before the browser gets only its `request_uri`.
    public var pushedAuthorizationRequestEndpoint: URL?
    /// Whether the server takes authorization requests only by reference from its pushed
    /// authorization request endpoint (RFC 9126 §5, `require_pushed_authorization_requests`).
    public var requiresPushedAuthorizationRequests = false
    /// The algorithms the server takes DPoP proofs in (RFC 9449 §5.1,
    /// `dpop_signing_alg_values_supported`); `nil` when it does not say, which means it does not
    /// announce DPoP.
    public var dpopSigningAlgValuesSupported: [String]?
    /// `scopes_supported`, when stated.
    public var scopesSupported: [String]?
    /// `code_challenge_methods_supported`, when stated.
    public var codeChallengeMethodsSupported: [String]?
    /// `token_endpoint_auth_methods_supported`, when stated.
    public var tokenEndpointAuthMethodsSupported: [String]?
    /// `id_token_signing_alg_values_supported`, when stated.
    public var idTokenSigningAlgValuesSupported: [String]?
    /// Whether authorization responses carry `iss` (RFC 9207); when `true`, a response without it
    /// is refused.
    public var authorizationResponseIssParameterSupported: Bool
    /// The whole document the metadata was read from (empty for static metadata).
    public var document: JSONObject

    /// Creates metadata in code (for providers without discovery).
    public init(
        issuer: String?,
        authorizationEndpoint: URL,
        tokenEndpoint: URL,
        userInfoEndpoint: URL? = nil,
        jwksURI: URL? = nil,
        revocationEndpoint: URL? = nil,
        endSessionEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil,
        scopesSupported: [String]? = nil,
        codeChallengeMethodsSupported: [String]? = nil,
        tokenEndpointAuthMethodsSupported: [String]? = nil,
        idTokenSigningAlgValuesSupported: [String]? = nil,
        authorizationResponseIssParameterSupported: Bool = false,
        document: JSONObject = JSONObject()
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.userInfoEndpoint = userInfoEndpoint
        self.jwksURI = jwksURI
        self.revocationEndpoint = revocationEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.scopesSupported = scopesSupported
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
        self.document = document
    }

    /// Reads metadata from a discovery document, with the configuration's overrides on top.
    ///
    /// - Parameters:
    ///   - document: The parsed document.
    ///   - source: Where it came from, for messages.
    ///   - overrides: Endpoints that win over the document's.
    /// - Throws: ``AuthError`` (``AuthError/Code/metadataUnavailable``) naming the field that is
    ///   missing, not a URL, or not HTTPS.
    package init(document: JSONObject, source: URL, overrides: EndpointOverrides) throws(AuthError) {
        func problem(_ key: String, _ text: String) -> AuthError {
            AuthError(
                .metadataUnavailable,
                "the metadata at \(Redaction.scrubURL(source.absoluteString)): \"\(key)\" \(text)",
                operation: .discovery
            )
        }
        func endpoint(_ key: String, override: URL?) throws(AuthError) -> URL? {
            if let override { return override }
            let text: String?
            do {
                text = try document.string(key)
            } catch {
                throw problem(key, "is not a string")
            }
            guard let text, !text.isEmpty else { return nil }
            guard let url = URL(string: text), url.host?.isEmpty == false else { throw problem(key, "is not a URL") }
            do {
                try EndpointPolicy.validate(url)
            } catch {
                throw problem(key, "must be an https URL (plain http only on loopback)")
            }
            return url
        }
        func list(_ key: String) throws(AuthError) -> [String]? {
            do {
                return try document.stringList(key)
            } catch {
                throw problem(key, "is not a list of strings")
            }
        }

        guard let authorization = try endpoint("authorization_endpoint", override: overrides.authorization) else {
            throw problem("authorization_endpoint", "is missing")
        }
        guard let token = try endpoint("token_endpoint", override: overrides.token) else {
            throw problem("token_endpoint", "is missing")
        }
        self.init(
            issuer: try? document.string("issuer"),
            authorizationEndpoint: authorization,
            tokenEndpoint: token,
            userInfoEndpoint: try endpoint("userinfo_endpoint", override: overrides.userInfo),
            jwksURI: try endpoint("jwks_uri", override: overrides.jwks),
            revocationEndpoint: try endpoint("revocation_endpoint", override: overrides.revocation),
            endSessionEndpoint: try endpoint("end_session_endpoint", override: overrides.endSession),
            deviceAuthorizationEndpoint: try endpoint(
                "device_authorization_endpoint",
                override: overrides.deviceAuthorization
            ),
            scopesSupported: try list("scopes_supported"),
            codeChallengeMethodsSupported: try list("code_challenge_methods_supported"),
            tokenEndpointAuthMethodsSupported: try list("token_endpoint_auth_methods_supported"),
            idTokenSigningAlgValuesSupported: try list("id_token_signing_alg_values_supported"),
            authorizationResponseIssParameterSupported: (try? document.bool(
                "authorization_response_iss_parameter_supported")) ?? false,
            document: document
        )
        registrationEndpoint = try endpoint("registration_endpoint", override: nil)
        pushedAuthorizationRequestEndpoint = try endpoint("pushed_authorization_request_endpoint", override: nil)
        requiresPushedAuthorizationRequests =
            ((try? document.bool("require_pushed_authorization_requests")) ?? nil) ?? false
        dpopSigningAlgValuesSupported = try list("dpop_signing_alg_values_supported")
        if let methods = codeChallengeMethodsSupported, !methods.contains("S256") {
            throw problem(
                "code_challenge_methods_supported",
                "does not include S256, the only PKCE method NativeAuth uses"
            )
        }
    }

    /// Whether the server takes the URL of a Client ID Metadata Document as a client id
    /// (`client_id_metadata_document_supported`, draft-ietf-oauth-client-id-metadata-document).
    public var clientIDMetadataDocumentSupported: Bool {
        ((try? document.bool("client_id_metadata_document_supported")) ?? nil) ?? false
    }

    /// Whether the server binds access tokens to the client certificate of the mutual-TLS
    /// connection they were asked for on (RFC 8705 §3.3,
    /// `tls_client_certificate_bound_access_tokens`).
    public var tlsClientCertificateBoundAccessTokens: Bool {
        ((try? document.bool("tls_client_certificate_bound_access_tokens")) ?? nil) ?? false
    }

    /// The metadata with the endpoints of `mtls_endpoint_aliases` (RFC 8705 §5), which a client
    /// that speaks mutual TLS uses instead of the plain ones; the configuration's `overrides` still
    /// win. An alias that is not an HTTPS URL (or plain HTTP to loopback) is ignored.
    ///
    /// - Parameter overrides: The configuration's endpoints.
    /// - Returns: The metadata with the aliases applied.
    public func applyingMutualTLSAliases(keeping overrides: EndpointOverrides) -> ProviderMetadata {
        guard let aliases = (try? document.object("mtls_endpoint_aliases")) ?? nil else { return self }
        var endpoints = EndpointOverrides()
        for (setting, path) in EndpointOverrides.fields {
            guard let text = (try? aliases.string(setting.key)) ?? nil, let url = URL(string: text),
                (try? EndpointPolicy.validate(url)) != nil
            else { continue }
            endpoints[keyPath: path] = url
        }
        return applying(endpoints).applying(overrides)
    }

    /// The metadata with the overrides applied: for providers with fixed endpoints, which build
    /// their metadata in code and put the configuration's overrides on top.
    ///
    /// - Parameter overrides: The configuration's endpoints (``ProviderConfiguration/endpoints``).
    /// - Returns: The metadata with each given endpoint replaced.
    @_spi(Provider) public func applying(_ overrides: EndpointOverrides) -> ProviderMetadata {
        var copy = self
        copy.authorizationEndpoint = overrides.authorization ?? authorizationEndpoint
        copy.tokenEndpoint = overrides.token ?? tokenEndpoint
        copy.userInfoEndpoint = overrides.userInfo ?? userInfoEndpoint
        copy.jwksURI = overrides.jwks ?? jwksURI
        copy.revocationEndpoint = overrides.revocation ?? revocationEndpoint
        copy.endSessionEndpoint = overrides.endSession ?? endSessionEndpoint
        copy.deviceAuthorizationEndpoint = overrides.deviceAuthorization ?? deviceAuthorizationEndpoint
        return copy
    }
}
