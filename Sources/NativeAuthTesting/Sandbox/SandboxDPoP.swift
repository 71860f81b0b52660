import Crypto
import CryptoExtras
import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth

/// DPoP (RFC 9449) at the sandbox: proofs checked as §4.3 says at the token endpoint and the
/// protected resources, nonces (§8, §9), and tokens bound to the proof's key (`cnf.jkt`).
extension SandboxCore {
    /// The thumbprint of the key of the token request being answered, when it came with a valid
    /// proof: the tokens it issues are bound to it.
    @TaskLocal static var proofThumbprint: String?

    /// Where a proof was presented: errors are answered as the token endpoint (400 and an OAuth
    /// error, §5) or a resource (401 and a `DPoP` challenge, §7.1) does.
    enum ProofSite {
        case authorizationServer
        case resource
    }

    /// A refused proof, as the answer to send.
    struct ProofRefusal: Error {
        let response: TestResponse
    }

    /// Checks the request's DPoP proof: `nil` when it has none, the thumbprint of its key when it
    /// is valid, a refusal when it is not.
    ///
    /// - Parameters:
    ///   - accessToken: The access token the request presents, whose hash the proof's `ath` must be.
    func dpopProof(_ request: TestRequest, site: ProofSite, accessToken: String? = nil) -> Result<
        String?, ProofRefusal
    > {
        let proofs = request.headers.filter { $0.0.lowercased() == "dpop" }.map(\.1)
        guard let proof = proofs.first else { return .success(nil) }
        func refuse(_ reason: String, code: String = "invalid_dpop_proof") -> Result<String?, ProofRefusal> {
            state.withLock { $0.dpopRefusals.append(reason) }
            return .failure(ProofRefusal(response: dpopError(code, reason, site: site)))
        }
        guard !configuration.dpopSigningAlgorithms.isEmpty else { return refuse("this server does not take DPoP") }
        guard proofs.count == 1 else { return refuse("more than one DPoP header") }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
            let header = try? JSONValue.parse(headerBytes).objectValue,
            let claims = try? JSONValue.parse(payloadBytes).objectValue
        else { return refuse("the proof is not a JWS") }
        guard (try? header.string("typ")) == "dpop+jwt" else { return refuse("typ is not dpop+jwt") }
        guard let algorithm = (try? header.string("alg")) ?? nil,
            configuration.dpopSigningAlgorithms.contains(algorithm)
        else { return refuse("alg is not one this server takes") }
        guard let jwk = (try? header.object("jwk")) ?? nil, jwk["d"] == nil else {
            return refuse("jwk is missing, or holds a private key")
        }
        guard let thumbprint = Self.verify(signature, of: Data((parts[0] + "." + parts[1]).utf8), jwk, algorithm)
        else { return refuse("the signature does not verify with the jwk") }
        guard let jti = (try? claims.string("jti")) ?? nil, !jti.isEmpty else { return refuse("jti is missing") }
        guard (try? claims.string("htm")) == request.method else { return refuse("htm is not the request's method") }
        let target = request.serverURL.absoluteString + request.path
        guard (try? claims.string("htu")) == target else { return refuse("htu is not the request's URI") }
        guard let issued = (try? claims.integer("iat")) ?? nil else { return refuse("iat is missing") }
        if let accessToken {
            let expected = Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))
            guard (try? claims.string("ath")) == expected else { return refuse("ath is not the access token's hash") }
        }
        let nonce = (try? claims.string("nonce")) ?? nil
        let window = configuration.dpopProofLifetime.timeInterval
        enum Verdict {
            case accept
            case refuse(String, code: String)
        }
        let verdict: Verdict = state.withLock { state in
            if !state.dpopInjections.isEmpty {
                switch state.dpopInjections.removeFirst() {
                case .replayed: return .refuse("the proof's jti was used before (injected)", code: "invalid_dpop_proof")
                case .stale: return .refuse("the proof's iat is too old (injected)", code: "invalid_dpop_proof")
                case .nonce: return .refuse("a new nonce is needed (injected)", code: "use_dpop_nonce")
                }
            }
            if configuration.requiresDPoPNonce, nonce != state.dpopNonce {
                return .refuse("the proof needs the server's current nonce", code: "use_dpop_nonce")
            }
            if abs(now.timeIntervalSince1970 - Double(issued)) > window {
                return .refuse("the proof's iat is outside the window", code: "invalid_dpop_proof")
            }
            guard state.usedDPoPIDs.insert(jti).inserted else {
                return .refuse("the proof's jti was used before", code: "invalid_dpop_proof")
            }
            state.dpopProofs.append(proof)
            return .accept
        }
        switch verdict {
        case .accept: return .success(thumbprint)
        case .refuse(let reason, let code): return refuse(reason, code: code)
        }
    }

    /// A DPoP error with the server's current nonce: an OAuth error at the token endpoint, a 401
    /// with a `DPoP` challenge at a resource.
    func dpopError(_ code: String, _ description: String, site: ProofSite) -> TestResponse {
        let nonce = state.withLock { $0.dpopNonce }
        let algs = configuration.dpopSigningAlgorithms.joined(separator: " ")
        switch site {
        case .authorizationServer:
            return json(
                ["error": .string(code), "error_description": .string(description)], status: 400,
                headers: [("DPoP-Nonce", nonce)])
        case .resource:
            return json(
                ["error": .string(code)], status: 401,
                headers: [
                    ("WWW-Authenticate", #"DPoP error=""# + code + #"", algs=""# + algs + #"""#),
                    ("DPoP-Nonce", nonce),
                ])
        }
    }

    /// Verifies a proof's signature with its `jwk`; its RFC 7638 thumbprint when it does.
    static func verify(_ signature: Data, of input: Data, _ jwk: JSONObject, _ algorithm: String) -> String? {
        func member(_ name: String) -> String? { (try? jwk.string(name)) ?? nil }
        func bytes(_ name: String) -> Data? { member(name).flatMap(Base64URL.decode) }
        let canonical: String
        switch (algorithm, member("kty")) {
        case ("ES256", "EC"):
            guard member("crv") == "P-256", let x = member("x"), let y = member("y"), let xb = bytes("x"),
                let yb = bytes("y"), let key = try? P256.Signing.PublicKey(rawRepresentation: xb + yb),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                key.isValidSignature(parsed, for: input)
            else { return nil }
            canonical = #"{"crv":"P-256","kty":"EC","x":""# + x + #"","y":""# + y + #""}"#
        case ("EdDSA", "OKP"):
            guard member("crv") == "Ed25519", let x = member("x"), let xb = bytes("x"),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: xb),
                key.isValidSignature(signature, for: input)
            else { return nil }
            canonical = #"{"crv":"Ed25519","kty":"OKP","x":""# + x + #""}"#
        case ("RS256", "RSA"):
            guard let n = member("n"), let e = member("e"), let nb = bytes("n"), let eb = bytes("e"),
                let key = try? _RSA.Signing.PublicKey(n: nb, e: eb),
                key.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            else { return nil }
            canonical = #"{"e":""# + e + #"","kty":"RSA","n":""# + n + #""}"#
        default:
            return nil
        }
        return Base64URL.encode(SHA256.hash(data: Data(canonical.utf8)))
    }

    /// The access token a request presents (`Bearer`, or `DPoP` with a valid proof for a token
    /// bound to its key), if it is valid now; else the 401 to answer.
    func presentedToken(_ request: TestRequest) -> Result<(String, AccessToken), ProofRefusal> {
        guard let header = request.header("Authorization"), let space = header.firstIndex(of: " ") else {
            return .failure(ProofRefusal(response: invalidToken("no access token")))
        }
        let scheme = header[..<space].lowercased()
        let token = String(header[header.index(after: space)...]).trimmingCharacters(in: .whitespaces)
        guard scheme == "bearer" || scheme == "dpop" else {
            return .failure(ProofRefusal(response: invalidToken("no access token")))
        }
        let now = now
        let record: AccessToken? = state.withLock { state in
            guard let record = state.accessTokens[token] else { return nil }
            guard record.expiresAt > now else {
                state.accessTokens[token] = nil
                return nil
            }
            return record
        }
        guard let record else { return .failure(ProofRefusal(response: invalidToken("the access token is not valid"))) }
        // A certificate-bound token is worth nothing without its certificate (RFC 8705 §3).
        if let bound = record.authorization.certificateThumbprint, request.clientCertificateThumbprint != bound {
            return .failure(ProofRefusal(response: invalidToken("the access token is not valid")))
        }
        guard let bound = record.authorization.dpopThumbprint else {
            guard scheme == "bearer" else {
                return .failure(ProofRefusal(response: invalidToken("the access token is not DPoP-bound")))
            }
            return .success((token, record))
        }
        // A DPoP-bound token as a bearer token is refused (RFC 9449 §7.2).
        guard scheme == "dpop" else {
            return .failure(
                ProofRefusal(response: dpopError("invalid_token", "a DPoP-bound token needs a proof", site: .resource)))
        }
        switch dpopProof(request, site: .resource, accessToken: token) {
        case .failure(let refusal): return .failure(refusal)
        case .success(nil):
            return .failure(
                ProofRefusal(response: dpopError("invalid_dpop_proof", "the DPoP proof is missing", site: .resource)))
        case .success(let thumbprint?):
            guard thumbprint == bound else {
                return .failure(
                    ProofRefusal(
                        response: dpopError("invalid_token", "the proof's key is not the token's", site: .resource)))
            }
            return .success((token, record))
        }
    }
}
