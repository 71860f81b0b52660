package import Foundation
package import HTTPTypes

extension HTTPField.Name {
    /// `DPoP`: the proof of a request (RFC 9449 §4.1).
    package static let dpop = fieldName("DPoP")
    /// `DPoP-Nonce`: a server's nonce for the next proofs (RFC 9449 §8, §9).
    package static let dpopNonce = fieldName("DPoP-Nonce")

    private static func fieldName(_ name: String) -> HTTPField.Name {
        guard let field = HTTPField.Name(name) else { preconditionFailure("\(name) is a valid field name") }
        return field
    }
}

/// The DPoP nonces servers gave (RFC 9449 §8, §9), remembered per server (scheme, host and port)
/// for the next proofs to it.
package final class DPoPNonces: Sendable {
    private let nonces = Locked<[String: String]>([:])

    package init() {}

    /// The nonce `url`'s server gave last, if any.
    package func nonce(for url: URL) -> String? {
        nonces.withLock { $0[Self.server(of: url)] }
    }

    /// Keeps the `DPoP-Nonce` of `response` for `url`'s server, when it has a well-formed one.
    ///
    /// - Returns: The nonce kept; `nil` when the response has none.
    /// - Throws: ``AuthError`` (``AuthError/Code/responseMalformed``) when the header is there but
    ///   is not a nonce (RFC 9449 §8.1: one or more of the characters `!`, `#`–`[`, `]`–`~`).
    @discardableResult
    package func remember(_ response: HTTPResponse, for url: URL, operation: AuthOperation) throws(AuthError)
        -> String?
    {
        guard let value = response.headerFields[.dpopNonce] else { return nil }
        guard Self.isNonce(value) else {
            throw AuthError(
                .responseMalformed,
                "the server's DPoP-Nonce header is not a nonce (RFC 9449 §8.1)",
                hint: "the server, or a proxy before it, sent a malformed header; report it to its operators",
                operation: operation, status: response.status.code)
        }
        nonces.withLock { $0[Self.server(of: url)] = value }
        return value
    }

    /// Whether `value` is a nonce: `1*NQCHAR` (RFC 9449 §8.1), and at most 1 KiB.
    package static func isNonce(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 1024
            && value.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    private static func server(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}

extension DPoPNonces {
    /// The errors that refuse a request's DPoP proof, not its grant or token (RFC 9449 §5, §7.1,
    /// §8): each gets one new proof, and never a refresh.
    package static let proofRefusals: Set<String> = ["use_dpop_nonce", "invalid_dpop_proof"]

    /// The error for a `use_dpop_nonce` that came without a new nonce: it is not retried.
    package static func missingNonce(operation: AuthOperation, status: Int?) -> AuthError {
        AuthError(
            .responseMalformed, "the server asks for a new DPoP nonce (use_dpop_nonce) and sent none",
            hint: "the server's DPoP-Nonce header is missing; report it to its operators",
            operation: operation, status: status)
    }
}

extension BearerChallenge {
    /// Whether this is a `DPoP` challenge that refuses the request's proof (a nonce to use, or an
    /// invalid proof), not its token.
    package var refusesDPoPProof: Bool {
        scheme == "dpop" && error.map(DPoPNonces.proofRefusals.contains) == true
    }
}
