internal import Crypto
public import Foundation
internal import LenientJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a client learned about a protected resource it found by its metadata (RFC 9728): the
/// authorization server that issues its tokens, the account whose sign-in holds them, and the
/// scopes it was asked for. With it, a later call (in any process) needs only the resource's URL:
/// no metadata to read, no question to ask, no registration to make.
///
/// Nothing in it is a secret: the tokens stay in the account's ``TokenSet``.
public struct KnownResource: Sendable, Equatable {
    /// The resource identifier, as its metadata's `resource` gave it.
    public var resource: URL
    /// The authorization server its metadata named, and the client signed in at.
    public var issuer: URL
    /// The account whose sign-in holds its tokens (see ``Accounts``).
    public var account: String
    /// The scopes asked for it: its challenge's, else its metadata's `scopes_supported`.
    public var scopes: [String]
    /// The client id configured for ``issuer`` when the record was made (a client registered there
    /// by its administrator); `nil` when the client registered itself there (RFC 7591, or a client
    /// ID metadata document), which is kept with the tokens. A client id is not a secret; a client
    /// secret is never kept here.
    public var clientID: String?

    /// Creates a record.
    public init(resource: URL, issuer: URL, account: String, scopes: [String], clientID: String? = nil) {
        self.resource = resource
        self.issuer = issuer
        self.account = account
        self.scopes = scopes
        self.clientID = clientID
    }

    /// The stored form.
    var json: JSONValue {
        var object: JSONObject = [
            "resource": .string(resource.absoluteString), "issuer": .string(issuer.absoluteString),
            "account": .string(account), "scope": .string(scopes.joined(separator: " ")),
        ]
        if let clientID { object["client_id"] = .string(clientID) }
        return .object(object)
    }

    /// Reads the stored form.
    init(json: JSONValue) throws(JSONFieldError) {
        guard let object = json.objectValue else {
            throw JSONFieldError(key: "resource", problem: .wrongKind(expected: "an object", found: "something else"))
        }
        func url(_ key: String) throws(JSONFieldError) -> URL {
            guard let url = URL(string: try object.requiredString(key)) else {
                throw JSONFieldError(key: key, problem: .wrongKind(expected: "a URL", found: "something else"))
            }
            return url
        }
        resource = try url("resource")
        issuer = try url("issuer")
        account = try object.requiredString("account")
        scopes = (try object.string("scope") ?? "").split(separator: " ").map(String.init)
        clientID = try object.string("client_id")
    }
}

/// Keeps what a client learned about the protected resources it was sent to (``KnownResource``),
/// one record per resource identifier.
///
/// Like ``ActiveAccountStore``, it holds pointers, not secrets, and sits beside the token store.
public protocol KnownResourceStore: Sendable {
    /// Every record, ordered by resource.
    func knownResources() async throws -> [KnownResource]
    /// Keeps `record`, replacing the one of the same resource.
    func remember(_ record: KnownResource) async throws
    /// Forgets the record of `resource`; returns whether there was one.
    func forget(_ resource: URL) async throws -> Bool
}

extension KnownResourceStore {
    /// The record of the resource that `url` is at or under (same origin, and the resource's path
    /// is `url`'s or a parent of it; the longest such resource), if any.
    public func knownResource(covering url: URL) async throws -> KnownResource? {
        try await knownResources()
            .filter { ProtectedResourceMetadata.covers($0.resource, url) }
            .max { $0.resource.absoluteString.count < $1.resource.absoluteString.count }
    }
}

/// Keeps the records in memory, for the life of the process.
public actor MemoryKnownResourceStore: KnownResourceStore {
    private var records: [String: KnownResource] = [:]

    /// Creates an empty store.
    public init() {}

    public func knownResources() -> [KnownResource] {
        records.values.sorted { $0.resource.absoluteString < $1.resource.absoluteString }
    }

    public func remember(_ record: KnownResource) {
        records[record.resource.absoluteString] = record
    }

    public func forget(_ resource: URL) -> Bool {
        records.removeValue(forKey: resource.absoluteString) != nil
    }
}

/// Keeps each record in a small JSON file of its own (`resource-…json`, named by a hash of the
/// resource identifier) in a private directory: by default the file token store's.
///
/// The directory gets the file store's checks, and a file is replaced atomically, as
/// ``FileActiveAccountStore`` does: two processes learning the same resource at once leave one
/// record or the other, never a broken file; two resources never touch each other's file.
public struct FileKnownResourceStore: KnownResourceStore {
    /// The directory holding the record files.
    public let directory: String

    /// Creates a store in `directory`, default `FileTokenStore/defaultDirectory(environment:)`.
    public init(directory: String? = nil) {
        self.directory = directory ?? FileTokenStore.defaultDirectory()
    }

    /// The file that holds the record of `resource`.
    public func path(for resource: URL) -> String {
        let digest = SHA256.hash(data: Data(resource.absoluteString.utf8))
        return directory + "/resource-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".json"
    }

    public func knownResources() throws -> [KnownResource] {
        guard try PrivateDirectory(path: directory).openIfPresent() != nil else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var records: [KnownResource] = []
        for name in names where name.hasPrefix("resource-") && name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let record: KnownResource
            do {
                record = try KnownResource(json: try JSONValue.parse(data))
            } catch {
                throw AuthError(
                    .tokenStoreFailed, "the resource record \(path) is damaged",
                    hint: "delete the file; the next call to that resource finds its server again", underlying: error)
            }
            // A file renamed onto another resource's name is not that resource's record.
            guard self.path(for: record.resource) == path else { continue }
            records.append(record)
        }
        return records.sorted { $0.resource.absoluteString < $1.resource.absoluteString }
    }

    public func remember(_ record: KnownResource) throws {
        _ = try PrivateDirectory(path: directory).open()
        let bytes: [UInt8]
        do {
            bytes = try record.json.encoded()
        } catch {
            throw AuthError(.tokenStoreFailed, "cannot encode the resource record", underlying: error)
        }
        try SecretFile.writePrivately(
            bytes, to: path(for: record.resource), what: "resource record", code: .tokenStoreFailed)
    }

    public func forget(_ resource: URL) throws -> Bool {
        guard try PrivateDirectory(path: directory).openIfPresent() != nil else { return false }
        let path = path(for: resource)
        if unlink(path) == 0 { return true }
        guard errno == ENOENT else { throw PrivateDirectory.failure("cannot remove \(path)", errno: errno) }
        return false
    }
}
