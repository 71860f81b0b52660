import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct FileTokenStoreTests {
    private let key = TokenKey(issuer: "https://idp.example", clientID: "cli")
    private let tokens = TokenSet(
        accessToken: "access-value",
        refreshToken: "refresh-value",
        scopes: ["openid"],
        expiresAt: fixedNow,
        issuedAt: fixedNow,
        subject: "42"
    )

    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func savesAndLoadsWithPrivateModes() throws {
        let temporary = try TemporaryDirectory()
        let directory = temporary.path + "/state/nativeauth"
        let store = FileTokenStore(directory: directory)
        #expect(try store.load(key) == nil)
        try store.save(tokens, for: key)
        #expect(try store.load(key) == tokens)
        #expect(try mode(directory) == 0o700)
        #expect(try mode(store.path(for: key)) == 0o600)
        // Nothing but the token file is left behind.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory) == [
                URL(fileURLWithPath: store.path(for: key)).lastPathComponent
            ])
        try store.remove(key)
        #expect(try store.load(key) == nil)
        try store.remove(key)  // removing nothing is fine
    }

    @Test func savingReplacesTheWholeSet() throws {
        let store = FileTokenStore(directory: try TemporaryDirectory().path + "/s")
        try store.save(tokens, for: key)
        var newer = tokens
        newer.accessToken = "newer"
        newer.refreshToken = nil
        try store.save(newer, for: key)
        #expect(try store.load(key) == newer)
        let other = TokenKey(issuer: "https://idp.example", clientID: "cli", account: "work")
        #expect(store.path(for: other) != store.path(for: key))
        #expect(try store.load(other) == nil)
    }

    @Test func aFileOthersCanReadIsRefusedWithTheFix() throws {
        let store = FileTokenStore(directory: try TemporaryDirectory().path + "/s")
        try store.save(tokens, for: key)
        let path = store.path(for: key)
        #expect(chmod(path, 0o644) == 0)
        let error = #expect(throws: AuthError.self) { try store.load(key) }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("other users") == true)
        #expect(error?.hint == "run: chmod 600 '\(path)'")
        #expect(error?.description.contains("access-value") == false)
        #expect(chmod(path, 0o600) == 0)
        #expect(try store.load(key) == tokens)
    }

    @Test func aDirectoryOthersCanEnterIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let directory = temporary.path + "/open"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(chmod(directory, 0o755) == 0)
        let error = #expect(throws: AuthError.self) { try FileTokenStore(directory: directory).save(tokens, for: key) }
        #expect(error?.hint == "run: chmod 700 '\(directory)'")
    }

    /// A directory above the store that other users can change (writable by others without root's
    /// sticky bit, or owned by another user) would let them replace the store's path: refused,
    /// naming that directory. Root's sticky `/tmp` is fine.
    @Test func aDirectoryAboveTheStoreThatOthersCanChangeIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let shared = temporary.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o777) == 0)
        let store = FileTokenStore(directory: shared + "/me/store")
        let error = #expect(throws: AuthError.self) { try store.save(tokens, for: key) }
        #expect(
            error?.message.contains("the directory \(shared) above the token store can be changed by other users")
                == true)
        #expect(chmod(shared, 0o1777) == 0)
        if geteuid() == 0 {
            try store.save(tokens, for: key)  // root's and sticky, like /tmp
        } else {
            #expect(throws: AuthError.self, "sticky, but not root's") { try store.save(tokens, for: key) }
        }
        #expect(chmod(shared, 0o755) == 0)
        try store.save(tokens, for: key)
        #expect(try store.load(key) == tokens)
    }

    /// A directory above the store that belongs to another user (a real second uid) is refused:
    /// its owner could rename the store away and plant another.
    @Test(.enabled(if: OtherUser.isAvailable, "\(OtherUser.unavailableReason ?? "")"))
    func aDirectoryAboveTheStoreOwnedByAnotherUserIsRefused() async throws {
        let uid = try await OtherUser.uid()
        let temporary = try TemporaryDirectory()
        let theirs = temporary.path + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(chmod(theirs, 0o755) == 0)
        #expect(chown(theirs, uid, 0) == 0)
        let store = FileTokenStore(directory: theirs + "/store")
        let error = #expect(throws: AuthError.self) { try store.save(tokens, for: key) }
        #expect(error?.message.contains("owner uid \(uid)") == true)
    }

    /// The store's own path must be a directory, not a symbolic link to one (which could be swapped
    /// for a link elsewhere between the checks and the use).
    @Test func aStorePathThatIsASymbolicLinkIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let real = temporary.path + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        #expect(chmod(real, 0o700) == 0)
        let linked = temporary.path + "/linked"
        #expect(symlink(real, linked) == 0)
        let error = #expect(throws: AuthError.self) { try FileTokenStore(directory: linked).save(tokens, for: key) }
        #expect(error?.message.contains("is a symbolic link") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: real).isEmpty, "nothing was written through it")
    }

    @Test func aDamagedFileIsReportedAndKept() throws {
        let store = FileTokenStore(directory: try TemporaryDirectory().path + "/s")
        try store.save(tokens, for: key)
        let path = store.path(for: key)
        try Data(#"{"access_token": "half"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o600) == 0)
        let error = #expect(throws: AuthError.self) { try store.load(key) }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("damaged") == true)
        #expect(FileManager.default.fileExists(atPath: path))
        // Listing leaves it out: one damaged file does not hide the other sign-ins.
        let other = TokenKey(issuer: key.issuer, clientID: key.clientID, account: "other")
        try store.save(tokens, for: other)
        #expect(try store.keys() == [other])
    }

    @Test func theDefaultDirectoryFollowsXDG() {
        #expect(
            FileTokenStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/h"])
                == "/x/state/nativeauth")
        #expect(
            FileTokenStore.defaultDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])
                == "/h/.local/state/nativeauth")
        #expect(FileTokenStore.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/nativeauth")
    }
}

@Suite(.testLogging) struct FileTokenStoreKeyTests {
    private let key = TokenKey(issuer: "https://idp.example", clientID: "cli", account: "work")

    /// A file as stores wrote them before each file recorded its key: the token set alone.
    @Test func aFileWithoutItsKeyLoadsAndIsListedOnceSavedAgain() throws {
        let temporary = try TemporaryDirectory()
        let store = FileTokenStore(directory: temporary.path + "/store")
        let tokens = TokenSet(accessToken: "old-format", refreshToken: "r", issuedAt: fixedNow)
        try store.save(tokens, for: key)
        #expect(try store.keys() == [key])
        // Rewrite the file the old way: no "key" member.
        let oldFormat = try tokens.storageJSON.encoded()
        try Data(oldFormat).write(to: URL(fileURLWithPath: store.path(for: key)))
        #expect(try store.load(key) == tokens, "an old file still loads")
        #expect(try store.keys().isEmpty, "its key is unknown until it is saved again")
        try store.save(tokens, for: key)
        #expect(try store.keys() == [key])
    }

    @Test func aFileCopiedUnderAnotherNameIsNotListedForTheKeyInside() throws {
        let temporary = try TemporaryDirectory()
        let store = FileTokenStore(directory: temporary.path + "/store")
        try store.save(TokenSet(accessToken: "a", issuedAt: fixedNow), for: key)
        let copy = temporary.path + "/store/tokens-00000000000000000000000000000000.json"
        try FileManager.default.copyItem(atPath: store.path(for: key), toPath: copy)
        #expect(try store.keys() == [key])
    }

    @Test func anEmptyOrMissingDirectoryListsNothing() throws {
        let temporary = try TemporaryDirectory()
        #expect(try FileTokenStore(directory: temporary.path + "/missing").keys().isEmpty)
    }
}

@Suite(.testLogging) struct FileTokenStoreLockTests {
    @Test func aLockHeldTooLongIsAClearErrorAndTheLockIsReleasedAfterwards() async throws {
        let store = FileTokenStore(directory: try TemporaryDirectory().path + "/s")
        let key = TokenKey(issuer: "https://idp.example", clientID: "cli")
        let (acquired, acquiredSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        let holding = Task {
            try await store.lock.withLock(key, timeout: .seconds(5)) {
                acquiredSink.yield()
                for await _ in release { break }
                return 1
            }
        }
        for await _ in acquired { break }
        let error = await #expect(throws: AuthError.self) {
            try await store.lock.withLock(key, timeout: .milliseconds(200)) { 2 }
        }
        releaseSink.yield()
        releaseSink.finish()
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("held the token lock") == true)
        #expect(try await holding.value == 1)
        #expect(try await store.lock.withLock(key, timeout: .seconds(1)) { 3 } == 3)
        let mode =
            try FileManager.default.attributesOfItem(atPath: store.lock.path(for: key))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
