package import Foundation
internal import HTTPTypes
internal import LenientJSON

/// Which well-known metadata document discovery asks an issuer for first.
public enum MetadataOrder: String, Sendable, CaseIterable {
    /// OpenID Connect Discovery first, then RFC 8414: for an issuer people configure to sign in
    /// with OpenID Connect, whose OpenID document is the one with `userinfo_endpoint` and the rest.
    case openID = "openid"
    /// RFC 8414 first, then OpenID Connect Discovery, as the MCP authorization spec (2025-06-18,
    /// 2025-11-25, "Authorization Server Metadata Discovery") orders them: for an authorization
    /// server a protected resource's metadata names.
    case oauth
}

/// Loads a provider's metadata from its issuer: OIDC Discovery 1.0 and RFC 8414, in the order
/// the configuration's ``MetadataOrder`` says.
///
/// ``MetadataOrder/openID`` (the default) tries, moving on when one is not there (an HTTP error,
/// or an answer that is not a JSON object):
/// 1. `ISSUER/.well-known/openid-configuration` (OIDC Discovery §4);
/// 2. `ORIGIN/.well-known/oauth-authorization-server/ISSUER-PATH` (RFC 8414 §3.1);
/// 3. `ISSUER/.well-known/oauth-authorization-server` (the form many servers also publish).
///
/// ``MetadataOrder/oauth`` tries MCP's order: for an issuer with a path,
/// `ORIGIN/.well-known/oauth-authorization-server/PATH`, `ORIGIN/.well-known/openid-configuration/PATH`,
/// then `ISSUER/.well-known/openid-configuration`; for one without, the RFC 8414 document, then the
/// OpenID one.
///
/// A document whose `issuer` is not exactly the configured issuer is refused at once (OIDC
/// Discovery §4.3, RFC 8414 §3.3): it may belong to another server. A network failure also stops
/// at once, since another path cannot help.
package enum Discovery {
    /// The URLs tried for `issuer`, in order.
    package static func documentURLs(for issuer: URL, order: MetadataOrder = .openID) -> [URL] {
        var base = issuer.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var path = issuer.path
        while path.hasSuffix("/") { path.removeLast() }
        /// `ORIGIN/.well-known/NAME/PATH` (RFC 8414 §3.1's insertion).
        func inserted(_ name: String) -> URL? {
            guard var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) else { return nil }
            components.path = "/.well-known/" + name + path
            components.query = nil
            components.fragment = nil
            return components.url
        }
        let appendedOpenID = URL(string: base + "/.well-known/openid-configuration")
        let candidates: [URL?]
        switch order {
        case .openID:
            candidates = [
                appendedOpenID, inserted("oauth-authorization-server"),
                path.isEmpty ? nil : URL(string: base + "/.well-known/oauth-authorization-server"),
            ]
        case .oauth:
            candidates =
                path.isEmpty
                ? [inserted("oauth-authorization-server"), appendedOpenID]
                : [inserted("oauth-authorization-server"), inserted("openid-configuration"), appendedOpenID]
        }
        return candidates.compactMap { $0 }
    }

    /// Loads and checks the metadata of `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: The configured issuer, where the document is; the document's `issuer` must equal
    ///     it exactly, unless `acceptsStatedIssuer` is given.
    ///   - acceptsStatedIssuer: Whether the document may name this issuer instead (Microsoft Entra's
    ///     multi-tenant authorities name `…/{tenantid}/v2.0`, and a tenant's domain names its id);
    ///     `nil` for the issuer itself, exactly.
    ///   - overrides: Endpoints that win over, or fill in for, the document's.
    ///   - client: Sends the requests (and maps a transport failure with the provider's mapper).
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` for an issuer mismatch,
    ///   ``AuthError/Code/metadataUnavailable`` naming each URL tried and what it answered,
    ///   ``AuthError/Code/network`` or ``AuthError/Code/timeout`` when the server cannot be reached.
    package static func load(
        issuer: URL,
        acceptsStatedIssuer: (@Sendable (String) -> Bool)? = nil,
        overrides: EndpointOverrides,
        client: ExchangeClient
    ) async throws(AuthError) -> ProviderMetadata {
        let expected = issuer.absoluteString
        let accepts = acceptsStatedIssuer ?? { $0 == expected }
        var attempts: [String] = []
        var retryable = false
        for url in documentURLs(for: issuer, order: client.provider.configuration.metadataOrder) {
            let (response, body) = try await client.fetchDocument(url, operation: .discovery)
            let shown = Redaction.scrubURL(url.absoluteString)
            guard (200..<300).contains(response.status.code) else {
                retryable = retryable || response.status.code >= 500 || response.status.code == 429
                attempts.append("\(shown) answered HTTP \(response.status.code)")
                continue
            }
            let document: JSONObject
            do {
                guard let object = try JSONValue.parse(body).objectValue else {
                    attempts.append("\(shown) answered JSON that is not an object")
                    continue
                }
                document = object
            } catch {
                let type = response.mediaType ?? "no content type"
                attempts.append(
                    response.isJSON
                        ? "\(shown) answered invalid JSON (\(error.summary))"
                        : "\(shown) answered \(type), not JSON"
                )
                continue
            }
            let stated = try? document.string("issuer")
            guard let stated, accepts(stated) else {
                throw AuthError(
                    .configurationInvalid,
                    "the metadata at \(shown) names the issuer \(stated.map { "\"\($0)\"" } ?? "(none)"),"
                        + " not the configured \"\(expected)\"; they must be equal exactly",
                    hint: "check the `issuer` URL; a trailing slash counts",
                    operation: .discovery
                )
            }
            return try ProviderMetadata(document: document, source: url, overrides: overrides)
        }
        throw AuthError(
            .metadataUnavailable,
            "no usable metadata for the issuer \(issuer.absoluteString): " + attempts.joined(separator: "; "),
            hint: "check the `issuer` URL, or set the endpoints in the configuration",
            operation: .discovery,
            isRetryable: retryable
        )
    }
}
