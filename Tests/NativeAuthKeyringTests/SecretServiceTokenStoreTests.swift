import Foundation
import NativeAuth
import NativeAuthKeyring
import TestSupport
import Testing

/// Against a real gnome-keyring-daemon: the one scripts/test.sh starts for the suite on a private
/// bus, the process's session bus (`NATIVEAUTH_KEYRING_TEST_BUS` names it, so that these tests never
/// run on a person's own keyring).
enum SuiteKeyring {
    static let environment = ProcessInfo.processInfo.environment
    static let isReady =
        KeyringDaemon.enabled && environment["NATIVEAUTH_KEYRING_TEST_BUS"] != nil
        && environment["NATIVEAUTH_KEYRING_TEST_BUS"] == environment["DBUS_SESSION_BUS_ADDRESS"]
    static var busEnvironment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""]
    }
}

@Suite(.testLogging, .enabled(if: KeyringDaemon.enabled), .serialized) struct SecretServiceTokenStoreTests {
    func tokens(_ access: String, subject: String = "alice") -> TokenSet {
        TokenSet(
            accessToken: access, refreshToken: "refresh-\(access)", idToken: "id-\(access)",
            scopes: ["openid", "profile"], expiresAt: Date(timeIntervalSince1970: 2_000_000_000),
            issuedAt: Date(timeIntervalSince1970: 1_900_000_000), subject: subject, displayName: subject)
    }

    @Test func theSuiteRunsOnItsOwnKeyring() {
        #expect(
            SuiteKeyring.isReady,
            "NATIVEAUTH_KEYRING_TESTS=1 needs DBUS_SESSION_BUS_ADDRESS = NATIVEAUTH_KEYRING_TEST_BUS (scripts/test.sh)")
    }

    @Test(.enabled(if: SuiteKeyring.isReady)) func theStoreConforms() async throws {
        let directory = try TemporaryDirectory()
        try await TokenStoreConformance {
            SecretServiceTokenStore(application: "nativeauth-conformance", lockDirectory: directory.path + "/locks")
        }.run()
    }

    @Test(.enabled(if: SuiteKeyring.isReady)) func unicodeAndLargeTokensRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        let store = SecretServiceTokenStore(application: "nativeauth-large", lockDirectory: directory.path + "/locks")
        let key = TokenKey(issuer: "https://idp.example/ré alm/\(UUID())", clientID: "clïent 🔑", account: "ärger")
        let large = String(repeating: "abcdefghijklmnop", count: 1024)  // 16 KiB
        var set = tokens(large, subject: "Zoë 🦊 Łukasz")
        set.refreshToken = String(repeating: "r", count: 16_384)
        try await store.save(set, for: key)
        #expect(try await store.load(key) == set)
        #expect(try await store.keys().contains(key))
        try await store.remove(key)
        #expect(try await store.load(key) == nil)
        #expect(try await !store.keys().contains(key))
    }

    /// Items are plain Secret Service items: `secret-tool` finds ours, and we read one it stored.
    @Test(.enabled(if: SuiteKeyring.isReady)) func secretToolAndTheStoreShareItems() async throws {
        let directory = try TemporaryDirectory()
        let store = SecretServiceTokenStore(lockDirectory: directory.path + "/locks")
        let issuer = "https://interop.example/\(UUID())"

        let ours = TokenKey(issuer: issuer, clientID: "cli", account: "alice")
        try await store.save(tokens("written-by-nativeauth"), for: ours)
        let found = try await RunningCommand(
            "/usr/bin/secret-tool", ["search", "application", "nativeauth", "issuer", issuer],
            environment: SuiteKeyring.busEnvironment
        ).finish(closeInput: true)
        #expect(found.status == 0, "\(found.stderr)")
        let listing = found.stdout + found.stderr
        #expect(listing.contains("label = NativeAuth sign-in for alice at \(issuer) (client cli)"))
        #expect(listing.contains("attribute.client_id = cli"))
        #expect(listing.contains("attribute.account = alice"))

        let theirs = TokenKey(issuer: issuer, clientID: "cli", account: "bob")
        let json =
            #"{"access_token":"stored-by-secret-tool","token_type":"Bearer","issued_at_ms":1900000000000,"scope":["openid"],"subject":"bob"}"#
        let stored = try RunningCommand(
            "/usr/bin/secret-tool",
            [
                "store", "--label", "by hand", "application", "nativeauth", "issuer", issuer, "client_id", "cli",
                "account", "bob",
            ],
            environment: SuiteKeyring.busEnvironment)
        stored.type(json)
        #expect(await stored.finish(closeInput: true).status == 0)
        let loaded = try #require(try await store.load(theirs))
        #expect(loaded.accessToken == "stored-by-secret-tool")
        #expect(loaded.subject == "bob")
        #expect(Set(try await store.keys()).isSuperset(of: [ours, theirs]))
        try await store.remove(ours)
        try await store.remove(theirs)
    }

    @Test(.enabled(if: SuiteKeyring.isReady)) func savingAnEqualSetChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store: any TokenStore = SecretServiceTokenStore(
            application: "nativeauth-equal", lockDirectory: directory.path + "/locks")
        let key = TokenKey(issuer: "https://equal.example/\(UUID())", clientID: "cli")
        try await store.save(tokens("a"), for: key)
        let revision = try await store.revision(of: key)
        try await store.save(tokens("a"), for: key)
        #expect(try await store.revision(of: key) == revision)
        try await store.save(tokens("b"), for: key)
        #expect(try await store.revision(of: key) != revision)
        try await store.remove(key)
    }

    @Test(.enabled(if: SuiteKeyring.isReady)) func theDefaultCollectionIsTheUnlockedLoginKeyring() async throws {
        let directory = try TemporaryDirectory()
        let collection = try await SecretServiceTokenStore(lockDirectory: directory.path + "/locks").defaultCollection()
        #expect(collection.label == "Login")
        #expect(!collection.isLocked)
        var options = TokenStorage.Options()
        options.fileDirectory = directory.path + "/files"
        options.lockDirectory = directory.path + "/locks"
        let storage = try await TokenStorage.open(.auto, options: options)
        #expect(storage.backend == .keyring)
        #expect(storage.fallbackReason == nil)
        #expect(storage.location == "Secret Service")
        #expect(await storage.describedLocation() == #"Secret Service, collection "Login""#)
    }
}
