internal import Foundation
public import LenientJSON
public import NativeAuth

/// One message of the agent's protocol (version 1): a JSON object, sent as a frame of a 4-byte
/// big-endian length and that many bytes (at most ``maximumLength``).
///
/// A request names its operation in `op` and its protocol version in `v`:
/// - `status`: the agent's version, process id and number of accounts;
/// - `list`: the accounts (name, issuer, client id, whether their tokens are DPoP-bound);
/// - `token`: an access token of `account` (for `resource`, RFC 8707, with `scopes`), valid for at
///   least `min_validity` seconds: `access_token`, `token_type`, `expires_at`, `scope`, and for the
///   sign-in's token its `id_token` while that is valid as long (with `id_token: true`, refreshed
///   for when it is not);
/// - `refused`: a server refused `account`'s `access_token`: the next `token` brings another;
/// - `proof`: a DPoP proof (RFC 9449) of `account`'s key for `method` and `url`, with `nonce` and
///   the `access_token` it goes with (its `ath`).
///
/// An answer has `ok`; a refusal has `error` (`code`, `message`). A refresh token or a key is never
/// in any answer.
public struct AgentMessage: Sendable, Equatable {
    /// The protocol version this module speaks.
    public static let version: Int64 = 1
    /// The largest frame either side accepts.
    public static let maximumLength = 1 << 20

    /// The message's members.
    public var object: JSONObject

    public init(_ object: JSONObject) {
        self.object = object
    }

    /// The message as a frame's payload.
    public func encoded() throws -> [UInt8] {
        let bytes = try JSONValue.object(object).encoded()
        guard bytes.count <= Self.maximumLength else {
            throw AuthError(.requestFailed, "an agent message is over \(Self.maximumLength) bytes")
        }
        return Array(bytes)
    }

    /// Reads a frame's payload: a JSON object.
    public init(decoding bytes: some Collection<UInt8>) throws {
        guard bytes.count <= Self.maximumLength,
            let object = try? JSONValue.parse(Data(bytes)).objectValue
        else {
            throw AuthError(.responseMalformed, "the agent's message is not a JSON object")
        }
        self.object = object
    }

    // MARK: - Requests

    /// A request for `operation` with `members`.
    public static func request(_ operation: String, _ members: JSONObject = [:]) -> AgentMessage {
        var object: JSONObject = ["v": .integer(version), "op": .string(operation)]
        for member in members { object[member.key] = member.value }
        return AgentMessage(object)
    }

    /// The request's operation, when it is one this version knows.
    public var operation: String? { object["op"]?.stringValue }

    // MARK: - Answers

    /// A successful answer with `members`.
    public static func answer(_ members: JSONObject = [:]) -> AgentMessage {
        var object: JSONObject = ["v": .integer(version), "ok": .bool(true)]
        for member in members { object[member.key] = member.value }
        return AgentMessage(object)
    }

    /// A refusal: `error`'s code and message (never a token: an `AuthError`'s text carries none).
    public static func refusal(_ error: AuthError) -> AgentMessage {
        AgentMessage([
            "v": .integer(version), "ok": .bool(false),
            "error": .object(["code": .string(error.code.rawValue), "message": .string(error.message)]),
        ])
    }

    /// The error of a refusal, as the agent said it; `nil` for a successful answer.
    public var error: AuthError? {
        if case .bool(true) = object["ok"] { return nil }
        let details = object["error"]?.objectValue
        let code = details?["code"]?.stringValue ?? AuthError.Code.requestFailed.rawValue
        let message = details?["message"]?.stringValue ?? "the agent refused the request"
        return AuthError(
            AuthError.Code(rawValue: code), "the agent refused: \(TerminalText.sanitized(message))",
            hint: "see the agent's log for why")
    }

    /// The string member `key`.
    public func string(_ key: String) -> String? { object[key]?.stringValue }

    /// The integer member `key`.
    public func integer(_ key: String) -> Int64? {
        if case .integer(let value) = object[key] { return value }
        return nil
    }
}
