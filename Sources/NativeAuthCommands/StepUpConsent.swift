internal import Foundation
@_spi(Provider) internal import NativeAuth
internal import NativeAuthPresenters

/// Whether `api` signs in again when the API asks for more than the token carries (a scope it
/// lacks, a stronger or more recent sign-in), and how the person agrees to it.
enum StepUpConsent: Sendable, Equatable {
    /// The API's refusal is the answer: no second sign-in.
    case never
    /// Agreed beforehand (`--step-up`): the browser opens without a question.
    case given
    /// Asked on the terminal first; only yes opens the browser.
    case ask

    /// The consent for one command: `given` with `--step-up`; else `ask` when a person can answer
    /// (standard input and standard error are a terminal, and the request's body is not read
    /// from standard input); else `never`.
    static func of(flag: Bool, bodyFromStandardInput: Bool) -> StepUpConsent {
        if flag { return .given }
        return CommandSupport.canAsk(bodyFromStandardInput: bodyFromStandardInput) ? .ask : .never
    }

    /// Whether the sign-in again may start: `false` for `never`, `true` for `given`, the person's
    /// answer for `ask` (no throws `AuthError.Code.loginCancelled`, which says how to agree
    /// beforehand).
    func agrees() async throws -> Bool {
        switch self {
        case .never: return false
        case .given: return true
        case .ask:
            try await Self.ask()
            return true
        }
    }

    /// Asks on the terminal; a no ends the sign-in with `AuthError.Code.loginCancelled`.
    static func ask() async throws {
        guard
            try await CommandSupport.answersYes(
                "The API asks for a new sign-in for this request. Sign in again in the browser?")
        else {
            throw AuthError(
                .loginCancelled, "no new sign-in: the request was not sent again",
                hint: "give --step-up to sign in again without the question")
        }
    }

    /// The presenter of the sign-in again (the loopback one, on `port`: 0 for any), asking first
    /// when that is the consent; `nil` for `never`.
    func presenter(port: Int) -> (any UserAgentPresenter)? {
        let loopback = LoopbackPresenter(
            configuration: .init(port: port, timeout: .seconds(300), opener: SystemBrowserOpener()))
        switch self {
        case .never: return nil
        case .given: return loopback
        case .ask: return AskingPresenter(loopback)
        }
    }
}

/// A presenter that asks on the terminal before its session starts (before a port is bound or a
/// browser opened); no ends the sign-in with `AuthError.Code.loginCancelled`.
struct AskingPresenter: UserAgentPresenter {
    private let wrapped: any UserAgentPresenter

    init(_ wrapped: any UserAgentPresenter) {
        self.wrapped = wrapped
    }

    func beginSession() async throws -> any UserAgentSession {
        try await StepUpConsent.ask()
        return try await wrapped.beginSession()
    }
}

extension CommandSupport {
    /// Whether a person can answer a question: standard input and standard error are a terminal,
    /// and the request's body is not read from standard input.
    static func canAsk(bodyFromStandardInput: Bool) -> Bool {
        isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 && !bodyFromStandardInput
    }

    /// Asks `question` on standard error with `[y/N]`; whether the line typed within two minutes
    /// is y or yes.
    static func answersYes(_ question: String) async throws -> Bool {
        try await TerminalQuestion(question).isYesOnStandardInput()
    }
}
