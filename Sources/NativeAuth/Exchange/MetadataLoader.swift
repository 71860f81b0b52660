public import Foundation

/// What a provider loads its metadata with in ``AuthProvider/loadMetadata(_:)``: discovery through
/// NativeAuth's one exchange path (the provider's transport and error mapper included).
///
/// Providers with fixed endpoints (GitHub) build ``ProviderMetadata`` themselves and never use it;
/// providers that discover and then add something (Cognito's revocation endpoint) call
/// `discover()` and change the result. Its methods are provider-author plumbing:
/// `@_spi(Provider) import NativeAuth`.
public struct MetadataLoader: Sendable {
    let client: ExchangeClient

    /// The metadata of the configured issuer, with the configuration's endpoint overrides on top:
    /// OIDC Discovery 1.0, then RFC 8414 (the document's `issuer` must equal the configured one
    /// exactly).
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` (field `issuer`) without an
    ///   issuer or when the document names another; ``AuthError/Code/metadataUnavailable`` naming each
    ///   URL tried and what it answered; ``AuthError/Code/network`` or ``AuthError/Code/timeout``.
    @_spi(Provider) public func discover() async throws(AuthError) -> ProviderMetadata {
        let configuration = client.provider.configuration
        guard let issuer = configuration.issuer else {
            throw AuthError.missing(.issuer)
        }
        return try await discover(issuer: issuer, overrides: configuration.endpoints)
    }

    /// The metadata of `issuer`, with `overrides` on top (see ``discover()``).
    ///
    /// - Parameters:
    ///   - issuer: The issuer; the document's `issuer` must equal it exactly, unless
    ///     `acceptsStatedIssuer` says otherwise.
    ///   - acceptsStatedIssuer: Whether the document may name this `issuer` although it is found at
    ///     `issuer`: Microsoft Entra's multi-tenant authorities (`…/organizations/v2.0`) name
    ///     `…/{tenantid}/v2.0` (ID tokens are then checked with
    ///     ``IDTokenValidationOptions/tenantIssuerTemplate``), and a tenant found by its domain
    ///     names its id. ID tokens must name the issuer the document states. Default `nil`: the
    ///     issuer itself, exactly.
    ///   - overrides: Endpoints that win over, or fill in for, the document's.
    @_spi(Provider) public func discover(
        issuer: URL,
        acceptsStatedIssuer: (@Sendable (String) -> Bool)? = nil,
        overrides: EndpointOverrides
    ) async throws(AuthError) -> ProviderMetadata {
        try await Discovery.load(
            issuer: issuer, acceptsStatedIssuer: acceptsStatedIssuer, overrides: overrides, client: client)
    }
}
