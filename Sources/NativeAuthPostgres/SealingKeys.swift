// With the Postgres trait off (the sanitizer builds), this module is empty.
#if Postgres
    public import Crypto
    internal import Foundation
    internal import NativeAuth

    /// One application key that seals token sets at rest (AES-256-GCM), and the id stored beside
    /// each set it sealed.
    ///
    /// The key lives with the application (a secret manager, an environment variable), never in the
    /// database: a dump or a replica of the table then holds nothing usable.
    public struct SealingKey: Sendable {
        /// The key's id, stored in each row it sealed, so that the key that opens it is found after a
        /// rotation. Not secret; at most 64 characters.
        public let id: String
        let key: SymmetricKey

        /// Creates a sealing key.
        ///
        /// - Parameters:
        ///   - id: The key's id: 1 to 64 letters, digits, `-`, `_` or `.`.
        ///   - key: A 256-bit key.
        /// - Throws: `AuthError` (`configuration_invalid`) for another length or a malformed id.
        public init(id: String, key: SymmetricKey) throws {
            guard key.bitCount == 256 else {
                throw AuthError(
                    .configurationInvalid,
                    "the sealing key \"\(id)\" has \(key.bitCount) bits; AES-256-GCM needs 256",
                    hint: "generate one with `openssl rand -base64 32`"
                )
            }
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
            guard (1...64).contains(id.count), id.allSatisfy(allowed.contains) else {
                throw AuthError(
                    .configurationInvalid,
                    "the sealing key id \"\(id)\" is not 1 to 64 letters, digits, '-', '_' or '.'"
                )
            }
            self.id = id
            self.key = key
        }

        /// Creates a sealing key from 32 bytes in base64 (what `openssl rand -base64 32` prints).
        ///
        /// - Throws: `AuthError` (`configuration_invalid`) when the text is not base64 of 32 bytes;
        ///   the message never repeats the text.
        public init(id: String, base64: String) throws {
            guard let bytes = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw AuthError(
                    .configurationInvalid,
                    "the sealing key \"\(id)\" is not base64",
                    hint: "generate one with `openssl rand -base64 32`"
                )
            }
            try self.init(id: id, key: SymmetricKey(data: bytes))
        }
    }

    /// The keys of a ``PostgresTokenStore``: the current one seals every save, and the previous ones
    /// still open what they sealed until the next save re-seals it with the current one.
    ///
    /// Rotating: add a new current key and move the old one to `previous`, on every instance; once
    /// every set was saved again (each refresh saves), the old key can go.
    public struct SealingKeys: Sendable {
        /// The key every save seals with.
        public let current: SealingKey
        /// Keys that only open what they sealed before.
        public let previous: [SealingKey]

        /// Creates the set of keys.
        ///
        /// - Throws: `AuthError` (`configuration_invalid`) when two keys share an id.
        public init(current: SealingKey, previous: [SealingKey] = []) throws {
            var ids: Set<String> = [current.id]
            for key in previous where !ids.insert(key.id).inserted {
                throw AuthError(.configurationInvalid, "two sealing keys have the id \"\(key.id)\"")
            }
            self.current = current
            self.previous = previous
        }

        /// The key with `id`, if this instance has it.
        func key(id: String) -> SealingKey? {
            id == current.id ? current : previous.first { $0.id == id }
        }

        /// The stored form's version, the first byte of every sealed value: 2 binds the row's
        /// generation too; 1, written before it, binds the row's key only and is still read.
        static let format: UInt8 = 2

        /// What a sealed value is bound to: the row's key, so that a value copied into another row
        /// does not open there, and (format 2) the row's generation, so that an older value of the
        /// same row put back under a newer generation does not open either.
        static func associatedData(_ key: TokenKey, generation: Int64? = nil) -> Data {
            let bound = "nativeauth-token-set\u{0}\(key.issuer)\u{0}\(key.clientID)\u{0}\(key.account)"
            return Data((bound + (generation.map { "\u{0}generation \($0)" } ?? "")).utf8)
        }

        /// `plaintext` sealed with the current key, bound to `key` and the `generation` the row will have.
        func seal(_ plaintext: [UInt8], for key: TokenKey, generation: Int64) throws -> Data {
            do {
                let box = try AES.GCM.seal(
                    plaintext, using: current.key, authenticating: Self.associatedData(key, generation: generation))
                guard let combined = box.combined else {
                    throw AuthError(.tokenStoreFailed, "AES-GCM gave no combined form")
                }
                return Data([Self.format]) + combined
            } catch let error as AuthError {
                throw error
            } catch {
                throw AuthError(.tokenStoreFailed, "cannot seal the token set of \(key): \(error)")
            }
        }

        /// Opens a value sealed for `key`, in the row's `generation`, with the key `keyID`.
        ///
        /// - Throws: `AuthError` (`token_store_failed`) naming the key id when this instance lacks the
        ///   key, or when the key does not open the value (another key under the same id, or an altered
        ///   row). Never an empty result.
        func open(_ sealed: Data, keyID: String, for key: TokenKey, generation: Int64) throws -> [UInt8] {
            guard let sealingKey = self.key(id: keyID) else {
                let known = ([current] + previous).map { "\"\($0.id)\"" }.joined(separator: ", ")
                throw AuthError(
                    .tokenStoreFailed,
                    "the stored tokens of \(key) are sealed with the key \"\(keyID)\", which this instance was"
                        + " not given (it has \(known))",
                    hint: "give this instance the key \"\(keyID)\" among the previous sealing keys; every instance"
                        + " needs every key still in use"
                )
            }
            guard let format = sealed.first, format == Self.format || format == 1 else {
                throw AuthError(
                    .tokenStoreFailed,
                    "the stored tokens of \(key) are in an unknown format (\(sealed.first.map(String.init) ?? "empty"))",
                    hint: "a newer NativeAuth wrote them; upgrade this instance"
                )
            }
            do {
                let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
                let bound = Self.associatedData(key, generation: format == 1 ? nil : generation)
                let opened = try AES.GCM.open(box, using: sealingKey.key, authenticating: bound)
                return Array(opened)
            } catch {
                throw AuthError(
                    .tokenStoreFailed,
                    "the sealing key \"\(keyID)\" does not open the stored tokens of \(key): it is not the key"
                        + " they were sealed with, or the row was altered (older tokens put back under a newer"
                        + " generation do not open)",
                    hint: "give this instance the same key under the id \"\(keyID)\" as the instance that stored them;"
                        + " if the key is lost, remove the row and sign in again"
                )
            }
        }
    }
#endif
