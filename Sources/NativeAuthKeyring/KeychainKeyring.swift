internal import Foundation
internal import NativeAuth

/// The two keychains of macOS. Items of ``KeychainTokenStore`` belong in the data protection
/// keychain, the one iOS has always had, where `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`
/// means what it says; the file-based login keychain ignores it, and an item there can be copied
/// to another Mac with the keychain file (review I5).
enum KeychainKind: Sendable, Hashable {
    /// The data protection keychain (`kSecUseDataProtectionKeychain`).
    case dataProtection
    /// The file-based login keychain of older macOS programs.
    case file
}

/// What one Keychain call came to, with the platform's codes already sorted.
enum KeychainOutcome: Sendable, Equatable {
    case success
    /// `errSecItemNotFound`.
    case notFound
    /// `errSecMissingEntitlement`: the program may not use the data protection keychain (an
    /// unsigned command-line tool, or one signed without an application identifier).
    case missingEntitlement
    /// `errSecInteractionNotAllowed`: the keychain is locked.
    case locked
    /// Any other status, with the platform's words for it.
    case failure(status: Int32, reason: String)
}

/// An item's attributes as ``KeychainCalls`` writes them.
struct KeychainItem: Sendable, Equatable {
    var value: [UInt8]
    var label: String
    /// The key's JSON (`kSecAttrGeneric`), so that ``Keyring/keys()`` can list the items.
    var generic: [UInt8]
}

/// The Keychain's item calls, one keychain at a time: the Security framework on Apple platforms,
/// a recording fake in the tests (so that which keychain an item goes to is tested on Linux too).
protocol KeychainCalls: Sendable {
    func copy(_ account: String, in keychain: KeychainKind) -> (KeychainOutcome, [UInt8]?)
    func update(_ account: String, to item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome
    /// Adds an item readable after the first unlock and never leaving this device.
    func add(_ account: String, _ item: KeychainItem, in keychain: KeychainKind) -> KeychainOutcome
    func delete(_ account: String, in keychain: KeychainKind) -> KeychainOutcome
    /// The `kSecAttrGeneric` of every item of the service.
    func list(in keychain: KeychainKind) -> (KeychainOutcome, [[UInt8]])
}

/// The Keychain half of ``KeychainTokenStore``: items go to the data protection keychain; a program
/// without the entitlement it needs falls back to the file keychain (for the rest of the process),
/// and items an earlier version left in the file keychain are read from there and moved.
struct KeychainKeyring<Calls: KeychainCalls>: Keyring {
    let calls: Calls
    /// Set once the data protection keychain refused for want of an entitlement.
    private let fallBack = FallBack()

    private final class FallBack: Sendable {
        let taken = Locked(false)
    }

    init(calls: Calls) { self.calls = calls }

    /// The keychain items go to in this process.
    var keychain: KeychainKind { fallBack.taken.withLock { $0 } ? .file : .dataProtection }

    static func account(_ key: TokenKey) -> String { "\(key.account)\n\(key.issuer)\n\(key.clientID)" }

    /// `body` in the keychain items go to, again in the file keychain when the data protection one
    /// turns out to need an entitlement the program lacks.
    private func routed<T>(_ body: (KeychainKind) -> (KeychainOutcome, T)) -> (KeychainOutcome, T, KeychainKind) {
        let first = keychain
        let answer = body(first)
        guard first == .dataProtection, answer.0 == .missingEntitlement else { return (answer.0, answer.1, first) }
        fallBack.taken.withLock { $0 = true }
        let again = body(.file)
        return (again.0, again.1, .file)
    }

    func read(_ key: TokenKey) async throws -> [UInt8]? {
        let account = Self.account(key)
        let (outcome, bytes, keychain) = routed { calls.copy(account, in: $0) }
        if outcome == .success {
            guard let bytes else {
                throw AuthError(.tokenStoreFailed, "the Keychain returned the item without its data")
            }
            return bytes
        }
        guard outcome == .notFound else { throw Self.error(outcome, "read") }
        guard keychain == .dataProtection else { return nil }
        // Written before items went to the data protection keychain: read it there, and move it.
        let (old, oldBytes) = calls.copy(account, in: .file)
        if old == .notFound { return nil }
        guard old == .success, let oldBytes else { throw Self.error(old, "read") }
        let item = KeychainItem(
            value: oldBytes, label: keyringLabel(for: key), generic: Array(try KeyringFormat.keyData(key)))
        // Copied first, then deleted: a move that fails half-way leaves the item where it was.
        if calls.add(account, item, in: .dataProtection) == .success {
            _ = calls.delete(account, in: .file)
        }
        return oldBytes
    }

    func write(_ bytes: [UInt8], label: String, for key: TokenKey) async throws {
        let account = Self.account(key)
        let item = KeychainItem(value: bytes, label: label, generic: Array(try KeyringFormat.keyData(key)))
        let (updated, _, keychain) = routed { (calls.update(account, to: item, in: $0), ()) }
        if updated != .notFound {
            guard updated == .success else { throw Self.error(updated, "update") }
            return
        }
        let added = calls.add(account, item, in: keychain)
        guard added == .success else { throw Self.error(added, "add") }
    }

    func delete(_ key: TokenKey) async throws -> Bool {
        let account = Self.account(key)
        let (outcome, _, keychain) = routed { (calls.delete(account, in: $0), ()) }
        guard outcome == .success || outcome == .notFound else { throw Self.error(outcome, "delete") }
        var deleted = outcome == .success
        if keychain == .dataProtection {
            let old = calls.delete(account, in: .file)
            guard old == .success || old == .notFound else { throw Self.error(old, "delete") }
            deleted = deleted || old == .success
        }
        return deleted
    }

    func keys() async throws -> [TokenKey] {
        let (outcome, items, keychain) = routed { calls.list(in: $0) }
        guard outcome == .success || outcome == .notFound else { throw Self.error(outcome, "list") }
        var generics = items
        if keychain == .dataProtection {
            let (old, oldItems) = calls.list(in: .file)
            guard old == .success || old == .notFound else { throw Self.error(old, "list") }
            generics += oldItems
        }
        var seen = Set<TokenKey>()
        return generics.compactMap { try? KeyringFormat.key(from: $0) }.filter { seen.insert($0).inserted }
    }

    static func error(_ outcome: KeychainOutcome, _ what: String) -> AuthError {
        switch outcome {
        case .locked:
            AuthError(
                .tokenStoreFailed, "the Keychain is locked: unlock it, or keep the tokens in files instead",
                hint: "log in to this Mac's session (or unlock the keychain with `security unlock-keychain`)")
        case .failure(let status, let reason):
            AuthError(
                .tokenStoreFailed, "the Keychain refused to \(what) the token item: \(reason) (OSStatus \(status))")
        case .missingEntitlement:
            AuthError(.tokenStoreFailed, "the Keychain refused to \(what) the token item: a missing entitlement")
        case .success, .notFound:
            AuthError(.tokenStoreFailed, "the Keychain could not \(what) the token item")
        }
    }
}
