public import Foundation
internal import LenientJSON
internal import NIOCore
internal import NIOExtras
internal import NIOPosix
public import NativeAuth

/// Asks an agent (``AgentServer``, possibly on another machine through a forwarded socket) for
/// access tokens and DPoP proofs: it never gets a refresh token or a key.
///
/// It is a `TokenSource`: `Authenticator(provider:borrowingFrom:transport:)` with one sends
/// requests with the agent's tokens and proofs, as an authenticator with a store does. When the agent is gone
/// or does not answer within ``timeout``, every call fails with `agent_unavailable` (`AuthError.Code.agentUnavailable`):
/// nothing falls back to a copy of the tokens.
public struct AgentClient: Sendable {
    /// The agent's socket.
    public let socket: AgentSocket
    /// How long one request may take, connecting included.
    public let timeout: Duration

    /// A client of the agent at `socket`.
    public init(socket: AgentSocket, timeout: Duration = .seconds(30)) {
        self.socket = socket
        self.timeout = timeout
    }

    /// A client of the agent `NATIVEAUTH_AGENT_SOCK` names, when it is set.
    public static var fromEnvironment: AgentClient? { AgentSocket.fromEnvironment.map { AgentClient(socket: $0) } }

    /// A token the agent handed out.
    public struct Token: Sendable, CustomStringConvertible {
        /// The access token.
        public var accessToken: String
        /// `Bearer` or `DPoP`: a DPoP token goes with a proof from ``AgentClient/proof(account:method:url:accessToken:nonce:)``.
        public var tokenType: String
        /// When the agent says it expires (perhaps sooner than the token: its policy's limit).
        public var expiresAt: Date?
        /// The scopes it was granted, as the agent knows them.
        public var scopes: [String] = []
        /// The sign-in's ID token, when it was asked for.
        public var idToken: String?

        public var description: String {
            "AgentClient.Token(\(tokenType), expires \(expiresAt.map { "\($0)" } ?? "-"))"
        }
    }

    /// An account the agent serves.
    public struct Account: Sendable, Equatable {
        /// The account's name in the agent's store.
        public var name: String
        /// The issuer its tokens come from.
        public var issuer: String
        /// The client it signed in with.
        public var clientID: String
        /// Whether the agent holds tokens for it.
        public var signedIn: Bool
        /// Whether its tokens are bound to a DPoP key (the agent signs the proofs).
        public var dpop: Bool
    }

    /// The agent's version and process id, and how many accounts it holds.
    public func status() async throws -> (version: String, pid: Int, accounts: Int) {
        let answer = try await send(.request("status"))
        return (
            answer.string("agent_version") ?? "?", Int(answer.integer("pid") ?? 0), Int(answer.integer("accounts") ?? 0)
        )
    }

    /// The accounts the agent serves to this caller.
    public func accounts() async throws -> [Account] {
        let answer = try await send(.request("list"))
        return (answer.object["accounts"]?.arrayValue ?? []).compactMap { value in
            guard let object = value.objectValue, let name = object["name"]?.stringValue else { return nil }
            return Account(
                name: name, issuer: object["issuer"]?.stringValue ?? "",
                clientID: object["client_id"]?.stringValue ?? "",
                signedIn: object["signed_in"] == .bool(true), dpop: object["dpop"] == .bool(true))
        }
    }

    /// An access token of `account` (for `resource`, with `scopes`), valid for at least
    /// `minimumValidity` seconds; the agent refreshes when it must, once however many ask.
    /// With `idToken` (and no resource), the sign-in's ID token comes too, valid as long.
    public func accessToken(
        account: String = "default", resource: URL? = nil, scopes: [String]? = nil, minimumValidity: TimeInterval = 60,
        idToken: Bool = false
    ) async throws -> Token {
        let seconds = minimumValidity.isFinite ? min(max(minimumValidity, 0), 86_400).rounded(.up) : 86_400
        var members: JSONObject = ["account": .string(account), "min_validity": .integer(Int64(seconds))]
        if idToken { members["id_token"] = .bool(true) }
        if let resource { members["resource"] = .string(resource.absoluteString) }
        if let scopes { members["scopes"] = .array(scopes.map { .string($0) }) }
        let answer = try await send(.request("token", members))
        guard let token = answer.string("access_token"), !token.isEmpty else {
            throw AuthError(.responseMalformed, "the agent's answer has no access token")
        }
        if idToken, answer.string("id_token")?.isEmpty ?? true {
            throw AuthError(
                .loginRequired, "the agent's sign-in holds no ID token",
                hint: "sign in with the openid scope where the agent runs")
        }
        return Token(
            accessToken: token, tokenType: answer.string("token_type") ?? "Bearer",
            expiresAt: answer.integer("expires_at").map { Date(timeIntervalSince1970: TimeInterval($0)) },
            scopes: (answer.string("scope") ?? "").split(separator: " ").map(String.init),
            idToken: answer.string("id_token"))
    }

    /// Tells the agent that a server refused `accessToken`: its next token is another (the agent
    /// refreshes once, however many ask; a token it no longer holds changes nothing).
    public func refused(account: String = "default", accessToken: String, resource: URL? = nil) async throws {
        var members: JSONObject = ["account": .string(account), "access_token": .string(accessToken)]
        if let resource { members["resource"] = .string(resource.absoluteString) }
        _ = try await send(.request("refused", members))
    }

    /// A DPoP proof (RFC 9449) for `method` and `url`, signed by `account`'s key in the agent, with
    /// the `accessToken` it goes with and the server's `nonce`.
    public func proof(
        account: String = "default", method: String, url: URL, accessToken: String, nonce: String? = nil
    ) async throws -> String {
        var members: JSONObject = [
            "account": .string(account), "method": .string(method), "url": .string(url.absoluteString),
        ]
        members["access_token"] = .string(accessToken)
        if let nonce { members["nonce"] = .string(nonce) }
        let answer = try await send(.request("proof", members))
        guard let proof = answer.string("proof") else {
            throw AuthError(.responseMalformed, "the agent's answer has no proof")
        }
        return proof
    }

    // MARK: - One exchange

    /// Sends `request` and reads the one answer, within ``timeout``.
    func send(_ request: AgentMessage) async throws -> AgentMessage {
        let payload = try request.encoded()
        let socket = socket
        let answer: AgentMessage? = try await withThrowingTaskGroup(of: AgentMessage?.self) { group in
            group.addTask { try await Self.exchange(payload, at: socket) }
            group.addTask {
                try await Task.sleep(for: self.timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let answer else {
            throw AuthError(
                .agentUnavailable, "the agent at \(socket.path) did not answer within \(timeout)",
                hint: "check that the agent (and the SSH connection that forwards it) still runs")
        }
        if let error = answer.error { throw error }
        return answer
    }

    private static func exchange(_ payload: [UInt8], at socket: AgentSocket) async throws -> AgentMessage {
        let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socket.path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes)))
                        try channel.pipeline.syncOperations.addHandler(
                            LengthFieldPrepender(lengthFieldBitLength: .fourBytes))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw AuthError(
                .agentUnavailable, "no agent answers at \(socket.path)",
                hint:
                    "start one (`agent`) and set \(AgentSocket.environmentVariable), or unset it to use the token store",
                underlying: error)
        }
        do {
            return try await connection.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: payload))
                for try await frame in inbound {
                    guard frame.readableBytes <= AgentMessage.maximumLength else { break }
                    return try AgentMessage(decoding: Array(frame.readableBytesView))
                }
                throw AuthError(
                    .agentUnavailable, "the agent at \(socket.path) closed the connection without an answer",
                    hint: "see the agent's log, and check that the SSH connection that forwards it still runs")
            }
        } catch let error as AuthError {
            throw error
        } catch {
            // A forwarded socket whose agent is gone: sshd accepts, then the far end resets.
            throw AuthError(
                .agentUnavailable, "the connection to the agent at \(socket.path) broke before an answer",
                hint: "check that the agent (and the SSH connection that forwards it) still runs",
                underlying: error)
        }
    }
}

extension AgentClient: TokenSource {
    public func tokens(
        account: String, resource: URL?, scopes: [String]?, minimumValidity: TimeInterval, idToken: Bool
    ) async throws -> TokenSet {
        let token = try await accessToken(
            account: account, resource: resource, scopes: scopes, minimumValidity: minimumValidity, idToken: idToken)
        return TokenSet(
            accessToken: token.accessToken, tokenType: token.tokenType, idToken: token.idToken, scopes: token.scopes,
            expiresAt: token.expiresAt, issuedAt: Date())
    }
}

extension AuthError.Code {
    /// The token agent (`NATIVEAUTH_AGENT_SOCK`) is gone or does not answer: nothing falls back to
    /// a copy of the tokens.
    public static let agentUnavailable = AuthError.Code(rawValue: "agent_unavailable")
    /// The agent's policy refuses the request (the caller's uid, the account, the resource); the
    /// agent's log has an audit line for it.
    public static let agentRefused = AuthError.Code(rawValue: "agent_refused")
}
