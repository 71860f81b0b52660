public import Foundation
public import HTTPTypes
internal import Logging
internal import Tracing

/// The one path of every request sent with an access token: the sign-in's own requests
/// (``Authenticator/send(_:body:for:stepUpWith:streamingTo:)``), the resource-first client's, an
/// OpenAPI client's operations (NativeAuthOpenAPI), and any stack an adapter brings.
///
/// ```swift
/// let sender = authenticator.sender(for: .signIn, stepUpWith: presenter)
/// let (response, body) = try await sender.send(request, body: body) { body in
///     try await body.collect(upTo: 1 << 20)        // the bytes of an answer acted on
/// } next: { request, body in
///     try await myStack.execute(request, body)     // the rest of the app's stack
/// }
/// ```
///
/// It has the shape of swift-openapi-runtime's `ClientMiddleware`: the request, its body and the
/// rest of the stack (`next`) go in, the answer comes out. Each attempt goes through `next` with the
/// `Authorization` header (and DPoP proof) set, and may be made again, with the same body, so the
/// body must be one the stack can send twice. Each answer is read once (its `WWW-Authenticate`
/// challenges) and acted on:
///
/// - a DPoP proof the server refuses (`use_dpop_nonce`, `invalid_dpop_proof`) gets one new proof,
///   with the server's nonce;
/// - a refused token gets one new token: a refresh of the sign-in's, one refresh however many
///   callers and processes wait (and none when it changed since the request was sent), or another
///   token for a resource;
/// - a 401 that names the API's protected resource metadata (RFC 9728) is followed once, when the
///   configuration says so (``ProviderConfiguration/followsResourceMetadata``);
/// - a request for a stronger or more recent sign-in, or for a scope the token lacks, is stepped up
///   as the operation's ``StepUpPlan`` says when the sender has a presenter (one sign-in for every
///   caller that meets it at once), and is an error otherwise;
/// - every other answer is the app's, whatever its status.
///
/// A success is never sent again. The bytes of an answer that is acted on rather than returned (a
/// refusal, for its error) come from `read`.
public struct TokenSender: Sendable {
    /// Whose token the requests carry, and where they may go.
    public var target: TokenTarget
    /// Where a step-up's sign-in is shown; `nil`: a request for a stronger sign-in or more scopes
    /// is an error (``AuthError/Code/stepUpRequired``, ``AuthError/Code/insufficientScope``).
    public var stepUpPresenter: (any UserAgentPresenter)?
    /// Whose tokens they are.
    public let authenticator: Authenticator

    init(authenticator: Authenticator, target: TokenTarget, stepUpPresenter: (any UserAgentPresenter)?) {
        self.authenticator = authenticator
        self.target = target
        self.stepUpPresenter = stepUpPresenter
    }

    /// Sends `request` with `body` through `next` with the access token of ``target``, and acts on
    /// the answers (see the type's discussion).
    ///
    /// - Parameters:
    ///   - request: The request; its `Authorization` (and `DPoP`) header is set here.
    ///   - body: Its body, handed to `next` on every attempt.
    ///   - read: The bytes of an answer's body that is acted on (for its error, or before a retry).
    ///   - next: Sends a request through the rest of the stack.
    /// - Returns: The answer to deliver, with its body as `next` gave it.
    /// - Throws: ``AuthError``: ``AuthError/Code/invalidToken`` when a new token is refused too,
    ///   ``AuthError/Code/stepUpRequired`` or ``AuthError/Code/insufficientScope`` when the API asks
    ///   for more than a sign-in gave, ``AuthError/Code/loginRequired`` when no token can be had,
    ///   ``AuthError/Code/configurationInvalid`` for a request outside the target's
    ///   ``TokenTarget/bound``; whatever `next` throws, as it is.
    public func send<RequestBody: Sendable, ResponseBody: Sendable>(
        _ request: HTTPRequest, body: RequestBody,
        reading read: @Sendable (ResponseBody) async throws -> Data,
        next: @Sendable (HTTPRequest, RequestBody) async throws -> (HTTPResponse, ResponseBody)
    ) async throws -> (HTTPResponse, ResponseBody) {
        try target.check(request.url)
        let client = authenticator.client
        let holder = authenticator.holder
        var target = authenticator.discovered(target, for: request.url)
        // Borrowed tokens are signed in for where the agent runs: nothing to step up here.
        let stepsUp = stepUpPresenter != nil && holder.stored != nil
        // The sign-in the request goes with: a step-up asks for more than it holds, and is no new
        // sign-in when another caller's step-up replaced it meanwhile.
        let sentWith = stepsUp ? try await holder.current() : nil
        var plan = StepUpPlan()
        var attempt = ResourceRetry.Attempt(followsResourceMetadata: follows(target))
        var credential = try await holder.credential(for: target, minimumValidity: 60)
        var newProofPending = false
        while true {
            // A proof signed elsewhere (by a token agent) for a DPoP-bound token; nothing for a bearer one.
            let proof =
                credential.isDPoPBound
                ? try await holder.proof(
                    for: request, credential: credential, nonce: request.url.flatMap(client.dpopNonces.nonce(for:)))
                : nil
            let authorized = try client.authorized(request, credential: credential, proof: proof)
            let (response, answerBody): (HTTPResponse, ResponseBody)
            if newProofPending {
                // The one retry with a new proof (and the server's nonce): a span of its own.
                newProofPending = false
                (response, answerBody) = try await client.instruments.span(
                    "nativeauth.dpop_nonce_retry", kind: .client
                ) {
                    $0.set(TraceSpan.Attribute.server, "resource")
                    return try await next(authorized, body)
                }
            } else {
                (response, answerBody) = try await next(authorized, body)
            }
            let answer = try client.answer(to: response, of: request, credential: credential)
            let step = ResourceRetry.next(after: answer, attempt)
            guard step != .deliver else { return (response, answerBody) }
            // Read whole: for the error it may become, and so that a retry does not leave it unread.
            let data = try await read(answerBody)
            switch step {
            case .deliver:
                return (response, answerBody)
            case .newProof:
                attempt.newProofSent = true
                newProofPending = true
                client.instruments.count(Instruments.Metric.dpopRetries, [("server", "resource")])
                client.logger.debug(
                    "the resource server refused the DPoP proof; sending a new one",
                    metadata: ["error": "\(answer.challenge?.error ?? "")"])
            case .newToken:
                attempt.newTokenSent = true
                guard try await holder.renew(target, refused: credential.accessToken) else {
                    throw client.refusedToken(response, data, answer)
                }
                credential = try await holder.credential(for: target, minimumValidity: 60)
            case .followResourceMetadata:
                target = target.carrying(try await authenticator.follow(request, answer))
                attempt = ResourceRetry.Attempt(followsResourceMetadata: false)
                credential = try await holder.credential(for: target, minimumValidity: 60)
            case .fail(let failure):
                let error = client.refusal(failure, response, data, answer)
                guard stepsUp, let presenter = stepUpPresenter else { throw error }
                // After the step-up, what it granted; before, what the refused request held.
                let held = plan.steppedUp ? try await holder.current()?.scopes : sentWith?.scopes
                switch plan.next(after: error, held: held ?? []) {
                case .stop(let final):
                    throw final
                case .signIn(let scopes, let options):
                    try await authenticator.signInAgain(
                        since: sentWith?.accessToken, reason: error.code, presenter: presenter, scopes: scopes,
                        options: options)
                    attempt = ResourceRetry.Attempt(followsResourceMetadata: follows(target))
                    credential = try await holder.credential(for: target, minimumValidity: 60)
                }
            }
        }
    }

    /// Whether 401s may be followed to the API's resource metadata: for the sign-in's own token,
    /// when the configuration says so.
    private func follows(_ target: TokenTarget) -> Bool {
        target.resource == nil && authenticator.provider.configuration.followsResourceMetadata
    }
}

extension ExchangeClient {
    /// The error a failed send ends with.
    func refusal(
        _ failure: ResourceRetry.Failure, _ response: HTTPResponse, _ body: Data, _ answer: ResourceAnswer
    ) -> AuthError {
        switch failure {
        case .tokenRefused:
            return refusedToken(response, body, answer)
        case .stepUp(let options):
            return AuthError.stepUp(options, challenge: answer.challenge, status: Int(response.status.code))
        case .scopeMissing:
            return answer.carryingNamedScopes(
                self.error(
                    for: AuthFailure(
                        operation: .apiRequest, response: response, body: body, challenge: answer.challenge)))
        case .nonceMissing:
            return DPoPNonces.missingNonce(operation: .apiRequest, status: Int(response.status.code))
        }
    }

    /// The error of an answer that asks for a stronger sign-in or a scope the token lacks, as the
    /// sender reads it (for a stack that acts on its own answers); `nil` for any other answer.
    package func stepUpRefusal(_ response: HTTPResponse) -> AuthError? {
        let answer = ResourceAnswer(response)
        switch ResourceRetry.next(after: answer, ResourceRetry.Attempt(followsResourceMetadata: false)) {
        case .fail(let failure) where failure != .tokenRefused && failure != .nonceMissing:
            return refusal(failure, response, Data(), answer)
        default:
            return nil
        }
    }

    /// A 401 as ``AuthError/Code/invalidToken``, in the provider's words when it has some.
    func refusedToken(_ response: HTTPResponse, _ body: Data, _ answer: ResourceAnswer) -> AuthError {
        let error = self.error(
            for: AuthFailure(operation: .apiRequest, response: response, body: body, challenge: answer.challenge))
        guard error.code != .invalidToken else { return error }
        return AuthError(
            .invalidToken,
            "the server refused the access token",
            hint: "sign in again",
            operation: .apiRequest,
            status: 401,
            oauthError: error.oauthError
        )
    }
}
