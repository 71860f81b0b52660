package import Foundation
internal import Logging

// Credentials other services issue for the stored tokens (AWS STS for the ID token, say), kept in
// the set.
extension StoredTokens {
    /// The credential named `name` the set keeps while it is valid for `minimumValidity` seconds,
    /// else one `obtain` gets with the tokens (an ID token, with `idToken`, or an access token,
    /// valid for at least a minute, refreshed when needed), stored in the set: asked for once
    /// however many callers and processes want it, under the store's lock.
    package func derivedCredential(
        named name: String, minimumValidity: TimeInterval, idToken: Bool,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        guard let current = try await current() else { throw RefreshDecision.notSignedIn }
        if let kept = current.derivedCredentials.first(where: { $0.name == name }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            return kept
        }
        let flight = derivedFlights[name] ?? SingleFlight<DerivedCredential>()
        derivedFlights[name] = flight
        return try await flight.value {
            // The tokens first (a refresh takes the lock itself), then the credential under the lock.
            let tokens = try await self.validTokens(minimumValidity: 60, idToken: idToken)
            return try await self.underLock {
                try await self.derivedLocked(
                    name, minimumValidity: minimumValidity, idToken: idToken, tokens: tokens, obtain: obtain)
            }
        }
    }

    private func derivedLocked(
        _ name: String, minimumValidity: TimeInterval, idToken: Bool, tokens: TokenSet,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        var stored = try await storedUnderLock()
        if let kept = stored.derivedCredentials.first(where: { $0.name == name }),
            kept.isValid(at: now, leeway: minimumValidity)
        {
            client.logger.debug("using a credential another process got", metadata: ["credential": "\(name)"])
            await wrote(stored)
            return kept
        }
        // The stored tokens when another process refreshed them meanwhile (they are as good), else
        // the ones just made valid.
        let storedIsGood = idToken ? stored.idTokenIsValid(at: now) : stored.isValid(at: now)
        var credential = try await obtain(storedIsGood ? stored : tokens)
        credential.name = name
        guard credential.isValid(at: now, leeway: 0) else {
            throw AuthError(.responseMalformed, "the credential for \(name) came already expired")
        }
        stored.derivedCredentials.removeAll { $0.name == name }
        stored.derivedCredentials.append(credential)
        do {
            // No refresh token was spent: when the store fails, this caller still gets the
            // credential, and the next process asks for another.
            try await storeOperation { try await store.save(stored, for: key) }
            await wrote(stored)
        } catch {
            cached = stored
            client.logger.warning(
                "a credential from another service could not be stored; the next process asks again",
                metadata: ["credential": "\(name)", "error": "\(error)"])
        }
        client.logger.debug("got a credential from another service", metadata: ["credential": "\(name)"])
        return credential
    }
}
