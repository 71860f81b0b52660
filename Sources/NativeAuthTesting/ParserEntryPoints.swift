public import Foundation
public import HTTPTypes
internal import LenientJSON
internal import Logging
public import NativeAuth

/// NativeAuth's parsers of untrusted input that are not public API, for fuzzing (the `Fuzz/`
/// package) and for tests outside the package.
public enum ParserEntryPoints {
    /// Splits a compact JWS into its header and claims, as ID-token validation does before it
    /// checks anything. Returns how many members the two objects have, or `nil` when it is not a JWS.
    public static func compactJWS(_ token: String) -> (headerMembers: Int, claimMembers: Int)? {
        JOSEParsing.parts(ofCompactJWS: token).map { ($0.header.count, $0.claims.count) }
    }

    /// Reads a JWKS document as the JWKS cache does. Returns the number of usable keys, or `nil`
    /// when the document is unusable.
    public static func jwks(_ body: Data) -> Int? {
        switch JOSEParsing.keys(fromJWKS: body) {
        case .success(let keys): keys.count
        case .failure: nil
        }
    }

    /// Reads a token endpoint's answer exactly as a refresh does: the provider's decode hooks, the
    /// `error` member, the fields, the error mapping. Nothing is sent.
    ///
    /// - Parameters:
    ///   - response: The answer's status and header fields.
    ///   - body: Its body.
    ///   - provider: The provider whose hooks read it.
    /// - Returns: The tokens, or the error NativeAuth would report.
    public static func tokenResponse(
        _ response: HTTPResponse,
        body: Data,
        provider: any AuthProvider
    ) -> Result<TokenSet, AuthError> {
        let client = ExchangeClient(
            provider: provider,
            transport: FakeTransport { _, _ in throw AuthError(.network, "the fuzz entry point sends nothing") },
            clock: AuthClock(now: { Date(timeIntervalSince1970: 1_800_000_000) }, sleep: { _ in }),
            logger: Logger(label: "NativeAuth.fuzz") { _ in SwiftLogNoOpLogHandler() }
        )
        let context = TokenResponseDecoder.Context(
            requestedScopes: ["openid"], receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        return client.read(response, body, operation: .refresh, requiredKey: "access_token") { fields in
            try TokenResponseDecoder.decode(fields, context: context)
        }
        .mapError(\.error)
    }
}
