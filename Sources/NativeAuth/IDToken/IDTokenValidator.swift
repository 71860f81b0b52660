internal import Crypto
internal import Foundation
internal import JWTKit
internal import LenientJSON
internal import Logging

/// Checks an ID token (OpenID Connect Core §3.1.3.7): the signature against the provider's JWKS,
/// then `iss`, `aud`/`azp`, `exp`, `iat`, `nonce`, `at_hash` and `auth_time`.
///
/// Every failure is ``AuthError/Code/idTokenInvalid`` with a message naming the check and the
/// values compared (never a token, nonce or hash).
struct IDTokenValidator {
    /// The asymmetric JWS algorithms an ID token may be signed with (OIDC Core §3.1.3.7, RFC 7518
    /// §3.1): every one jwt-kit verifies.
    static let asymmetricAlgorithms = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
    ]
    /// The MAC algorithms, keyed by the client secret (OIDC Core §10.1): for confidential clients only.
    static let secretAlgorithms = ["HS256", "HS384", "HS512"]
    /// Every algorithm NativeAuth can verify an ID token in.
    static let supportedAlgorithms = asymmetricAlgorithms + secretAlgorithms

    let options: IDTokenValidationOptions
    let jwks: JWKSCache?
    let client: ExchangeClient
    let now: Date
    let logger: Logger

    /// Validates the ID token of `tokens`, when it has one, against the provider's metadata and
    /// the sign-in it came from, and returns `tokens` with the account its claims name
    /// (``TokenSet/subject``, ``TokenSet/displayName``); `tokens` as they are without an ID token.
    ///
    /// - Parameters:
    ///   - tokens: The tokens of a sign-in or a refresh.
    ///   - metadata: The provider's metadata (issuer, JWKS, advertised algorithms).
    ///   - client: Fetches the signing keys; its provider says how to validate.
    ///   - nonce: The `nonce` of the authorization request; `nil` at refresh and for the device flow.
    ///   - maxAge: The `max_age` of the authorization request, if any.
    ///   - acrValues: The `acr_values` of the authorization request; `acr` must be one of them.
    ///   - previousSubject: At refresh, the subject the new ID token must repeat (OIDC Core §12.2).
    /// - Throws: ``AuthError`` (``AuthError/Code/idTokenInvalid``) naming the check that failed.
    static func validated(
        _ tokens: TokenSet,
        metadata: ProviderMetadata,
        client: ExchangeClient,
        nonce: String?,
        maxAge: Int? = nil,
        acrValues: [String] = [],
        previousSubject: String? = nil
    ) async throws(AuthError) -> TokenSet {
        try await verified(
            tokens, metadata: metadata, client: client, nonce: nonce, maxAge: maxAge, acrValues: acrValues,
            previousSubject: previousSubject
        ).tokens
    }

    /// ``validated(_:metadata:client:nonce:maxAge:acrValues:previousSubject:)``, with the claims of
    /// the ID token it verified (`nil` without one).
    static func verified(
        _ tokens: TokenSet,
        metadata: ProviderMetadata,
        client: ExchangeClient,
        nonce: String?,
        maxAge: Int? = nil,
        acrValues: [String] = [],
        previousSubject: String? = nil
    ) async throws(AuthError) -> (tokens: TokenSet, claims: IDTokenClaims?) {
        guard let idToken = tokens.idToken else { return (tokens, nil) }
        let instruments = client.instruments
        return try await instruments.span("nativeauth.id_token_validation") { span throws(AuthError) in
            if instruments.isRecording, let (header, _) = JOSEParsing.parts(ofCompactJWS: idToken),
                let algorithm = try? header.string("alg")
            {
                span.set(TraceSpan.Attribute.algorithm, JOSEAlgorithmName.traced(algorithm))
            }
            do throws(AuthError) {
                return try await checked(
                    tokens, idToken: idToken, metadata: metadata, client: client, nonce: nonce, maxAge: maxAge,
                    acrValues: acrValues, previousSubject: previousSubject)
            } catch {
                instruments.countFailure(error, operation: error.operation ?? .tokenExchange)
                throw error
            }
        }
    }

    private static func checked(
        _ tokens: TokenSet,
        idToken: String,
        metadata: ProviderMetadata,
        client: ExchangeClient,
        nonce: String?,
        maxAge: Int?,
        acrValues: [String],
        previousSubject: String?
    ) async throws(AuthError) -> (tokens: TokenSet, claims: IDTokenClaims?) {
        let provider = client.provider
        let configuration = provider.configuration
        var expectations = IDTokenExpectations(
            issuer: metadata.issuer ?? configuration.issuer?.absoluteString ?? provider.tokenIssuer,
            clientID: configuration.clientID,
            nonce: nonce,
            accessToken: tokens.accessToken,
            maxAge: maxAge,
            previousSubject: previousSubject,
            isPublicClient: (configuration.clientSecret ?? "").isEmpty,
            advertisedAlgorithms: metadata.idTokenSigningAlgValuesSupported
        )
        expectations.acrValues = acrValues
        expectations.clientSecret = configuration.clientSecret
        expectations.registeredAlgorithm = configuration.idTokenSigningAlgorithm
        var options = provider.idTokenValidation
        options.trustedAudiences.formUnion(configuration.trustedAudiences)
        let validator = IDTokenValidator(
            options: options,
            jwks: metadata.jwksURI.map(client.signingKeys(at:)),
            client: client,
            now: client.clock.now(),
            logger: client.logger
        )
        do {
            let claims = IDTokenClaims(claims: try await validator.validate(idToken, expecting: expectations))
            var validated = tokens
            validated.subject = claims.subject
            validated.displayName = claims.displayName
            return (validated, claims)
        } catch {
            client.logger.warning("ID token refused", metadata: ["reason": "\(error.message)"])
            throw error
        }
    }

    /// Verifies a signed userinfo answer (OIDC Core §5.3.2, `application/jwt`) as an ID token's
    /// signature is verified (the same keys and algorithms), checks `iss` and `aud` when it has them,
    /// and returns its claims. The caller checks `sub` against the sign-in.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/responseMalformed``) for an encrypted or unreadable
    ///   answer, and for one whose signature, `iss` or `aud` is wrong.
    static func verifiedUserInfo(
        _ jwt: String,
        metadata: ProviderMetadata,
        client: ExchangeClient
    ) async throws(AuthError) -> JSONObject {
        let configuration = client.provider.configuration
        let issuer = metadata.issuer ?? configuration.issuer?.absoluteString ?? client.provider.tokenIssuer
        func refused(_ reason: String, underlying: (any Error)? = nil) -> AuthError {
            AuthError(
                .responseMalformed, "the signed userinfo answer is refused: \(reason)",
                hint: "if this persists, the provider's userinfo signing is misconfigured", operation: .userInfo,
                underlying: underlying)
        }
        if jwt.split(separator: ".", omittingEmptySubsequences: false).count == 5 {
            throw refused(
                "it is encrypted (a JWE), which NativeAuth does not decrypt; register the client for signed"
                    + " or plain JSON userinfo")
        }
        guard let (header, claims) = JOSEParsing.parts(ofCompactJWS: jwt),
            let algorithm = try? header.string("alg")
        else { throw refused("it is not a signed JWT (three base64url parts with a JSON header and payload)") }
        if header.contains("crit") { throw refused("its header names critical extensions (\"crit\")") }
        var expected = IDTokenExpectations(
            issuer: issuer, clientID: configuration.clientID, nonce: nil, accessToken: nil,
            isPublicClient: (configuration.clientSecret ?? "").isEmpty, advertisedAlgorithms: nil)
        expected.clientSecret = configuration.clientSecret
        let validator = IDTokenValidator(
            options: client.provider.idTokenValidation, jwks: metadata.jwksURI.map(client.signingKeys(at:)),
            client: client, now: client.clock.now(), logger: client.logger)
        do {
            try validator.checkAlgorithm(algorithm, expected: expected)
            try await validator.verifySignature(
                jwt, algorithm: algorithm, keyID: try? header.string("kid"), expected: expected)
        } catch {
            throw refused(
                error.message.replacingOccurrences(of: "the ID token is invalid: ", with: ""), underlying: error)
        }
        if claims.contains("iss"), (try? claims.string("iss")) != issuer {
            throw refused("its iss is not the issuer \"\(issuer)\"")
        }
        if claims.contains("aud") {
            let audiences = (try? claims.stringList("aud")) ?? ((try? claims.string("aud")).map { [$0] } ?? [])
            guard audiences.contains(configuration.clientID) else {
                throw refused("its aud does not name the client id \"\(configuration.clientID)\"")
            }
        }
        return claims
    }

    /// Validates `token` and returns its claims.
    func validate(_ token: String, expecting expected: IDTokenExpectations) async throws(AuthError) -> JSONObject {
        if !options.optOuts.isEmpty {
            logger.warning(
                "ID token validation runs with opt-outs",
                metadata: ["opt_outs": "\(options.optOuts.joined(separator: ","))"]
            )
        }
        guard let (header, claims) = JOSEParsing.parts(ofCompactJWS: token) else {
            throw invalid("it is not a signed JWT (three base64url parts with a JSON header and payload)")
        }
        guard let algorithm = try? header.string("alg") else { throw invalid("its header has no \"alg\"") }
        let keyID = try? header.string("kid")
        // RFC 7515 §4.1.11: extensions the recipient must understand; NativeAuth understands none.
        if header.contains("crit") {
            throw invalid("its header names critical extensions (\"crit\"), which NativeAuth does not understand")
        }

        if options.insecureSkipSignatureCheck {
            logger.warning("the ID token's signature is NOT checked (insecureSkipSignatureCheck)")
        } else {
            try checkAlgorithm(algorithm, expected: expected)
            try await verifySignature(token, algorithm: algorithm, keyID: keyID, expected: expected)
        }
        try checkClaims(claims, algorithm: algorithm, expected: expected)
        return claims
    }

    // MARK: - Signature

    fileprivate func checkAlgorithm(_ algorithm: String, expected: IDTokenExpectations) throws(AuthError) {
        if algorithm.lowercased() == "none" {
            throw invalid("alg is \"none\" (an unsigned token), which is never accepted")
        }
        if Self.secretAlgorithms.contains(algorithm) || algorithm.uppercased().hasPrefix("HS") {
            guard !expected.isPublicClient else {
                throw invalid(
                    "alg is \(algorithm), a shared-secret signature, which a public client has no secret to check"
                        + " (anyone could sign it with the public client id)")
            }
        }
        guard Self.supportedAlgorithms.contains(algorithm) else {
            throw invalid(
                "alg \(algorithm) is not supported; NativeAuth accepts \(Self.supportedAlgorithms.joined(separator: ", "))"
            )
        }
        if let allowed = options.allowedAlgorithms, !allowed.contains(algorithm) {
            throw invalid(
                "alg \(algorithm) is not among the algorithms this provider allows"
                    + " [\(allowed.sorted().joined(separator: ", "))]")
        }
        if let registered = expected.registeredAlgorithm, registered != algorithm {
            throw invalid(
                "alg \(algorithm) is not the id_token_signed_response_alg the client is registered with (\(registered))"
            )
        }
        if let advertised = expected.advertisedAlgorithms, !advertised.contains(algorithm) {
            throw invalid(
                "alg \(algorithm) is not among the provider's id_token_signing_alg_values_supported"
                    + " [\(advertised.joined(separator: ", "))]"
            )
        }
    }

    fileprivate func verifySignature(
        _ token: String,
        algorithm: String,
        keyID: String?,
        expected: IDTokenExpectations
    ) async throws(AuthError) {
        if Self.secretAlgorithms.contains(algorithm) {
            // OIDC Core §10.1: the key is the octets of the UTF-8 client secret; `kid` names nothing.
            guard let secret = expected.clientSecret, !secret.isEmpty else {
                throw invalid("alg is \(algorithm), but the client has no secret to check it with")
            }
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            let key = SymmetricKey(data: Data(secret.utf8))
            let input = Data((parts.count == 3 ? parts[0] + "." + parts[1] : "").utf8)
            let hashBytes = algorithm == "HS512" ? 64 : algorithm == "HS384" ? 48 : 32
            if secret.utf8.count < hashBytes {
                // RFC 7518 §3.2 asks for a key as long as the hash; the secret is the server's choice.
                logger.warning(
                    "the client secret is shorter than \(algorithm) asks (RFC 7518 §3.2)",
                    metadata: ["bytes": "\(secret.utf8.count)", "wanted": "\(hashBytes)"])
            }
            guard parts.count == 3, let signature = Base64URL.decode(parts[2]) else {
                throw invalid("its signature is not base64url")
            }
            let valid =
                switch algorithm {
                case "HS384": HMAC<SHA384>.isValidAuthenticationCode(signature, authenticating: input, using: key)
                case "HS512": HMAC<SHA512>.isValidAuthenticationCode(signature, authenticating: input, using: key)
                default: HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key)
                }
            guard valid else { throw invalid("the signature does not verify with the client secret (\(algorithm))") }
            return
        }
        guard let jwks else {
            throw invalid("the provider's metadata has no jwks_uri, so the signature cannot be checked")
        }
        var key: JWK
        do {
            key = try await selectKey(jwks, algorithm: algorithm, keyID: keyID)
        } catch let error as AuthError {
            throw error
        } catch {
            throw invalid("its signing keys could not be loaded", underlying: error)
        }
        key.algorithm = JWK.Algorithm(rawValue: algorithm)
        key.keyIdentifier = JWKIdentifier(string: keyID ?? "nativeauth-only-key")
        do {
            let collection = JWTKeyCollection()
            try await collection.add(jwk: key)
            _ = try await collection.verify(token, as: SignatureOnly.self)
        } catch {
            throw invalid(
                "the signature does not verify with the JWKS key \(keyID.map { "kid \"\($0)\"" } ?? "without kid")"
                    + " (\(algorithm))",
                underlying: error
            )
        }
    }

    /// The key named by `kid` (refetching the JWKS once when it is unknown), or the only key of the
    /// algorithm's type when the token has no `kid`.
    private func selectKey(_ jwks: JWKSCache, algorithm: String, keyID: String?) async throws -> JWK {
        var (keys, generation) = try await jwks.keys(using: client)
        if let keyID {
            if let key = keys.first(where: { $0.keyIdentifier?.string == keyID }) {
                return try checked(key, keyID: keyID, algorithm: algorithm)
            }
            logger.debug("unknown kid: fetching the JWKS again", metadata: ["kid": "\(keyID)"])
            (keys, generation) = try await jwks.refetch(after: generation, using: client)
            if let key = keys.first(where: { $0.keyIdentifier?.string == keyID }) {
                return try checked(key, keyID: keyID, algorithm: algorithm)
            }
            throw invalid(
                "no key with kid \"\(keyID)\" in the JWKS at \(Redaction.scrubURL(jwks.url.absoluteString)),"
                    + " even after fetching it again"
            )
        }
        let candidates = keys.filter { Self.fits($0, algorithm: algorithm) }
        switch candidates.count {
        case 1:
            return candidates[0]
        case 0:
            throw invalid("it has no kid, and the JWKS has no key for \(algorithm)")
        default:
            throw invalid(
                "it has no kid, and the JWKS has \(candidates.count) keys for \(algorithm): the signing key is ambiguous"
            )
        }
    }

    /// The key named by `kid`, when its type, curve and own `alg` fit the token's algorithm (an
    /// RSA key is never used for ES256, nor a P-384 key for ES256: RFC 8725 §3.1).
    private func checked(_ key: JWK, keyID: String, algorithm: String) throws(AuthError) -> JWK {
        guard Self.fits(key, algorithm: algorithm) else {
            throw invalid(
                "the JWKS key with kid \"\(keyID)\" (\(key.keyType.rawValue)"
                    + "\(key.algorithm.map { ", alg \($0.rawValue)" } ?? "")) does not fit alg \(algorithm)")
        }
        return key
    }

    private static func fits(_ key: JWK, algorithm: String) -> Bool {
        if let declared = key.algorithm?.rawValue, declared != algorithm { return false }
        switch algorithm {
        case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512": return key.keyType == .rsa
        case "ES256": return key.keyType == .ecdsa && key.curve?.rawValue == "P-256"
        case "ES384": return key.keyType == .ecdsa && key.curve?.rawValue == "P-384"
        case "ES512": return key.keyType == .ecdsa && key.curve?.rawValue == "P-521"
        case "EdDSA": return key.keyType == .octetKeyPair && key.curve?.rawValue == "Ed25519"
        default: return false
        }
    }

    // MARK: - Claims

    /// Whether `issuer` is ``IDTokenValidationOptions/tenantIssuerTemplate`` with the token's own
    /// `tid` in it.
    private static func matchesTenantTemplate(
        _ issuer: String?,
        claims: JSONObject,
        options: IDTokenValidationOptions
    ) -> Bool {
        guard let template = options.tenantIssuerTemplate, template.contains("{tenantid}"), let issuer,
            let tenant = (try? claims.string("tid")) ?? nil, !tenant.isEmpty,
            tenant.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == ".")
            })
        else { return false }
        return issuer == template.replacingOccurrences(of: "{tenantid}", with: tenant)
    }

    private func checkClaims(
        _ claims: JSONObject,
        algorithm: String,
        expected: IDTokenExpectations
    ) throws(AuthError) {
        let issuer = try? claims.string("iss")
        if issuer != expected.issuer, !(issuer.map { options.issuerAliases.contains($0) } ?? false),
            !Self.matchesTenantTemplate(issuer, claims: claims, options: options)
        {
            if options.allowIssuerMismatch {
                logger.warning(
                    "ID token iss differs from the issuer (allowIssuerMismatch)",
                    metadata: ["iss": "\(issuer ?? "none")", "issuer": "\(expected.issuer)"])
            } else {
                let tenant = options.tenantIssuerTemplate.map { template in
                    " (nor \"\(template)\" with the token's tid \"\(((try? claims.string("tid")) ?? nil) ?? "(missing)")\")"
                }
                throw invalid(
                    "iss \"\(issuer ?? "(missing)")\" is not the issuer \"\(expected.issuer)\"" + (tenant ?? ""),
                    underlying: IdentityChanged())
            }
        }

        guard let subject = try? claims.string("sub"), !subject.isEmpty else { throw invalid("sub is missing") }
        if let previous = expected.previousSubject, subject != previous {
            throw invalid(
                "sub \"\(subject)\" is not the signed-in subject \"\(previous)\" (OIDC Core 12.2)",
                underlying: IdentityChanged())
        }

        let audiences: [String]
        if let single = try? claims.string("aud") {
            audiences = [single]
        } else if let list = try? claims.stringList("aud") {
            audiences = list
        } else {
            throw invalid("aud is missing")
        }
        let listed = "[" + audiences.joined(separator: ", ") + "]"
        guard audiences.contains(expected.clientID) else {
            throw invalid(
                "aud \(listed) does not contain the client id \"\(expected.clientID)\"", underlying: IdentityChanged())
        }
        let authorizedParty = try? claims.string("azp")
        if let authorizedParty, authorizedParty != expected.clientID {
            throw invalid(
                "azp \"\(authorizedParty)\" is not the client id \"\(expected.clientID)\"",
                underlying: IdentityChanged())
        }
        let untrusted = audiences.filter { $0 != expected.clientID && !options.trustedAudiences.contains($0) }
        if !untrusted.isEmpty {
            if options.allowUntrustedAudiences {
                logger.warning("ID token has untrusted extra audiences (allowUntrustedAudiences)")
            } else {
                throw invalid(
                    "aud \(listed) names audiences besides the client id \"\(expected.clientID)\" that are not"
                        + " trusted (\(untrusted.joined(separator: ", ")))"
                )
            }
        }
        if audiences.count > 1, authorizedParty == nil {
            throw invalid("aud \(listed) names several audiences, and azp is missing (OIDC Core 3.1.3.7)")
        }

        let leeway = options.leeway
        guard let expiry = try? claims.integer("exp") else { throw invalid("exp is missing") }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        if now.timeIntervalSince(expiresAt) > leeway {
            throw invalid(
                "exp \(Self.format(expiresAt)) is in the past (now \(Self.format(now)), leeway \(Int(leeway)) s)")
        }
        guard let issuedAtValue = try? claims.integer("iat") else { throw invalid("iat is missing") }
        let issuedAt = Date(timeIntervalSince1970: TimeInterval(issuedAtValue))
        if issuedAt.timeIntervalSince(now) > leeway {
            throw invalid(
                "iat \(Self.format(issuedAt)) is in the future (now \(Self.format(now)), leeway \(Int(leeway)) s)")
        }

        if let nonce = expected.nonce {
            guard let received = try? claims.string("nonce") else {
                throw invalid("nonce is missing, but one was sent with the authorization request")
            }
            guard ConstantTime.equals(received, nonce) else {
                throw invalid("nonce does not match the one sent with the authorization request")
            }
        }

        if let atHash = try? claims.string("at_hash"), let accessToken = expected.accessToken {
            guard let computed = Self.leftHalfHash(accessToken, algorithm: algorithm) else {
                throw invalid("at_hash cannot be computed for alg \(algorithm)")
            }
            guard ConstantTime.equals(atHash, computed) else {
                throw invalid("at_hash does not match the access token issued with it")
            }
        }

        if !expected.acrValues.isEmpty {
            // Asked for a way of signing in (step-up): the answer must say it was used.
            let acr = (try? claims.string("acr")) ?? nil
            guard let acr, expected.acrValues.contains(acr) else {
                throw invalid(
                    "acr is \(acr.map { "\"\(TerminalText.sanitized($0))\"" } ?? "missing"), not one of the acr_values"
                        + " asked for (\(expected.acrValues.joined(separator: " ")))")
            }
        }

        if let maxAge = expected.maxAge {
            guard let authTime = try? claims.integer("auth_time") else {
                throw invalid("auth_time is missing, but max_age \(maxAge) was requested")
            }
            let authenticatedAt = Date(timeIntervalSince1970: TimeInterval(authTime))
            if now.timeIntervalSince(authenticatedAt) > TimeInterval(maxAge) + leeway {
                throw invalid(
                    "auth_time \(Self.format(authenticatedAt)) is more than max_age \(maxAge) s ago"
                        + " (now \(Self.format(now)))"
                )
            }
        }
    }

    /// `at_hash`: the left half of the hash of the access token, base64url (OIDC Core §3.1.3.6),
    /// with the hash of the JWS algorithm (SHA-256 for RS256, PS256, ES256, HS256; SHA-384 and
    /// SHA-512 likewise); EdDSA over Ed25519 with SHA-512.
    static func leftHalfHash(_ value: String, algorithm: String) -> String? {
        let digest: [UInt8]
        switch algorithm {
        case "RS256", "PS256", "ES256", "HS256": digest = Array(SHA256.hash(data: Data(value.utf8)))
        case "RS384", "PS384", "ES384", "HS384": digest = Array(SHA384.hash(data: Data(value.utf8)))
        case "RS512", "PS512", "ES512", "HS512", "EdDSA": digest = Array(SHA512.hash(data: Data(value.utf8)))
        default: return nil
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private func invalid(_ reason: String, underlying: (any Error)? = nil) -> AuthError {
        AuthError(
            .idTokenInvalid,
            "the ID token is invalid: \(reason)",
            hint: "sign in again; if this persists, the provider's configuration or the client id is wrong",
            underlying: underlying
        )
    }
}

/// The mark of an ID token whose signature verified but which names another issuer, subject or
/// audience than expected: at refresh, tokens issued for someone else (OIDC Core §12.2).
package struct IdentityChanged: Error {}

extension AuthError {
    /// Whether this ID-token failure is a change of identity (``IdentityChanged``), not a passing
    /// problem such as clock skew or a key that cannot be loaded.
    package var isIdentityChange: Bool { underlying is IdentityChanged }
}

/// A payload type that lets jwt-kit check only the signature: the claims are checked separately.
private struct SignatureOnly: JWTPayload {
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
