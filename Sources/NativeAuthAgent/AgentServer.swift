internal import Foundation
internal import LenientJSON
public import Logging
internal import NIOCore
internal import NIOExtras
internal import NIOPosix
@_spi(Provider) public import NativeAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A token agent, as ssh-agent is for keys: it holds the sign-ins of a token store and answers
/// requests on a Unix socket for access tokens and DPoP proofs. The refresh tokens and the DPoP
/// keys never leave it; single-flight holds across every caller, local or forwarded, because the
/// agent's own authenticators refresh (once, under the store's lock).
///
/// ```swift
/// let agent = try await AgentServer.start(
///     accounts: ["default": authenticator], socket: AgentSocket.create(), logger: logger)
/// print(agent.socket.shellExport)  // NATIVEAUTH_AGENT_SOCK=…; export NATIVEAUTH_AGENT_SOCK;
/// try await agent.run()
/// ```
///
/// The socket is 0600 in a 0700 directory of its own. Every request is checked against the
/// ``AgentPolicy`` (the peer's uid from `SO_PEERCRED`, the account, the resource, a token's
/// lifetime), and leaves an audit line in the log: who (uid and pid), what, granted or refused.
public final class AgentServer: Sendable {
    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Where the agent listens.
    public let socket: AgentSocket
    /// Who may ask for what.
    public let policy: AgentPolicy
    private let accounts: [String: Authenticator]
    private let logger: Logger
    private let confirm: Confirmation?
    private let server: NIOAsyncChannel<Connection, Never>

    /// Asks the agent's owner whether a request may be answered (`ssh-add -c`): `true` to answer it.
    public typealias Confirmation = @Sendable (Request) async -> Bool

    /// A request the agent's owner is asked to confirm: who asks, and for what.
    public struct Request: Sendable, CustomStringConvertible {
        /// The asking process's uid and pid (`SO_PEERCRED`; for a forwarded socket, sshd's).
        public var uid: UInt32
        public var pid: Int32
        /// The operation (`token`).
        public var operation: String
        /// The account asked for.
        public var account: String
        /// The resource a token is asked for; `nil`: the sign-in's own token.
        public var resource: String?
        /// Whether the ID token is asked for too.
        public var idToken: Bool

        public var description: String {
            "uid \(uid) (pid \(pid)) asks for \(idToken ? "the ID token and an access token" : "an access token")"
                + " of account \(account)" + (resource.map { " for \($0)" } ?? "")
        }
    }

    private init(
        socket: AgentSocket, policy: AgentPolicy, accounts: [String: Authenticator], logger: Logger,
        confirm: Confirmation?, server: NIOAsyncChannel<Connection, Never>
    ) {
        self.socket = socket
        self.policy = policy
        self.accounts = accounts
        self.logger = logger
        self.confirm = confirm
        self.server = server
    }

    /// Binds `socket` (made 0600 before anyone can connect: the directory is 0700) and returns the
    /// agent, ready to ``run()``.
    ///
    /// - Parameters:
    ///   - accounts: The sign-ins served, by account name.
    ///   - socket: Where to listen (``AgentSocket/create(in:)``).
    ///   - policy: Who may ask for what; default: the agent's own uid, every account and resource.
    ///   - logger: Where the audit lines go (info level).
    ///   - confirm: Asks the agent's owner before each token is handed out (`ssh-add -c`); a
    ///     request it does not confirm is refused. `nil`: none is asked, unless the policy
    ///     requires confirmation (every token request is refused then). Proofs are not confirmed:
    ///     one is worth nothing without a token handed out.
    public static func start(
        accounts: [String: Authenticator], socket: AgentSocket, policy: AgentPolicy = AgentPolicy(),
        logger: Logger = Logger(label: "NativeAuth.agent"), confirm: Confirmation? = nil
    ) async throws -> AgentServer {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: socket.path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes)))
                    try channel.pipeline.syncOperations.addHandler(
                        LengthFieldPrepender(lengthFieldBitLength: .fourBytes))
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        guard chmod(socket.path, 0o600) == 0 else {
            try? await server.channel.close()
            throw AuthError(.configurationInvalid, "the agent's socket \(socket.path) cannot be made private")
        }
        return AgentServer(
            socket: socket, policy: policy, accounts: accounts, logger: logger, confirm: confirm, server: server)
    }

    /// Serves until cancelled (or ``stop()``); then the socket and its directory are removed.
    public func run() async throws {
        defer { socket.remove() }
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    /// Stops listening; ``run()`` returns once the requests in flight are answered.
    public func stop() async {
        try? await server.channel.close()
    }

    // MARK: - A connection

    private func serve(_ connection: Connection) async {
        let peer = await Peer.of(connection.channel)
        try? await connection.executeThenClose { inbound, outbound in
            for try await frame in inbound {
                let answer = await self.answer(Array(frame.readableBytesView), from: peer)
                try await outbound.write(ByteBuffer(bytes: try answer.encoded()))
            }
        }
    }

    /// The answer to one request, and its audit line.
    func answer(_ bytes: [UInt8], from peer: Peer?) async -> AgentMessage {
        let request: AgentMessage
        do {
            request = try AgentMessage(decoding: bytes)
        } catch {
            audit(peer, "malformed", granted: false, reason: "not a JSON object")
            return .refusal(AuthError(.requestFailed, "the request is not a JSON object"))
        }
        let operation = request.operation ?? "?"
        guard request.integer("v") == AgentMessage.version else {
            audit(peer, operation, granted: false, reason: "protocol version")
            return .refusal(
                AuthError(
                    .configurationInvalid,
                    "the agent speaks protocol version \(AgentMessage.version), not \(request.integer("v").map(String.init) ?? "none")"
                ))
        }
        guard let peer, policy.admits(uid: peer.uid) else {
            audit(peer, operation, granted: false, reason: "uid not allowed")
            return .refusal(
                AuthError(
                    .agentRefused, "the agent serves only the uids its policy names",
                    hint: "ask the agent's owner to name this uid in its policy"))
        }
        if operation == "token", policy.requiresConfirmation || confirm != nil {
            let asked = Request(
                uid: peer.uid, pid: peer.pid, operation: operation,
                account: TerminalText.sanitized(request.string("account") ?? "default"),
                resource: request.string("resource").map { Redaction.scrubURL(TerminalText.sanitized($0)) },
                idToken: request.object["id_token"] == .bool(true))
            guard let confirm, await confirm(asked) else {
                audit(peer, operation, request, granted: false, reason: "not confirmed")
                return .refusal(
                    AuthError(
                        .agentRefused, "the agent's owner did not confirm the request",
                        hint: "ask again, and confirm it where the agent runs"))
            }
        }
        do {
            let answer = try await perform(request, operation: operation)
            audit(peer, operation, request, granted: true)
            return answer
        } catch let error as AuthError {
            audit(peer, operation, request, granted: false, reason: error.code.rawValue)
            return .refusal(error)
        } catch {
            audit(peer, operation, request, granted: false, reason: "failed")
            return .refusal(AuthError(.requestFailed, "the agent could not answer (\(type(of: error)))"))
        }
    }

    private func perform(_ request: AgentMessage, operation: String) async throws -> AgentMessage {
        switch operation {
        case "status":
            return .answer([
                "agent_version": .string(NativeAuthVersion.current), "pid": .integer(Int64(getpid())),
                "accounts": .integer(Int64(accounts.count)),
            ])
        case "list":
            var listed: [JSONValue] = []
            for name in accounts.keys.sorted() where policy.admits(account: name) {
                guard let auth = accounts[name] else { continue }
                let tokens = try? await auth.currentTokens()
                listed.append(
                    .object([
                        "name": .string(name), "issuer": .string(auth.key.issuer),
                        "client_id": .string(auth.key.clientID), "signed_in": .bool(tokens != nil),
                        "dpop": .bool(tokens?.dpopKey != nil),
                    ]))
            }
            return .answer(["accounts": .array(listed)])
        case "token":
            let (name, auth) = try account(request)
            let minimum = policy.minimumValidity(asked: TimeInterval(request.integer("min_validity") ?? 60))
            if let resourceText = request.string("resource") {
                guard let resource = URL(string: resourceText), policy.admits(resource: resource) else {
                    throw AuthError(
                        .agentRefused, "the agent's policy does not hand out tokens for that resource",
                        hint: "ask the agent's owner to add it to the policy's resources")
                }
                let scopes = request.object["scopes"]?.arrayValue?.compactMap(\.stringValue)
                let token = try await auth.resourceToken(for: resource, scopes: scopes, minimumValidity: minimum)
                var answer = try tokenAnswer(
                    token.accessToken, type: token.tokenType, expiresAt: token.expiresAt, name)
                answer.object["scope"] = .string(token.scopes.joined(separator: " "))
                return answer
            }
            guard policy.admitsSignInTokens else {
                throw AuthError(.agentRefused, "the agent's policy hands out tokens for named resources only")
            }
            if request.object["id_token"] == .bool(true) {
                let tokens = try await auth.tokensWithValidIDToken(minimumValidity: minimum)
                var answer = try tokenAnswer(
                    tokens.accessToken, type: tokens.tokenType, expiresAt: tokens.expiresAt, name)
                answer.object["id_token"] = tokens.idToken.map { .string($0) }
                answer.object["scope"] = .string(tokens.scopes.joined(separator: " "))
                return answer
            }
            let token = try await auth.accessToken(minimumValidity: minimum)
            let tokens = try await auth.currentTokens()
            let type = tokens?.accessToken == token ? tokens?.tokenType ?? "Bearer" : "Bearer"
            var answer = try tokenAnswer(token, type: type, expiresAt: tokens?.expiresAt, name)
            answer.object["scope"] = tokens.map { .string($0.scopes.joined(separator: " ")) }
            // The ID token rides along while it is valid as long (kubectl's exec plugin takes it).
            if let tokens, tokens.accessToken == token, tokens.idTokenIsValid(at: Date(), leeway: minimum) {
                answer.object["id_token"] = tokens.idToken.map { .string($0) }
            }
            return answer
        case "refused":
            // A server refused a token the agent handed out: the next `token` brings another (a
            // refresh, once however many ask). Only a token that is still the held one counts.
            let (_, auth) = try account(request)
            guard let token = request.string("access_token"), !token.isEmpty else {
                throw AuthError(.requestFailed, "a `refused` request needs the `access_token` refused")
            }
            return .answer(["discarded": .bool(try await auth.discardAccessToken(token))])
        case "proof":
            let (_, auth) = try account(request)
            guard let method = request.string("method"), !method.isEmpty,
                let url = request.string("url").flatMap(URL.init(string:)), url.scheme != nil
            else {
                throw AuthError(.requestFailed, "a proof request needs `method` and an absolute `url`")
            }
            guard policy.admitsSignInTokens || policy.admits(resource: url) else {
                throw AuthError(
                    .agentRefused, "the agent's policy does not sign proofs for that URL",
                    hint: "ask the agent's owner to add its resource to the policy's resources")
            }
            guard let key = try await auth.currentTokens()?.dpopKey else {
                throw AuthError(.configurationInvalid, "the account's tokens are not bound to a DPoP key")
            }
            let proof = try key.proof(
                method: method, url: url, accessToken: request.string("access_token"),
                nonce: request.string("nonce"))
            return .answer(["proof": .string(proof)])
        default:
            throw AuthError(.requestFailed, "the agent knows no operation \(TerminalText.sanitized(operation))")
        }
    }

    private func account(_ request: AgentMessage) throws -> (String, Authenticator) {
        let name = request.string("account") ?? "default"
        guard policy.admits(account: name) else {
            throw AuthError(
                .agentRefused, "the agent's policy does not serve the account \(TerminalText.sanitized(name))")
        }
        guard let auth = accounts[name] else {
            throw AuthError(
                .loginRequired, "the agent holds no account \(TerminalText.sanitized(name))",
                hint: "sign in to it on the machine the agent runs on")
        }
        return (name, auth)
    }

    private func tokenAnswer(_ token: String, type: String, expiresAt: Date?, _ account: String) throws
        -> AgentMessage
    {
        var members: JSONObject = ["access_token": .string(token), "token_type": .string(type)]
        if var expiresAt {
            if let limit = policy.maximumLifetime {
                expiresAt = min(expiresAt, Date().addingTimeInterval(limit))
            }
            members["expires_at"] = .integer(Int64(expiresAt.timeIntervalSince1970))
        }
        return .answer(members)
    }

    private func audit(
        _ peer: Peer?, _ operation: String, _ request: AgentMessage? = nil, granted: Bool, reason: String? = nil
    ) {
        var metadata: Logger.Metadata = [
            "uid": "\(peer.map { String($0.uid) } ?? "?")", "pid": "\(peer.map { String($0.pid) } ?? "?")",
            "op": "\(TerminalText.sanitized(operation))", "granted": "\(granted)",
        ]
        if let account = request?.string("account") { metadata["account"] = "\(TerminalText.sanitized(account))" }
        if let resource = request?.string("resource") {
            metadata["resource"] = "\(Redaction.scrubURL(TerminalText.sanitized(resource)))"
        }
        if let url = request?.string("url") { metadata["url"] = "\(Redaction.scrubURL(TerminalText.sanitized(url)))" }
        if let reason { metadata["reason"] = "\(reason)" }
        logger.info("agent request", metadata: metadata)
    }
}

/// The process at the other end of a connection, from `SO_PEERCRED` (Linux) or `LOCAL_PEERCRED`
/// and `LOCAL_PEERPID` (macOS); `nil` (every request refused) where neither is known.
struct Peer: Sendable {
    var uid: UInt32
    var pid: Int32

    /// `struct ucred` of Linux's `<sys/socket.h>` (pid, uid, gid), which Glibc's module does not
    /// export without `_GNU_SOURCE`: the same three 32-bit fields in the same order.
    private struct Credentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    static func of(_ channel: any Channel) async -> Peer? {
        #if os(Linux)
            guard let provider = channel as? any SocketOptionProvider else { return nil }
            let peerCredentials: Int32 = 17  // SO_PEERCRED
            let credentials: Credentials? = try? await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerCredentials)
            ).get()
            return credentials.map { Peer(uid: $0.uid, pid: $0.pid) }
        #elseif canImport(Darwin)
            // macOS: LOCAL_PEERCRED gives the peer's `struct xucred` (its effective uid), and
            // LOCAL_PEERPID its pid, at level SOL_LOCAL (<sys/un.h>). Written from Apple's headers;
            // the test machines are Linux.
            guard let provider = channel as? any SocketOptionProvider else { return nil }
            let credentials: xucred? = try? await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_LOCAL), name: SocketOptionName(LOCAL_PEERCRED)
            ).get()
            let pid: pid_t? = try? await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_LOCAL), name: SocketOptionName(LOCAL_PEERPID)
            ).get()
            guard let credentials, credentials.cr_version == UInt32(XUCRED_VERSION) else { return nil }
            return Peer(uid: credentials.cr_uid, pid: pid ?? 0)
        #else
            return nil
        #endif
    }
}
