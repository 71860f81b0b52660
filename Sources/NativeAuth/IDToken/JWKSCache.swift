internal import Foundation
internal import HTTPTypes
internal import JWTKit
internal import LenientJSON

/// One provider's signing keys (its JWKS document), fetched once and shared by concurrent callers.
///
/// A key id that is not in the cached set triggers one refetch (key rotation); callers that ask
/// for a refetch of the same generation share it, so a burst of tokens signed by a new key causes
/// one request. Keys of types NativeAuth cannot use are skipped, not fatal.
actor JWKSCache {
    let url: URL
    private let transport: any HTTPTransport
    private let errorMapper: any ErrorMapper
    private var generation = 0
    private var loading: Task<[JWK], any Error>?

    init(url: URL, transport: any HTTPTransport, errorMapper: any ErrorMapper) {
        self.url = url
        self.transport = transport
        self.errorMapper = errorMapper
    }

    /// The keys and their generation, fetching them on first use.
    func keys() async throws -> (keys: [JWK], generation: Int) {
        if let loading { return (try await loading.value, generation) }
        return try await fetch()
    }

    /// Fetches the keys again unless another caller already did since `seen`.
    func refetch(after seen: Int) async throws -> (keys: [JWK], generation: Int) {
        if generation > seen, let loading { return (try await loading.value, generation) }
        return try await fetch()
    }

    private func fetch() async throws -> (keys: [JWK], generation: Int) {
        generation += 1
        let mine = generation
        let url = url
        let transport = transport
        let errorMapper = errorMapper
        let task = Task { try await Self.load(url, transport: transport, errorMapper: errorMapper) }
        loading = task
        do {
            return (try await task.value, mine)
        } catch {
            if generation == mine { loading = nil }  // a failure is not kept: the next caller tries again
            throw error
        }
    }

    private static func load(_ url: URL, transport: any HTTPTransport, errorMapper: any ErrorMapper) async throws
        -> [JWK]
    {
        var request = HTTPRequest(method: .get, url: url)
        request.headerFields[.accept] = "application/json"
        let (response, body): (HTTPResponse, Data)
        do {
            (response, body) = try await transport.send(request, body: nil)
        } catch {
            throw errorMapper.mapWithFallback(AuthFailure(operation: .discovery, underlying: error))
        }
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
