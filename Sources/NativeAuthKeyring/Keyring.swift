internal import Foundation
internal import LenientJSON
internal import NativeAuth

/// What a keyring backend does for ``KeyringStorage``: keep one secret per key, with attributes
/// that find it again. The Secret Service and the Keychain each implement it; everything else
/// (the stored format, writing only changes, locking, moving files in) is shared.
protocol Keyring: Sendable {
    /// The secret stored for `key`, or `nil` when there is none.
    func read(_ key: TokenKey) async throws -> [UInt8]?
    /// Stores `bytes` for `key`, replacing what was there, under a label a person recognises.
    func write(_ bytes: [UInt8], label: String, for key: TokenKey) async throws
    /// Deletes what is stored for `key`; `true` when something was.
    func delete(_ key: TokenKey) async throws -> Bool
    /// The keys of the stored items.
    func keys() async throws -> [TokenKey]
}

/// The item label of `key`, as Seahorse, `secret-tool` and Keychain Access show it.
func keyringLabel(for key: TokenKey) -> String {
    let who = key.account == "default" ? "" : " for \(key.account)"
    return "NativeAuth sign-in\(who) at \(key.issuer) (client \(key.clientID))"
}

/// The keyring items' format: the file store's JSON (the tokens and, under `key`, the key).
enum KeyringFormat {
    static func encode(_ tokens: TokenSet, for key: TokenKey) throws -> [UInt8] {
        do {
            var object = tokens.storageJSON.objectValue ?? JSONObject()
            object["key"] = .object(key.storageJSON)
            return try JSONValue.object(object).encoded()
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the token set", underlying: error)
        }
    }

    /// The key alone, as JSON (the Keychain keeps it in the item's generic attribute).
    static func keyData(_ key: TokenKey) throws -> Data {
        do {
            return Data(try JSONValue.object(key.storageJSON).encoded())
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the token key", underlying: error)
        }
    }

    /// A key written by ``keyData(_:)``.
    static func key(from bytes: [UInt8]) throws -> TokenKey {
        guard let object = try JSONValue.parse(bytes).objectValue else {
            throw AuthError(.tokenStoreFailed, "the keyring item's key is not a JSON object")
        }
        return try TokenKey(storageJSON: object)
    }

    /// The set in `bytes`, with the key it was stored for when it says (items written by other
    /// programs may not).
    static func decode(_ bytes: [UInt8]) throws -> (TokenSet, TokenKey?) {
        do {
            guard let object = try JSONValue.parse(bytes).objectValue else {
                throw AuthError(.tokenStoreFailed, "the keyring item does not hold a JSON object")
            }
            let key = try? object.object("key").map { try TokenKey(storageJSON: $0) }
            return (try TokenSet(storageJSON: object), key ?? nil)
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(
                .tokenStoreFailed, "the keyring item holding the tokens is damaged",
                hint: "sign in again to replace it", underlying: error)
        }
    }
}
