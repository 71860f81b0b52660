import Foundation
import NIOConcurrencyHelpers
import NativeAuth
import TestSupport
import Testing

/// The shipped stores, presenters and mappers pass NativeAuthTesting's conformance suites, and the
/// suites catch implementations that break a promise: a suite that passed everything would prove
/// nothing.
@Suite(.testLogging) struct TokenStoreConformanceTests {
    @Test func theMemoryStoreConforms() async throws {
        let store = MemoryTokenStore()
        try await TokenStoreConformance { store }.run()
    }

    @Test func theFileStoreConforms() async throws {
        let directory = try TemporaryDirectory()
        // Each handle is a store of its own on the same directory, as two processes would have.
        try await TokenStoreConformance { FileTokenStore(directory: directory.path + "/store") }.run()
    }

    @Test func aStoreWithoutALockFails() async throws {
        let storage = MemoryTokenStore()
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await TokenStoreConformance { UnlockedStore(storage: storage) }.run()
        }
        let failures = failure?.failures ?? []
        #expect(failures.contains { $0.contains("must never overlap") }, "\(failures)")
        #expect(failures.contains { $0.contains("does not exclude") }, "\(failures)")
        #expect(!failures.contains { $0.contains("saved set must load back") }, "its storage is fine")
    }

    @Test func aStoreThatLosesFieldsOrKeysFails() async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await TokenStoreConformance { ForgetfulStore.shared }.run()
        }
        let failures = failure?.failures ?? []
        #expect(failures.contains { $0.contains("every field") }, "\(failures)")
        #expect(failures.contains { $0.contains("keys() must list") }, "\(failures)")
    }
}

/// A store that forgets to lock: its lock runs the body at once, whoever holds it.
private struct UnlockedStore: TokenStore {
    struct NoLock: TokenLock {
        var scope: TokenLockScope { .machine }  // and it claims to reach other processes
        func withLock<T: Sendable>(_ key: TokenKey, timeout: Duration, _ body: @Sendable () async throws -> T)
            async throws -> T
        { try await body() }
    }

    let storage: MemoryTokenStore
    var lock: NoLock { NoLock() }
    func load(_ key: TokenKey) async throws -> TokenSet? { await storage.load(key) }
    func save(_ tokens: TokenSet, for key: TokenKey) async throws { await storage.save(tokens, for: key) }
    func remove(_ key: TokenKey) async throws { await storage.remove(key) }
    func keys() async throws -> [TokenKey] { await storage.keys() }
}

/// A store that drops the ID token and never lists its keys.
private actor ForgetfulStore: TokenStore {
    static let shared = ForgetfulStore()
    private var items: [TokenKey: TokenSet] = [:]
    nonisolated let lock = InProcessTokenLock()

    func load(_ key: TokenKey) -> TokenSet? { items[key] }
    func save(_ tokens: TokenSet, for key: TokenKey) {
        var kept = tokens
        kept.idToken = nil
        items[key] = kept
    }
    func remove(_ key: TokenKey) { items[key] = nil }
    func keys() -> [TokenKey] { [] }
}

@Suite(.testLogging) struct PresenterConformanceTests {
    private static let quiet = ConsoleOutput { _ in }

    @Test func theLoopbackPresenterConforms() async throws {
        try await PresenterConformance(
            makePresenter: { LoopbackPresenter(configuration: .init(opener: nil, output: Self.quiet)) },
            deliver: PresenterConformance.loopbackBrowser,
            isReleased: PresenterConformance.loopbackPortIsFree
        ).run()
    }

    @Test func theManualPastePresenterConforms() async throws {
        try await PresenterConformance(
            makePresenter: {
                ManualPastePresenter(configuration: .init(reader: ScriptedLineReader(), output: Self.quiet))
            },
            deliver: PresenterConformance.pasteBrowser
        ).run()
    }

    @Test func theLoopbackAndPastePresenterConformsThroughEitherSide() async throws {
        for deliver in [PresenterConformance.loopbackBrowser, PresenterConformance.pasteBrowser] {
            try await PresenterConformance(
                makePresenter: {
                    LoopbackAndPastePresenter(configuration: .init(reader: ScriptedLineReader(), output: Self.quiet))
                },
                deliver: deliver,
                isReleased: PresenterConformance.loopbackPortIsFree
            ).run()
        }
    }

    @Test func aPresenterThatIgnoresCancellationAndTakesTheFirstCallbackFails() async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await PresenterConformance(
                makePresenter: { HastyPresenter() },
                deliver: { callback, presenter in (presenter as? HastyPresenter)?.inbox.feed(callback.absoluteString) }
            ).run()
        }
        let failures = failure?.failures ?? []
        #expect(failures.contains { $0.contains("localhost") }, "\(failures)")
        #expect(failures.contains { $0.contains("after an ignored callback the wait must go on") }, "\(failures)")
        #expect(failures.contains { $0.contains("must make authorize throw it") }, "\(failures)")
        #expect(failures.contains { $0.contains("cancelling the task must end the wait") }, "\(failures)")
    }
}

/// A presenter that breaks three promises: its redirect URI says `localhost`, it ends the wait
/// with the first callback whatever the handler says, and it ignores cancellation.
private struct HastyPresenter: UserAgentPresenter {
    let inbox = ScriptedLineReader()

    func beginSession() async throws -> any UserAgentSession { Session(inbox: inbox) }

    struct Session: UserAgentSession {
        let inbox: ScriptedLineReader
        var redirectURI: URL { URL(string: "http://localhost:8400/callback") ?? URL(fileURLWithPath: "/") }

        func authorize<Outcome: Sendable>(
            _ authorizationURL: URL,
            handler: @escaping @Sendable (AuthorizationCallback) -> CallbackDisposition<Outcome>
        ) async throws -> Outcome {
            // Reads on in a task of its own, so cancelling the caller changes nothing.
            let line = try await Task { try await inbox.readLine() }.value
            if let line, let url = URL(string: line) { _ = handler(.redirect(url)) }
            // Longer than the suite gives a cancelled wait (10 s).
            if line?.contains("waiting") == true { try await Task { try await Task.sleep(for: .seconds(20)) }.value }
            // Whatever the handler said (the suite's outcomes are authorization responses).
            guard let taken = AuthorizationResponse(code: "taken", issuer: nil) as? Outcome else {
                throw AuthError(.loginCancelled, "not a sign-in")
            }
            return taken
        }

        func close() async {}
    }
}

@Suite(.testLogging) struct ErrorMapperConformanceTests {
    @Test func theStandardMapperConforms() throws {
        try ErrorMapperConformance(StandardErrorMapper()).run()
    }

    @Test func aMapperThatReturnsNilConforms() throws {
        struct Nothing: ErrorMapper { func map(_ failure: AuthFailure) -> AuthError? { nil } }
        try ErrorMapperConformance(Nothing()).run()
    }

    @Test func aMapperThatGuessesAndQuotesTheBodyFails() throws {
        /// Maps every failure with a body to login_required, quoting the body.
        struct CarelessMapper: ErrorMapper {
            func map(_ failure: AuthFailure) -> AuthError? {
                let body = failure.body.map { String(decoding: $0, as: UTF8.self) } ?? "no body"
                return AuthError(.loginRequired, "failed: \(body)")
            }
        }
        let failure = #expect(throws: ConformanceFailure.self) { try ErrorMapperConformance(CarelessMapper()).run() }
        let failures = failure?.failures ?? []
        #expect(failures.contains { $0.contains("nobody's own") }, "\(failures)")
        #expect(failures.contains { $0.contains("must not ask for a sign-in") }, "\(failures)")
        #expect(failures.contains { $0.contains("must stay retryable") }, "\(failures)")
        #expect(failures.contains { $0.contains("kept unchanged in oauthError") }, "\(failures)")
    }
}
