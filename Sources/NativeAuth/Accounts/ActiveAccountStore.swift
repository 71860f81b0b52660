internal import Crypto
internal import Foundation
internal import LenientJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps which account of a provider and client is the active one: the account that ``Accounts``
/// acts on when nobody names one.
///
/// The pointer is not a secret (it holds an account name), and it is apart from the tokens: a
/// keyring keeps the tokens, and the pointer stays a small file beside the other state.
public protocol ActiveAccountStore: Sendable {
    /// The active account of `clientID` at `issuer`, or `nil` when none was chosen.
    func activeAccount(issuer: String, clientID: String) async throws -> String?
    /// Makes `account` the active one of `clientID` at `issuer`; `nil` forgets the choice.
    func setActiveAccount(_ account: String?, issuer: String, clientID: String) async throws
}

/// Keeps the active account in memory, for the life of the process.
public actor MemoryActiveAccountStore: ActiveAccountStore {
    private var active: [String: String] = [:]

    /// Creates an empty store.
    public init() {}

    public func activeAccount(issuer: String, clientID: String) -> String? {
        active[issuer + "\n" + clientID]
    }

    public func setActiveAccount(_ account: String?, issuer: String, clientID: String) {
        active[issuer + "\n" + clientID] = account
    }
}

/// Keeps the active account of each provider and client in a small JSON file of its own
/// (`active-…json`, named by a hash of the issuer and the client id) in a private directory: by
/// default the file token store's.
///
/// The directory gets the file store's checks (created 0700; refused when others can enter it).
/// A file is replaced atomically (a new file renamed over the old one), so two processes switching
/// at once leave one choice or the other, never a broken file.
public struct FileActiveAccountStore: ActiveAccountStore {
    /// The directory holding the pointer files.
    public let directory: String

    /// Creates a store in `directory`, default `FileTokenStore/defaultDirectory(environment:)`.
    public init(directory: String? = nil) {
        self.directory = directory ?? FileTokenStore.defaultDirectory()
    }

    /// The file that holds the active account of `clientID` at `issuer`.
    public func path(issuer: String, clientID: String) -> String {
        let digest = SHA256.hash(data: Data("\(issuer)\n\(clientID)".utf8))
        return directory + "/active-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".json"
    }

    public func activeAccount(issuer: String, clientID: String) throws -> String? {
        guard try PrivateDirectory(path: directory).openIfPresent() != nil else { return nil }
        let path = path(issuer: issuer, clientID: clientID)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            guard let object = try JSONValue.parse(data).objectValue,
                try object.string("issuer") == issuer, try object.string("client_id") == clientID
            else { return nil }
            return try object.string("account")
        } catch {
            throw AuthError(
                .tokenStoreFailed, "the active-account file \(path) is damaged",
                hint: "switch to an account again to replace it, or delete the file", underlying: error)
        }
    }

    public func setActiveAccount(_ account: String?, issuer: String, clientID: String) throws {
        _ = try PrivateDirectory(path: directory).open()
        let path = path(issuer: issuer, clientID: clientID)
        guard let account else {
            if unlink(path) != 0, errno != ENOENT {
                throw PrivateDirectory.failure("cannot remove \(path)", errno: errno)
            }
            return
        }
        let object: JSONObject = [
            "issuer": .string(issuer), "client_id": .string(clientID), "account": .string(account),
        ]
        let bytes: [UInt8]
        do {
            bytes = try JSONValue.object(object).encoded()
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the active account", underlying: error)
        }
        try SecretFile.writePrivately(bytes, to: path, what: "active-account file", code: .tokenStoreFailed)
    }
}
