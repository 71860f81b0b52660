package import Foundation
internal import Logging

// Tokens per resource (RFC 8707) under the stored sign-in, kept in its set.
extension StoredTokens {
    /// An access token for `resource` (RFC 8707) with `scopes` (`nil`: the sign-in's), valid for
    /// at least `minimumValidity` seconds: the one the set keeps, else a new one from its refresh
    /// token (a refresh with `resource`, RFC 8707 §2.2) or its renewable grant, asked for once
    /// however many callers and processes want the same resource and scopes.
    package func resourceToken(for resource: URL, scopes: [String]?, minimumValidity: TimeInterval) async throws
        -> ResourceToken
    {
        guard let current = try await current() else { throw RefreshDecision.notSignedIn }
        if let kept = Self.kept(resource, scopes: scopes, in: current, now: now, leeway: minimumValidity) {
            return kept
        }
        let name = flightName(resource, scopes)
        let flight = resourceFlights[name] ?? SingleFlight<ResourceToken>()
        resourceFlights[name] = flight
        return try await flight.value {
            try await self.underLock {
                try await self.resourceTokenLocked(resource, scopes: scopes, minimumValidity: minimumValidity)
            }
        }
    }

    private func resourceTokenLocked(_ resource: URL, scopes: [String]?, minimumValidity: TimeInterval)
        async throws -> ResourceToken
    {
        var stored = try await storedUnderLock()
        if let kept = Self.kept(resource, scopes: scopes, in: stored, now: now, leeway: minimumValidity) {
            client.logger.debug("using a resource token another process got")
            await wrote(stored)
            return kept
        }
        let refreshToken = stored.refreshToken
        guard stored.renewableGrant != nil || refreshToken != nil else {
            let name = Redaction.scrubURL(resource.absoluteString)
            throw AuthError(
                .loginRequired, "the sign-in has no refresh token to get a token for \(name) with",
                hint: "sign in again with the `resource` \(name)", operation: .refresh)
        }
        let metadata = try await client.metadata()
        try stored.checkIssued(for: "token_endpoint", at: metadata.tokenEndpoint, operation: .refresh)
        var answer: TokenSet
        let before = stored
        if let refreshToken, stored.renewableGrant == nil {
            do {
                answer = try await resourceRefresh(refreshToken, resource, scopes: scopes, stored, metadata)
            } catch let error as AuthError where error.isLoginRequired {
                // The same decision as a refresh's: another process may have rotated the refresh
                // token meanwhile (its new one is tried once, for the resource), or signed out.
                let reloaded = try await storeOperation { try await store.load(key) }
                switch RefreshDecision.afterRefusal(
                    of: refreshToken, reloaded: reloaded, now: now, minimumValidity: nil)
                {
                case .use(let newer), .retry(let newer, _):
                    guard let newerToken = newer.refreshToken else { throw error }
                    stored = newer
                    answer = try await resourceRefresh(newerToken, resource, scopes: scopes, stored, metadata)
                case .clear(let cleared):
                    try await clearRefused(cleared)
                    throw error
                case .signedOut:
                    throw signedOutElsewhere()
                }
            }
            if let rotated = answer.refreshToken {
                stored.refreshToken = rotated
                stored.refreshExpiresAt = answer.refreshExpiresAt
            }
        } else {
            let grant = try await Self.renewal(
                of: stored, scopes: scopes ?? stored.scopes, configuration: client.provider.configuration,
                client: client)
            answer = try await client.tokens(
                for: grant.forResources([resource]), metadata: metadata, requestedScopes: scopes ?? stored.scopes,
                dpop: stored.dpopKey)
        }
        let token = ResourceToken(resource: resource, requestedScopes: scopes ?? [], tokens: answer)
        stored.resourceTokens.removeAll { $0.matches(resource, scopes: scopes) }
        stored.resourceTokens.append(token)
        try await keepRefreshed(stored, replacing: before)
        client.logger.debug(
            "got an access token for a resource",
            metadata: ["resource": "\(Redaction.scrubURL(resource.absoluteString))"])
        return token
    }

    /// A valid token for `resource` that `tokens` holds: one got for it, else (with no scopes named)
    /// the sign-in's own access token when the sign-in was made for the resource alone (its token
    /// request named it, and no other: a token for several goes to none of them, RFC 8707 §2): a
    /// server that issues no refresh token leaves no other way to get one.
    static func kept(_ resource: URL, scopes: [String]?, in tokens: TokenSet, now: Date, leeway: TimeInterval)
        -> ResourceToken?
    {
        if let kept = tokens.resourceTokens.first(where: { $0.matches(resource, scopes: scopes) }),
            kept.isValid(at: now, leeway: leeway)
        {
            return kept
        }
        guard scopes == nil, tokens.resources == [resource.absoluteString], tokens.isValid(at: now, leeway: leeway)
        else { return nil }
        return ResourceToken(resource: resource, requestedScopes: [], tokens: tokens)
    }

    /// A refresh asking for `resource` (and `scopes`, narrowing): the answer as it came (its
    /// `refresh_token` only when the server rotated it).
    private func resourceRefresh(
        _ refreshToken: String, _ resource: URL, scopes: [String]?, _ current: TokenSet, _ metadata: ProviderMetadata
    ) async throws -> TokenSet {
        try await client.tokens(
            for: Grant.refreshToken(refreshToken, scopes: scopes ?? []).forResources([resource]), metadata: metadata,
            requestedScopes: scopes ?? current.scopes, dpop: current.dpopKey)
    }
}
