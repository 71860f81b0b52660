package import Foundation
package import JWTKit
package import LenientJSON

/// Reading what a server or a token sends before anything is verified: shared by ID-token
/// validation and the JWKS cache, and the entry points of the fuzz targets (Fuzz/).
package enum JOSEParsing {
    /// The header and claims of a compact JWS, unverified; `nil` unless it is three base64url parts
    /// with a JSON object in the first two.
    package static func parts(ofCompactJWS token: String) -> (header: JSONObject, claims: JSONObject)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]),
            let header = try? JSONValue.parse(headerBytes).objectValue,
            let claims = try? JSONValue.parse(payloadBytes).objectValue
        else { return nil }
        return (header, claims)
    }

    /// Why a JWKS document is unusable.
    package struct UnusableJWKS: Error {
        /// What is wrong, to follow "the JWKS at URL".
        package let reason: String
    }

    /// The keys of a JWKS document that jwt-kit can use; entries it cannot read are skipped.
    package static func keys(fromJWKS body: Data) -> Result<[JWK], UnusableJWKS> {
        let entries: [JSONValue]
        do {
            guard let list = try JSONValue.parse(body).objectValue?.array("keys") else {
                return .failure(UnusableJWKS(reason: "has no \"keys\" list"))
            }
            entries = list
        } catch {
            return .failure(UnusableJWKS(reason: "is not a JSON object with a \"keys\" list"))
        }
        let decoder = JSONDecoder()
        return .success(
            entries.compactMap { entry in
                // A key published for encryption (`use` other than `sig`, `key_ops` without
                // `verify`) never checks a signature (RFC 7517 §4.2, §4.3; RFC 8725 §3.1).
                let object = entry.objectValue
                if let use = try? object?.string("use"), use != "sig" { return nil }
                if let operations = try? object?.stringList("key_ops"), !operations.contains("verify") { return nil }
                guard let bytes = try? entry.encoded() else { return nil }
                return try? decoder.decode(JWK.self, from: Data(bytes))
            })
    }
}
