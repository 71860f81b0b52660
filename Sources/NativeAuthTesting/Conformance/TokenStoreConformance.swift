import Foundation
import LenientJSON
import NIOConcurrencyHelpers
public import NativeAuth

/// Checks that a `TokenStore` and its lock keep every promise of the protocol, in one
/// line of a test:
///
/// ```swift
/// @Test func theStoreConforms() async throws {
///     let directory = try makeTemporaryDirectory()
///     try await TokenStoreConformance { FileTokenStore(directory: directory) }.run()
/// }
/// ```
///
/// `makeStore` is called several times, and each call must return a handle to the **same**
/// storage (for a store that keeps nothing outside itself, such as `MemoryTokenStore`, the same
/// instance): what one handle saves, another loads, and their locks keep each other out. The
/// suite uses keys of its own, so the storage need not be empty.
///
/// What it checks, each failure named in the ``ConformanceFailure`` that ``run()`` throws:
/// - a key that was never saved loads as `nil`; a saved set loads back equal, every field (its DPoP
///   key among them); a save
///   replaces; `remove` removes, and removing nothing is not an error; a client registration's
///   record (`TokenSet.clientRegistration`, without an access token) loads back equal;
/// - keys that differ only in issuer, client id or account (including characters such as `/`,
///   spaces and non-ASCII) keep their sets apart, and `keys()` lists exactly the saved ones;
/// - another handle sees what one saved;
/// - concurrent saves and loads: every load returns one of the saved sets, never a mixture;
/// - a store that names revisions (`revision(of:)` not `nil`): the revision changes with every save
///   and removal, at once for the handle that made the change and within 5 s for another handle
///   (a store kept current by notifications), and stays the same while nothing changes;
/// - the lock: holders of one key never overlap, across handles too; holders of another key do
///   not wait; a wait gives up after its timeout with `token_store_failed`; a waiting task that is
///   cancelled stops waiting; the lock is free again after a body throws.
public struct TokenStoreConformance: Sendable {
    private let makeStore: @Sendable () async throws -> any TokenStore

    /// Creates the suite.
    ///
    /// - Parameter makeStore: Returns a handle to the storage under test; every call a handle to
    ///   the same storage.
    public init(_ makeStore: @escaping @Sendable () async throws -> any TokenStore) {
        self.makeStore = makeStore
    }

    /// Runs every check.
    ///
    /// - Throws: ``ConformanceFailure`` listing every requirement the store failed.
    public func run() async throws {
        let first = try await makeStore()
        let second = try await makeStore()
        let report = ConformanceReport(
            "TokenStore \(type(of: first)) (lock \(type(of: first.lock)), \(first.lock.scope))")
        let run = UUID().uuidString
        await report.run("storage") { try await checkStorage(first, second, run: run, report: report) }
        await report.run("keys") { try await checkKeys(first, run: run, report: report) }
        await report.run("revisions") { try await checkRevisions(first, second, run: run, report: report) }
        await report.run("atomic saves") { try await checkAtomicSaves(first, second, run: run, report: report) }
        await report.run("lock exclusion") { try await checkExclusion(first, second, run: run, report: report) }
        await report.run("lock per key") { try await checkPerKey(first, second, run: run, report: report) }
        await report.run("lock timeout") { try await checkTimeout(first, second, run: run, report: report) }
        await report.run("lock cancellation") { try await checkCancellation(first, second, run: run, report: report) }
        await report.run("lock after a throw") { try await checkReleaseOnThrow(first, run: run, report: report) }
        try report.finish()
    }

    // MARK: - Storage

    private static let issued = Date(timeIntervalSince1970: 1_800_000_000.123)

    /// A DPoP key every full set holds: a store keeps it with the tokens (`dpop_key`).
    private static let dpopKey = try? DPoPKey.generate()

    private static func fullSet(_ marker: String) -> TokenSet {
        var tokens = TokenSet(
            accessToken: "conformance-access-\(marker)",
            tokenType: "DPoP",
            refreshToken: "conformance-refresh-\(marker)",
            idToken: "conformance.id.\(marker)",
            scopes: ["openid", "email", "offline_access"],
            expiresAt: issued.addingTimeInterval(3599.5),
            issuedAt: issued,
            subject: "subject-\(marker)",
            displayName: "Ünïcode Name \(marker)"
        )
        tokens.dpopKey = dpopKey
        return tokens
    }

    private static func minimalSet(_ marker: String) -> TokenSet {
        TokenSet(accessToken: "conformance-minimal-\(marker)", issuedAt: issued)
    }

    private func checkStorage(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: "storage")
        report.check(try await first.load(key) == nil, "a key that was never saved must load as nil")
        let full = Self.fullSet("a")
        try await first.save(full, for: key)
        report.check(try await first.load(key) == full, "a saved set must load back equal, every field")
        report.check(try await second.load(key) == full, "another handle must load what one handle saved")
        let minimal = Self.minimalSet("b")
        try await first.save(minimal, for: key)
        report.check(try await first.load(key) == minimal, "a save must replace the set stored before")
        let registration = try ClientRegistration(storageJSON: [
            "client_id": "conformance-client", "client_secret": "conformance-secret",
            "client_secret_expires_at": 1_800_003_600, "registration_endpoint": "https://conformance.example/register",
            "requested": "{}",
        ]).record(at: Self.issued)
        try await first.save(registration, for: key)
        report.check(
            try await second.load(key) == registration,
            "a client registration's record (TokenSet.clientRegistration, no access token) must load back equal")
        try await first.remove(key)
        report.check(try await first.load(key) == nil, "a removed key must load as nil")
        report.check(try await second.load(key) == nil, "a key removed through one handle must be gone for the others")
        do {
            try await first.remove(key)
        } catch {
            report.fail("removing a key that holds nothing must not be an error; it threw \(error)")
        }
    }

    private func checkKeys(_ store: any TokenStore, run: String, report: ConformanceReport) async throws {
        let base = TokenKey(issuer: "https://conformance.example/\(run)/keys", clientID: "client", account: "default")
        let keys = [
            base,
            TokenKey(issuer: base.issuer + "/other", clientID: base.clientID, account: base.account),
            TokenKey(issuer: base.issuer, clientID: "client 2/ü", account: base.account),
            TokenKey(issuer: base.issuer, clientID: base.clientID, account: "work account/ñ"),
        ]
        for (index, key) in keys.enumerated() { try await store.save(Self.fullSet("key-\(index)"), for: key) }
        for (index, key) in keys.enumerated() {
            report.check(
                try await store.load(key) == Self.fullSet("key-\(index)"),
                "keys that differ only in issuer, client id or account must keep their sets apart (\(key))")
        }
        let listed = Set(try await store.keys()).filter { $0.issuer.hasPrefix(base.issuer) }
        report.check(listed == Set(keys), "keys() must list every saved key exactly; it listed \(listed.count) of 4")
        try await store.remove(keys[1])
        let after = Set(try await store.keys()).filter { $0.issuer.hasPrefix(base.issuer) }
        report.check(after == Set(keys).subtracting([keys[1]]), "keys() must not list a removed key")
        for key in keys { try await store.remove(key) }
    }

    private func checkRevisions(
        _ first: any TokenStore, _ second: any TokenStore, run: String, report: ConformanceReport
    ) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)/revisions", clientID: "client")
        guard let empty = try await first.revision(of: key) else { return }  // the store cannot tell
        report.check(try await first.revision(of: key) == empty, "a revision must stay the same while nothing changes")
        try await first.save(Self.fullSet("revision-0"), for: key)
        let own = try await first.revision(of: key)
        report.check(own != empty, "a save must change the revision of the handle that saved, at once")
        try await second.save(Self.fullSet("revision-1"), for: key)
        let saved = try await Self.revision(of: key, in: first, changedFrom: own)
        report.check(saved != own, "a save through another handle must change the revision (within 5 s)")
        try await second.save(Self.fullSet("revision-2"), for: key)
        let resaved = try await Self.revision(of: key, in: first, changedFrom: saved)
        report.check(resaved != saved, "every save must change the revision (within 5 s)")
        try await second.remove(key)
        let removed = try await Self.revision(of: key, in: first, changedFrom: resaved)
        report.check(removed != resaved, "a removal must change the revision (within 5 s)")
        report.check(try await first.revision(of: key) == removed, "a revision must stay the same after a removal")
    }

    /// `store`'s revision of `key` once it differs from `old`, or after 5 s. A store whose
    /// revisions another handle's change reaches by notification (PostgreSQL's `NOTIFY`) sees the
    /// change a moment later; one that reads them sees it at once.
    private static func revision(
        of key: TokenKey, in store: any TokenStore, changedFrom old: TokenStoreRevision?
    ) async throws -> TokenStoreRevision? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let revision = try await store.revision(of: key)
            if revision != old || ContinuousClock.now >= deadline { return revision }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    private func checkAtomicSaves(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: "atomic")
        let sets = (0..<8).map { Self.fullSet("atomic-\($0)") }
        try await first.save(sets[0], for: key)
        let seen = try await withThrowingTaskGroup(of: [TokenSet?].self) { group in
            for (index, tokens) in sets.enumerated() {
                let store = index % 2 == 0 ? first : second
                group.addTask {
                    try await store.save(tokens, for: key)
                    var loads: [TokenSet?] = []
                    for _ in 0..<4 { loads.append(try await store.load(key)) }
                    return loads
                }
            }
            return try await group.reduce(into: [TokenSet?]()) { $0 += $1 }
        }
        let torn = seen.filter { loaded in !sets.contains { $0 == loaded } }
        report.check(torn.isEmpty, "concurrent saves must leave one whole saved set; \(torn.count) loads saw another")
        try await first.remove(key)
    }

    // MARK: - The lock

    private func checkExclusion(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: "lock")
        let state = NIOLockedValueBox((inside: 0, overlaps: 0, done: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<12 {
                let lock = index % 2 == 0 ? first.lock : second.lock
                group.addTask {
                    try await lock.withLock(key, timeout: .seconds(30)) {
                        state.withLockedValue { state in
                            if state.inside > 0 { state.overlaps += 1 }
                            state.inside += 1
                        }
                        try await Task.sleep(for: .milliseconds(5))
                        state.withLockedValue { state in
                            state.inside -= 1
                            state.done += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let (_, overlaps, done) = state.withLockedValue { $0 }
        report.check(
            overlaps == 0,
            "holders of one key's lock must never overlap, through one handle or two; \(overlaps) of 12 did")
        report.check(done == 12, "every holder must run its body once; \(done) of 12 did")
    }

    /// Runs `body` while a holder on `first` holds the lock of a key of its own, with `second`'s
    /// lock, then releases the key and waits for the holder.
    private func whileHeld(
        _ account: String,
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        _ body: (TokenKey, any TokenLock) async throws -> Void
    ) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: account)
        let (acquired, acquiredSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        let lock = first.lock
        let holder = Task {
            // A lock that throws instead of acquiring ends the wait below instead of hanging it.
            defer { acquiredSink.finish() }
            try await lock.withLock(key, timeout: .seconds(30)) {
                acquiredSink.yield()
                for await _ in release { break }
            }
        }
        var wasAcquired = false
        for await _ in acquired {
            wasAcquired = true
            break
        }
        defer { releaseSink.finish() }
        if !wasAcquired {
            _ = try await holder.value
            throw ConformanceFailure(subject: "lock", failures: ["the lock of \(key) was neither acquired nor refused"])
        }
        try await body(key, second.lock)
        releaseSink.finish()
        _ = try await holder.value
    }

    private func checkPerKey(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        let other = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: "other")
        try await whileHeld("held", first, second, run: run) { _, lock in
            let outcome = await within(.seconds(5)) { try await lock.withLock(other, timeout: .seconds(30)) { true } }
            report.check(
                (try? outcome?.get()) == true,
                "the lock of another key must not wait for a held key (\(String(describing: outcome)))")
        }
    }

    private func checkTimeout(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        try await whileHeld("timeout", first, second, run: run) { key, lock in
            let outcome = await within(.seconds(10)) {
                try await lock.withLock(key, timeout: .milliseconds(200)) { "entered" }
            }
            switch outcome {
            case nil:
                report.fail("a lock wait must give up after its timeout (200 ms); it was still waiting after 10 s")
            case .success:
                report.fail("a second holder entered while the first held the lock (the lock does not exclude)")
            case .failure(let error):
                let code = (error as? AuthError)?.code
                report.check(
                    code == .tokenStoreFailed, "a lock wait that runs out must throw token_store_failed, not \(error)")
            }
        }
    }

    private func checkCancellation(
        _ first: any TokenStore,
        _ second: any TokenStore,
        run: String,
        report: ConformanceReport
    ) async throws {
        try await whileHeld("cancel", first, second, run: run) { key, lock in
            let entered = NIOLockedValueBox(false)
            let waiter = Task {
                try await lock.withLock(key, timeout: .seconds(60)) { entered.withLockedValue { $0 = true } }
            }
            try await Task.sleep(for: .milliseconds(50))
            waiter.cancel()
            switch await within(.seconds(5), { try await waiter.value }) {
            case nil:
                report.fail("a task cancelled while it waits for the lock must stop waiting; it still waited after 5 s")
            case .success:
                report.check(
                    !entered.withLockedValue { $0 },
                    "a waiter entered the lock while another held it (the lock does not exclude)")
            case .failure(let error):
                let cancelled = error is CancellationError || (error as? AuthError)?.isCancellation == true
                report.check(cancelled, "a cancelled lock wait must throw CancellationError, not \(error)")
            }
        }
    }

    private struct Planted: Error {}

    private func checkReleaseOnThrow(_ store: any TokenStore, run: String, report: ConformanceReport) async throws {
        let key = TokenKey(issuer: "https://conformance.example/\(run)", clientID: "client", account: "throw")
        let lock = store.lock
        do {
            try await lock.withLock(key, timeout: .seconds(5)) { throw Planted() }
            report.fail("withLock must pass on what its body throws; it returned")
        } catch is Planted {
        } catch {
            report.fail("withLock must pass on what its body throws as it is; it threw \(error)")
        }
        let outcome = await within(.seconds(5)) { try await lock.withLock(key, timeout: .seconds(2)) { true } }
        report.check((try? outcome?.get()) == true, "the lock must be free again after a body threw")
    }
}
