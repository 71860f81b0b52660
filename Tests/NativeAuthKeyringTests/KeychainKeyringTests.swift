import Foundation
import NIOConcurrencyHelpers
import NativeAuth
import TestSupport
import Testing

@testable import NativeAuthKeyring

/// macOS's two keychains, as the Security framework answers them: the data protection keychain
/// refuses a program without the entitlement (`errSecMissingEntitlement`), the file keychain takes
/// anyone. Which keychain ``KeychainTokenStore``'s items go to is decided in `KeychainKeyring`,
/// tested here on every platform; the Security calls themselves run on macOS only.
final class FakeKeychains: KeychainCalls, Sendable {
    struct State {
        var items: [KeychainKind: [String: KeychainItem]] = [.dataProtection: [:], .file: [:]]
        var entitled = true
        var locked = false
        /// Adds to the data protection keychain fail with this status.
        var failingAdds: Int32?
        var calls: [String] = []
    }
    let state: NIOLockedValueBox<State>

    init(entitled: Bool = true) { state = NIOLockedValueBox(State(entitled: entitled)) }

    func items(_ keychain: KeychainKind) -> [String: KeychainItem] {
        state.withLockedValue { $0.items[keychain] ?? [:] }
    }
    var calls: [String] { state.withLockedValue { $0.calls } }

    private func call<T>(
        _ name: String, _ keychain: KeychainKind, refused: T,
        _ body: (inout [String: KeychainItem]) -> (KeychainOutcome, T)
    ) -> (KeychainOutcome, T) {
        state.withLockedValue { state in
            state.calls.append("\(name) \(keychain)")
            if keychain == .dataProtection, !state.entitled { return (.missingEntitlement, refused) }
            if state.locked { return (.locked, refused) }
            return body(&state.items[keychain, default: [:]])
        }
    }

    func copy(_ account: String, in keychain: KeychainKind) -> (KeychainOutcome, [UInt8]?) {
        call("copy", keychain, refused: nil) { items in
            items[account].map { (.success, $0.value) } ?? (.notFound, nil)
        }
    }

    func update(_ account: String, to item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome {
        call("update", keychain, refused: ()) { items in
            guard items[account] != nil else { return (.notFound, ()) }
            items[account] = item
            return (.success, ())
        }.0
    }

    func add(_ account: String, _ item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome {
        let failing = state.withLockedValue { $0.failingAdds }
        return call("add", keychain, refused: ()) { items in
            if keychain == .dataProtection, let failing { return (.failure(status: failing, reason: "refused"), ()) }
            guard items[account] == nil else { return (.failure(status: -25299, reason: "duplicate item"), ()) }
            items[account] = item
            return (.success, ())
        }.0
    }

    func delete(_ account: String, in keychain: KeychainKind) -> KeychainOutcome {
        call("delete", keychain, refused: ()) { items in
            (items.removeValue(forKey: account) == nil ? .notFound : .success, ())
        }.0
    }

    func list(in keychain: KeychainKind) -> (KeychainOutcome, [[UInt8]]) {
        call("list", keychain, refused: []) { items in
            items.isEmpty ? (.notFound, []) : (.success, items.values.map(\.generic))
        }
    }
}

@Suite(.testLogging) struct KeychainKeyringTests {
    let key = TokenKey(issuer: "https://id.example.com", clientID: "cli", account: "alice")
    var account: String { KeychainKeyring<FakeKeychains>.account(key) }

    @Test func itemsGoToTheDataProtectionKeychain() async throws {
        let keychains = FakeKeychains()
        let keyring = KeychainKeyring(calls: keychains)
        try await keyring.write(Array("tokens".utf8), label: "NativeAuth sign-in", for: key)
        #expect(keychains.items(.dataProtection)[account]?.value == Array("tokens".utf8))
        #expect(keychains.items(.file).isEmpty)
        #expect(keychains.calls == ["update dataProtection", "add dataProtection"])
        try await keyring.write(Array("rotated".utf8), label: "NativeAuth sign-in", for: key)
        #expect(try await keyring.read(key) == Array("rotated".utf8))
        #expect(try await keyring.keys() == [key])
        #expect(try await keyring.delete(key))
        #expect(keychains.items(.dataProtection).isEmpty)
        #expect(try await keyring.read(key) == nil)
    }

    @Test func withoutTheEntitlementItemsGoToTheFileKeychainAndTheProcessRemembers() async throws {
        let keychains = FakeKeychains(entitled: false)
        let keyring = KeychainKeyring(calls: keychains)
        try await keyring.write(Array("tokens".utf8), label: "NativeAuth sign-in", for: key)
        #expect(keychains.items(.file)[account]?.value == Array("tokens".utf8))
        #expect(keyring.keychain == .file)
        #expect(try await keyring.read(key) == Array("tokens".utf8))
        #expect(try await keyring.keys() == [key])
        // The data protection keychain was asked once, not at every call.
        #expect(keychains.calls.filter { $0.hasSuffix("dataProtection") } == ["update dataProtection"])
        #expect(try await keyring.delete(key))
        #expect(keychains.items(.file).isEmpty)
    }

    @Test func anItemLeftInTheFileKeychainIsReadAndMoved() async throws {
        let keychains = FakeKeychains()
        let old = KeychainItem(
            value: Array("old tokens".utf8), label: "old", generic: Array(try KeyringFormat.keyData(key)))
        _ = keychains.add(account, old, in: .file)
        let keyring = KeychainKeyring(calls: keychains)
        #expect(try await keyring.keys() == [key])
        #expect(try await keyring.read(key) == Array("old tokens".utf8))
        #expect(keychains.items(.file).isEmpty)
        #expect(keychains.items(.dataProtection)[account]?.value == Array("old tokens".utf8))
        #expect(keychains.items(.dataProtection)[account]?.label == keyringLabel(for: key))
    }

    @Test func aMoveThatFailsLeavesTheItemWhereItWas() async throws {
        let keychains = FakeKeychains()
        let old = KeychainItem(
            value: Array("old tokens".utf8), label: "old", generic: Array(try KeyringFormat.keyData(key)))
        _ = keychains.add(account, old, in: .file)
        keychains.state.withLockedValue { $0.failingAdds = -34 }
        let keyring = KeychainKeyring(calls: keychains)
        #expect(try await keyring.read(key) == Array("old tokens".utf8))
        #expect(keychains.items(.file)[account] == old)
        #expect(try await keyring.delete(key))
        #expect(keychains.items(.file).isEmpty)
    }

    @Test func aLockedKeychainSaysSo() async throws {
        let keychains = FakeKeychains()
        keychains.state.withLockedValue { $0.locked = true }
        let keyring = KeychainKeyring(calls: keychains)
        let error = await #expect(throws: AuthError.self) { try await keyring.read(key) }
        #expect(error?.code == .tokenStoreFailed)
        #expect(error?.message.contains("locked") == true)
    }
}
