public import Foundation
public import HTTPTypes
public import LenientJSON

/// Reads token endpoint responses (RFC 6749 §5.1 and §5.2) into ``TokenSet``s.
public enum TokenResponseDecoder {
    /// What the decoder needs besides the response.
    public struct Context: Sendable {
        /// ``AuthOperation/tokenExchange`` or ``AuthOperation/refresh``.
        public var operation: AuthOperation
        /// The scopes asked for: the granted scopes when the response has no `scope` (§5.1).
        public var requestedScopes: [String]
        /// When the response arrived; `expires_in` counts from here.
        public var receivedAt: Date
        /// The tokens being refreshed, if any: their refresh token is kept when the response has none.
        public var previous: TokenSet?

        /// Creates a context.
        public init(operation: AuthOperation, requestedScopes: [String], receivedAt: Date, previous: TokenSet? = nil) {
            self.operation = operation
            self.requestedScopes = requestedScopes
            self.receivedAt = receivedAt
            self.previous = previous
        }
    }

    /// Decodes a JSON token response. Any HTTP error, an `error` member (also with HTTP 200), a body
    /// that is not a JSON object, or a missing `access_token` goes through `errorMapper`.
    public static func decodeJSON(
        _ response: HTTPResponse,
        body: Data,
        context: Context,
        errorMapper: any ErrorMapper
    ) throws(AuthError) -> TokenSet {
        try decodeSuccessful(
            response,
            body: body,
            operation: context.operation,
            requiredKey: "access_token",
            errorMapper: errorMapper
        ) { object in try decode(object, context: context) }
    }

    /// The shared path of the token and device endpoints' answers: an HTTP error, a body `parse`
    /// cannot turn into an object, an `error` member (also with HTTP 200) or a failure of `build`
    /// goes through `errorMapper`, with the OAuth error read from the parsed body.
    ///
    /// - Parameters:
    ///   - response: The endpoint's response.
    ///   - body: Its body.
    ///   - operation: What the request was for, for errors.
    ///   - requiredKey: The member a successful answer must have, named when the body is no object.
    ///   - errorMapper: The provider's error mapper.
    ///   - parse: Turns the body into an object; default JSON. A provider whose server answers in
    ///     another encoding (GitHub's form-encoded bodies) passes its own.
    ///   - build: Reads the members of a successful answer.
    /// - Returns: What `build` made.
    /// - Throws: ``AuthError`` from `errorMapper`, or one that `build` threw.
    public static func decodeSuccessful<T>(
        _ response: HTTPResponse,
        body: Data,
        operation: AuthOperation,
        requiredKey: String,
        errorMapper: any ErrorMapper,
        parse: (Data) throws -> JSONObject? = { try JSONValue.parse($0).objectValue },
        build: (JSONObject) throws -> T
    ) throws(AuthError) -> T {
        func failure(_ object: JSONObject?, _ underlying: (any Error)? = nil) -> AuthError {
            var failure = AuthFailure(operation: operation, response: response, body: body, underlying: underlying)
            if let object, let oauthError = OAuthErrorResponse(json: object) { failure.oauthError = oauthError }
            return errorMapper.mapWithFallback(failure)
        }
        guard (200..<300).contains(response.status.code) else { throw failure(try? parse(body)) }
        let object: JSONObject
        do {
            guard let parsed = try parse(body) else {
                throw failure(nil, JSONFieldError(key: requiredKey, problem: .missing))
            }
            object = parsed
        } catch let error as AuthError {
            throw error
        } catch {
            throw failure(nil, error)
        }
        if OAuthErrorResponse(json: object) != nil { throw failure(object) }
        do {
            return try build(object)
        } catch let error as AuthError {
            throw error
        } catch {
            throw failure(object, error)
        }
    }

    /// The longest `expires_in` taken as given: 100 years. A larger one (a server's bug, or
    /// `9223372036854775807`) is read as this, so that the expiry stays a date that can be stored
    /// and shown.
    static let longestLifetime: Int64 = 100 * 365 * 24 * 3600

    /// Builds a token set from the members of a successful response (JSON, or form fields turned
    /// into an object by a provider such as GitHub).
    ///
    /// - `access_token` is required; `token_type` defaults to `Bearer`.
    /// - `expires_in` may be a number or a numeric string; it becomes an absolute ``TokenSet/expiresAt``
    ///   (at most 100 years away).
    /// - `scope` may be space- or comma-separated, or an array; absent means the requested scopes.
    /// - Without `refresh_token`, the previous refresh token is kept (refresh responses of Cognito
    ///   and others).
    public static func decode(_ object: JSONObject, context: Context) throws(JSONFieldError) -> TokenSet {
        let accessToken = try object.requiredString("access_token")
        var expiresAt: Date?
        if let expiresIn = try object.integer("expires_in") {
            let seconds = min(max(0, expiresIn), Self.longestLifetime)
            expiresAt = context.receivedAt.addingTimeInterval(TimeInterval(seconds))
        }
        let idToken = try object.string("id_token") ?? nil
        let claims = idToken.flatMap(UnverifiedClaims.init(jwt:))
        let previous = context.previous
        return TokenSet(
            accessToken: accessToken,
            tokenType: try object.string("token_type") ?? "Bearer",
            refreshToken: try object.string("refresh_token") ?? previous?.refreshToken,
            idToken: idToken ?? previous?.idToken,
            scopes: try object.stringList("scope") ?? context.requestedScopes,
            expiresAt: expiresAt,
            issuedAt: context.receivedAt,
            subject: claims?.subject ?? previous?.subject,
            displayName: claims?.displayName ?? previous?.displayName
        )
    }
}
