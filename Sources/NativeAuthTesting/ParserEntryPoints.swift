public import Foundation
internal import LenientJSON
internal import NativeAuth

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
}
