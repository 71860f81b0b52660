internal import Foundation

/// What to do when an API refuses a request for want of a stronger or more recent sign-in, or of
/// a scope: the one decision of every step-up, as a value.
///
/// ``TokenSender`` (and so ``Authenticator/send(_:body:for:stepUpWith:streamingTo:)``), the
/// ``ResourceClient`` and NativeAuthMCP's authorizer each keep one plan per operation, and perform
/// the step it returns:
///
/// - An API that asks for a stronger or more recent sign-in (``AuthError/Code/stepUpRequired``
///   with ``AuthError/stepUp`` options) gets one sign-in with those options and the scopes held.
/// - An API that lacks a scope (``AuthError/Code/insufficientScope``) gets one sign-in for the
///   union of the scopes held and those it names (``AuthError/missingScopes``), else those the
///   resource lists; when it names none the sign-in lacks, no sign-in can help, and the refusal
///   stands.
/// - After one step-up, a second refusal is the answer, never a loop: for want of a scope again, it
///   says which scopes the sign-in asked for and which were granted.
///
/// ```swift
/// var plan = StepUpPlan()
/// switch plan.next(after: error, held: tokens.scopes) {
/// case .signIn(let scopes, let options): // sign in again with them, then send once more
/// case .stop(let error): throw error
/// }
/// ```
public struct StepUpPlan: Sendable, Equatable {
    /// What to do after a refusal.
    public enum Step: Sendable {
        /// Sign in again asking for `scopes` (empty: the configuration's) with `options`, then
        /// send the request once more.
        case signIn(scopes: [String], options: LoginOptions)
        /// Stop: the error is the answer.
        case stop(AuthError)
    }

    /// The scopes this operation's step-up asked for; `nil` before one.
    public private(set) var asked: [String]?
    /// Whether this operation stepped up already.
    public private(set) var steppedUp = false
    /// The most scopes a step-up asks for: a challenge naming more is read as hostile, and refused.
    public static let maximumScopes = 64

    /// A plan for an operation that has not stepped up.
    public init() {}

    /// The step after `error`, the API's refusal of the operation: a sign-in when one can help
    /// and none was made for this operation, else the error to end with. A sign-in it returns is
    /// recorded, so that the next refusal stops.
    ///
    /// - Parameters:
    ///   - error: How the API refused (as the sender reads its answer).
    ///   - held: The scopes the sign-in holds.
    ///   - listed: The scopes the resource lists (RFC 9728 `scopes_supported`), asked for when a
    ///     refusal for want of a scope names none.
    public mutating func next(after error: AuthError, held: [String], listed: [String]? = nil) -> Step {
        switch error.code {
        case .stepUpRequired:
            guard !steppedUp, let options = error.stepUp else { return .stop(error) }
            steppedUp = true
            return .signIn(scopes: held, options: options)
        case .insufficientScope:
            if steppedUp { return .stop(asked.map { Self.stillLacking(error, asked: $0, held: held) } ?? error) }
            let wanted = error.missingScopes ?? listed ?? []
            var union = held
            for scope in wanted where !union.contains(scope) { union.append(scope) }
            guard union.count > held.count, union.count <= Self.maximumScopes else { return .stop(error) }
            steppedUp = true
            asked = union
            return .signIn(scopes: union, options: LoginOptions())
        default:
            return .stop(error)
        }
    }

    /// A second refusal for want of a scope, after a sign-in that asked for `asked`.
    private static func stillLacking(_ error: AuthError, asked: [String], held: [String]) -> AuthError {
        var again = error
        again.message =
            "the API still lacks a scope: still refused after a sign-in for "
            + TerminalText.sanitized(asked.joined(separator: " ")) + ", not asking again (granted: "
            + TerminalText.sanitized(held.joined(separator: " ")) + ")"
        again.hint =
            "the server did not grant what the API asks for; the account or the client may not be allowed it"
        return again
    }
}
