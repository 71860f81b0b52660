import Foundation
import LenientJSON
import NIOConcurrencyHelpers
import NativeAuth
import TestSupport
import Testing

@testable import NativeAuthKeyring

/// A keyring in memory that counts its writes: the shared layer of the keyring stores, tested
/// without a daemon.
final class MemoryKeyring: Keyring, Sendable {
    private let state = NIOLockedValueBox((items: [TokenKey: [UInt8]](), labels: [TokenKey: String](), writes: 0))

    var writes: Int { state.withLockedValue { $0.writes } }
    func label(of key: TokenKey) -> String? { state.withLockedValue { $0.labels[key] } }

    func read(_ key: TokenKey) async throws -> [UInt8]? { state.withLockedValue { $0.items[key] } }

    func write(_ bytes: [UInt8], label: String, for key: TokenKey) async throws {
        state.withLockedValue {
            $0.items[key] = bytes
            $0.labels[key] = label
            $0.writes += 1
        }
    }

    func delete(_ key: TokenKey) async throws -> Bool {
        state.withLockedValue { $0.items.removeValue(forKey: key) != nil }
    }

    func keys() async throws -> [TokenKey] { state.withLockedValue { Array($0.items.keys) } }
}

/// ``KeyringStorage`` over ``MemoryKeyring``, as a store.
struct MemoryKeyringStore: TokenStore {
    let storage: KeyringStorage<MemoryKeyring>
    var lock: KeyringTokenLock { storage.lock }

    init(
        keyring: MemoryKeyring, lockDirectory: String, files: FileTokenStore? = nil,
        moved: (@Sendable (TokenFileMove) -> Void)? = nil
    ) {
        storage = KeyringStorage(
            backend: keyring, lock: KeyringTokenLock(files: FileTokenLock(directory: lockDirectory)), files: files,
            moved: moved)
    }

    func load(_ key: TokenKey) async throws -> TokenSet? { try await storage.load(key) }
    func save(_ tokens: TokenSet, for key: TokenKey) async throws { try await storage.save(tokens, for: key) }
    func remove(_ key: TokenKey) async throws { try await storage.remove(key) }
    func keys() async throws -> [TokenKey] { try await storage.keys() }
    func revision(of key: TokenKey) -> TokenStoreRevision? { storage.revision(of: key) }
}

@Suite(.testLogging) struct KeyringStorageTests {
    let key = TokenKey(issuer: "https://id.example.com", clientID: "cli", account: "alice")

    func tokens(_ access: String) -> TokenSet {
        TokenSet(
            accessToken: access, refreshToken: "refresh-\(access)", scopes: ["openid"],
            expiresAt: Date(timeIntervalSince1970: 2_000_000_000), issuedAt: Date(timeIntervalSince1970: 1_900_000_000),
            subject: "alice")
    }

    @Test func theSharedLayerConforms() async throws {
        let directory = try TemporaryDirectory()
        let keyring = MemoryKeyring()
        try await TokenStoreConformance {
            MemoryKeyringStore(keyring: keyring, lockDirectory: directory.path + "/locks")
        }.run()
    }

    /// kubelogin #1569: a keyring rewritten on every run prompts and wears; an equal set is not written.
    @Test func savingAnEqualSetWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let keyring = MemoryKeyring()
        // Through the protocol: called on the concrete type in an async context, Swift picks the
        // protocol's async default (nil) over the store's synchronous revision(of:).
        let store: any TokenStore = MemoryKeyringStore(keyring: keyring, lockDirectory: directory.path + "/locks")
        try await store.save(tokens("a"), for: key)
        let revision = try await store.revision(of: key)
        try await store.save(tokens("a"), for: key)
        #expect(keyring.writes == 1)
        #expect(try await store.revision(of: key) == revision, "nothing changed, so the revision did not either")
        try await store.save(tokens("b"), for: key)
        #expect(keyring.writes == 2)
        #expect(try await store.revision(of: key) != revision)
        #expect(keyring.label(of: key) == "NativeAuth sign-in for alice at https://id.example.com (client cli)")
    }

    @Test func aDamagedItemIsReportedAndReplacedBySaving() async throws {
        let directory = try TemporaryDirectory()
        let keyring = MemoryKeyring()
        let store = MemoryKeyringStore(keyring: keyring, lockDirectory: directory.path + "/locks")
        try await keyring.write(Array("{not json".utf8), label: "x", for: key)
        let error = await #expect(throws: AuthError.self) { try await store.load(key) }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("damaged") == true)
        try await store.save(tokens("a"), for: key)
        #expect(try await store.load(key) == tokens("a"))
    }

    /// Items are found by attributes any program on the bus may set: one whose embedded key names
    /// another sign-in is refused, not read as this one's (review I6).
    @Test func anItemHoldingAnotherKeysTokensIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let keyring = MemoryKeyring()
        let store = MemoryKeyringStore(keyring: keyring, lockDirectory: directory.path + "/locks")
        let mallory = TokenKey(issuer: "https://evil.example", clientID: "cli", account: "mallory")
        try await keyring.write(try KeyringFormat.encode(tokens("planted"), for: mallory), label: "x", for: key)
        let error = await #expect(throws: AuthError.self) { try await store.load(key) }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("another sign-in") == true && error?.message.contains("planted") == false)
        // An item without an embedded key (written by another program) is still read.
        try await keyring.write(Array(tokens("by-hand").storageJSON.encoded()), label: "x", for: key)
        #expect(try await store.load(key)?.accessToken == "by-hand")
    }

    @Test func aTokenFileMovesInOnceAndLogoutRemovesBoth() async throws {
        let directory = try TemporaryDirectory()
        let files = FileTokenStore(directory: directory.path + "/files")
        let keyring = MemoryKeyring()
        let moves = Shared<[TokenFileMove]>([])
        let store = MemoryKeyringStore(
            keyring: keyring, lockDirectory: directory.path + "/locks", files: files,
            moved: { move in moves.update { $0.append(move) } })
        try files.save(tokens("from-file"), for: key)

        #expect(try await store.load(key) == tokens("from-file"))
        #expect(try files.load(key) == nil, "the file is gone once its set is in the keyring")
        #expect(try await keyring.read(key) != nil)
        #expect(moves.value == [TokenFileMove(key: key, path: files.path(for: key), copied: true)])
        #expect(try await store.load(key) == tokens("from-file"))
        #expect(moves.value.count == 1, "announced once")

        // A file written later (a run with --token-storage file) does not replace the keyring's set.
        try files.save(tokens("stale"), for: key)
        #expect(try await store.load(key) == tokens("from-file"))
        #expect(try files.load(key) == nil)
        #expect(moves.value.last?.copied == false)

        try files.save(tokens("stale"), for: key)
        try await store.remove(key)
        #expect(try await store.load(key) == nil)
        #expect(try files.load(key) == nil, "logout removes the key from every store")
    }

    /// A load under the store's own lock (a refresh) moves the file without waiting for itself.
    @Test func aMoveUnderTheLockDoesNotWaitForItself() async throws {
        let directory = try TemporaryDirectory()
        let files = FileTokenStore(directory: directory.path + "/files")
        let store = MemoryKeyringStore(
            keyring: MemoryKeyring(), lockDirectory: directory.path + "/locks", files: files)
        try files.save(tokens("a"), for: key)
        let loaded = try await store.lock.withLock(key, timeout: .seconds(2)) { try await store.load(key) }
        #expect(loaded == tokens("a"))
    }

    @Test func keysListTheKeyringAndTheFilesToMove() async throws {
        let directory = try TemporaryDirectory()
        let files = FileTokenStore(directory: directory.path + "/files")
        let store = MemoryKeyringStore(
            keyring: MemoryKeyring(), lockDirectory: directory.path + "/locks", files: files)
        let other = TokenKey(issuer: "https://id.example.com", clientID: "cli", account: "bob")
        try await store.save(tokens("a"), for: key)
        try files.save(tokens("b"), for: other)
        #expect(Set(try await store.keys()) == [key, other])
    }

    @Test func theLockDirectoryIsTheRuntimeDirectoryWhenThereIsOne() {
        #expect(
            TokenStorage.defaultLockDirectory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/h"])
                == "/run/user/1000/nativeauth")
        #expect(
            TokenStorage.defaultLockDirectory(environment: ["XDG_RUNTIME_DIR": "relative", "HOME": "/h"])
                == "/h/.local/state/nativeauth")
    }

    /// A lock that refuses at once (its directory is not private) fails the conformance suite instead
    /// of hanging it.
    @Test func aLockThatRefusesFailsTheConformanceSuiteInsteadOfHangingIt() async throws {
        let directory = try TemporaryDirectory()  // mode 0755: the lock refuses it
        let keyring = MemoryKeyring()
        let error = await #expect(throws: ConformanceFailure.self) {
            try await TokenStoreConformance { MemoryKeyringStore(keyring: keyring, lockDirectory: directory.path) }
                .run()
        }
        #expect(error?.failures.contains { $0.contains("lock exclusion") } == true, "\(error?.failures ?? [])")
    }
}
