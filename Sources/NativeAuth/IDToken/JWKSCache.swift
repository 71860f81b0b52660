internal import Foundation
internal import HTTPTypes
internal import JWTKit

/// One provider's signing keys (its JWKS document), fetched once and shared by concurrent callers.
///
/// A key id that is not in the cached set triggers one refetch (key rotation); callers that ask
/// for a refetch of the same generation share it, so a burst of tokens signed by a new key causes
/// one request. Keys of types NativeAuth cannot use are skipped, not fatal.
package final class JWKSCache: Sendable {
    let url: URL
    private let flight = SingleFlight<[JWK]>(keepsValue: true)

    init(url: URL) {
        self.url = url
    }

    /// The keys and their generation, fetching them on first use.
    func keys(using client: ExchangeClient) async throws -> (value: [JWK], generation: Int) {
        let url = url
        return try await flight.valueAndGeneration { try await Self.load(url, client: client) }
    }

    /// Fetches the keys again unless another caller already did since generation `seen`.
    func refetch(after seen: Int, using client: ExchangeClient) async throws -> (value: [JWK], generation: Int) {
        let url = url
        return try await flight.reload(after: seen) { try await Self.load(url, client: client) }
    }

    private static func load(_ url: URL, client: ExchangeClient) async throws -> [JWK] {
        let (response, body) = try await client.fetchDocument(url, operation: .discovery)
        func unusable(_ reason: String) -> AuthError {
            AuthError(
                .metadataUnavailable,
                "the JWKS at \(Redaction.scrubURL(url.absoluteString)) \(reason)",
                operation: .discovery,
                status: response.status.code
            )
        }
        guard response.status.code == 200 else { throw unusable("answered HTTP \(response.status.code)") }
        switch JOSEParsing.keys(fromJWKS: body) {
        case .success(let keys): return keys
        case .failure(let problem): throw unusable(problem.reason)
        }
    }
}
