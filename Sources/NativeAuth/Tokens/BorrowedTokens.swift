package import Foundation
package import HTTPTypes

/// The holder that borrows a sign-in's tokens from a ``TokenSource`` (a token agent) instead of
/// keeping them (``TokenHolder``): it never holds a refresh token or a DPoP key.
///
/// What it borrows is kept in memory while it is valid for as long as a caller needs, with one
/// request to the source however many callers ask at once; each DPoP proof is the source's, and a
/// token a server refuses is handed back, so that the next request gets another.
package actor BorrowedTokens: TokenHolder {
    package nonisolated let key: TokenKey
    private nonisolated let source: any TokenSource
    private nonisolated let client: ExchangeClient
    /// One request to ``source`` per kind of tokens asked for at once.
    private var flights: [String: SingleFlight<TokenSet>] = [:]
    /// The sign-in's tokens borrowed last.
    private var signIn: TokenSet?
    /// The resources' tokens borrowed, while valid.
    private var resources: [String: ResourceToken] = [:]

    package init(source: any TokenSource, client: ExchangeClient, key: TokenKey) {
        self.source = source
        self.client = client
        self.key = key
    }

    package nonisolated var stored: StoredTokens? { nil }

    package nonisolated func holding(account: String) -> any TokenHolder {
        BorrowedTokens(
            source: source, client: client, key: TokenKey(issuer: key.issuer, clientID: key.clientID, account: account))
    }

    private var now: Date { client.clock.now() }

    /// What was borrowed last, else the sign-in's tokens, borrowed now.
    package func current() async throws -> TokenSet? {
        if let signIn { return signIn }
        return try await validTokens(minimumValidity: 60, idToken: false)
    }

    package func validTokens(minimumValidity: TimeInterval, idToken: Bool) async throws -> TokenSet {
        if let signIn, signIn.isValid(at: now, leeway: minimumValidity),
            !idToken || signIn.idTokenIsValid(at: now, leeway: minimumValidity)
        {
            return signIn
        }
        let (source, account) = (source, key.account)
        let tokens = try await flight(idToken ? "id_token" : "").value {
            try await source.tokens(
                account: account, resource: nil, scopes: nil, minimumValidity: minimumValidity, idToken: idToken)
        }
        signIn = tokens
        return tokens
    }

    package func resourceToken(for resource: URL, scopes: [String]?, minimumValidity: TimeInterval) async throws
        -> ResourceToken
    {
        let name = flightName(resource, scopes)
        if let kept = resources[name], kept.isValid(at: now, leeway: minimumValidity) { return kept }
        let (source, account) = (source, key.account)
        let tokens = try await flight(name).value {
            try await source.tokens(
                account: account, resource: resource, scopes: scopes, minimumValidity: minimumValidity, idToken: false)
        }
        let token = ResourceToken(resource: resource, requestedScopes: scopes ?? [], tokens: tokens)
        resources[name] = token
        return token
    }

    /// Nothing to keep it in: each borrower asks with the tokens it borrows.
    package func derivedCredential(
        named name: String, minimumValidity: TimeInterval, idToken: Bool,
        obtain: @escaping @Sendable (TokenSet) async throws -> DerivedCredential
    ) async throws -> DerivedCredential {
        try await obtain(try await validTokens(minimumValidity: 60, idToken: idToken))
    }

    package func credential(for target: TokenTarget, minimumValidity: TimeInterval) async throws
        -> AccessCredential
    {
        guard let resource = target.resource else {
            return AccessCredential(try await validTokens(minimumValidity: minimumValidity, idToken: false))
        }
        return AccessCredential(
            try await resourceToken(for: resource, scopes: target.scopes, minimumValidity: minimumValidity), key: nil)
    }

    /// The source's proof, with the server's last nonce, for a DPoP-bound token.
    package func proof(for request: HTTPRequest, credential: AccessCredential, nonce: String?) async throws -> String? {
        guard credential.isDPoPBound, let url = request.url else { return nil }
        return try await source.proof(
            account: key.account, method: request.method.rawValue, url: url, accessToken: credential.accessToken,
            nonce: nonce)
    }

    /// Hands the refused token back: the next borrow brings another.
    package func renew(_ target: TokenTarget, refused: String) async throws -> Bool {
        try await handBack(refused, resource: target.resource)
        return true
    }

    package func discard(accessToken token: String) async throws -> Bool {
        guard !token.isEmpty else { return false }
        try await handBack(token, resource: nil)
        return true
    }

    package func removeResourceTokens(for resource: URL) async throws -> Bool {
        let before = resources.count
        resources = resources.filter { $0.value.resource != resource }
        return resources.count != before
    }

    /// Forgets the refused `token` and tells the source, so that the next borrow brings another.
    private func handBack(_ token: String, resource: URL?) async throws {
        if let held = signIn, ConstantTime.equals(held.accessToken, token) { signIn = nil }
        resources = resources.filter { !ConstantTime.equals($0.value.accessToken, token) }
        try await source.refused(account: key.account, accessToken: token, resource: resource)
    }

    private func flight(_ name: String) -> SingleFlight<TokenSet> {
        if let flight = flights[name] { return flight }
        let flight = SingleFlight<TokenSet>()
        flights[name] = flight
        return flight
    }
}
