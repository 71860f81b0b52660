internal import Foundation
internal import LenientJSON
@_spi(Provider) internal import NativeAuth
internal import NativeAuthPresenters

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The forms `token --format` prints a token in, for other programs.
enum TokenFormat: String, CaseIterable, Sendable {
    /// The access token alone, on one line.
    case raw
    /// One JSON object: `access_token`, `token_type`, `expires_at`, `scope`.
    case json
    /// The value of an `Authorization` header: `Bearer <token>`.
    case header
    /// A Kubernetes `ExecCredential` (client-go's credential plugins).
    case execCredential = "exec-credential"
    /// The `DPoP` header of one request (RFC 9449), for a DPoP-bound token.
    case dpopProof = "dpop-proof"
    /// An AWS CLI `credential_process`'s JSON: temporary credentials from STS for the ID token.
    case awsCredentialProcess = "aws-credential-process"
    /// The response of a Google executable-sourced credential.
    case googleExecutable = "google-executable"

    /// Whether `--token-kind id` goes with it.
    var carriesIDToken: Bool { ![.json, .dpopProof].contains(self) }

    /// Whether it feeds a cloud's credentials, which need the stored sign-in (its ID token).
    var isCloud: Bool { self == .awsCredentialProcess || self == .googleExecutable }

    /// The text printed for `tokens`, without the final line break: of its access token, or of its
    /// ID token with `kind` ``TokenKind/id`` (`raw`, `header` and `exec-credential`).
    func text(_ tokens: TokenSet, execInfo: KubernetesExecInfo, kind: TokenKind = .access) throws -> String {
        if self == .googleExecutable {
            return try GoogleExecutable.success(tokens, kind: kind)
        }
        guard self != .awsCredentialProcess else {
            throw AuthError(.configurationInvalid, "aws-credential-process prints STS's credentials, not a token")
        }
        if kind == .id, let idToken = tokens.idToken {
            switch self {
            case .raw, .dpopProof, .json, .awsCredentialProcess, .googleExecutable: return idToken
            case .header: return "Bearer \(idToken)"
            case .execCredential:
                var status: JSONObject = ["token": .string(idToken)]
                if let expiry = tokens.idTokenExpiresAt {
                    status["expirationTimestamp"] = .string(TokenOutput.timestamp(expiry))
                }
                return try Self.execCredential(status, execInfo: execInfo)
            }
        }
        switch self {
        case .raw, .dpopProof, .awsCredentialProcess, .googleExecutable:
            return tokens.accessToken
        case .header:
            return "\(TokenOutput.scheme(of: tokens)) \(tokens.accessToken)"
        case .json:
            let object: JSONObject = [
                "access_token": .string(tokens.accessToken),
                "token_type": .string(TokenOutput.scheme(of: tokens)),
                "expires_at": tokens.expiresAt.map { .string(TokenOutput.timestamp($0)) } ?? .null,
                "scope": .array(tokens.scopes.map { .string($0) }),
            ]
            return try JSONValue.object(object).encodedString()
        case .execCredential:
            var status: JSONObject = ["token": .string(tokens.accessToken)]
            if let expiry = tokens.expiresAt { status["expirationTimestamp"] = .string(TokenOutput.timestamp(expiry)) }
            return try Self.execCredential(status, execInfo: execInfo)
        }
    }

    private static func execCredential(_ status: JSONObject, execInfo: KubernetesExecInfo) throws -> String {
        let object: JSONObject = [
            "apiVersion": .string(execInfo.apiVersion),
            "kind": "ExecCredential",
            "status": .object(status),
        ]
        return try JSONValue.object(object).encodedString()
    }
}

/// Which token `token --token-kind` hands out.
enum TokenKind: String, CaseIterable, Sendable {
    /// The ID token: what a Kubernetes API server's OIDC authenticator validates (a JWT whose `aud`
    /// is the client id). The default of `exec-credential` for a sign-in that holds one.
    case id
    /// The access token: the default of every other format, and for clusters that validate
    /// access tokens.
    case access
}

/// Formatting shared by the outputs for other programs.
enum TokenOutput {
    /// The `Authorization` scheme of `tokens`: `Bearer` (whatever its case in the token response,
    /// RFC 6750 §4), else the type as the server gave it.
    static func scheme(of tokens: TokenSet) -> String {
        tokens.tokenType.lowercased() == "bearer" || tokens.tokenType.isEmpty ? "Bearer" : tokens.tokenType
    }

    /// The `DPoP` header's value for a request with `method` to `url`, signed with the key the
    /// access token is bound to.
    ///
    /// - Throws: ``AuthError`` (``AuthError/Code/configurationInvalid``) when the URL is not one, or
    ///   the token is not DPoP-bound.
    static func proof(for tokens: TokenSet, method: String, url text: String) throws(AuthError) -> String {
        guard let url = URL(string: text), url.scheme != nil, url.host?.isEmpty == false else {
            throw AuthError(.configurationInvalid, "--url \(Redaction.scrubURL(text)) is not an absolute URL")
        }
        guard tokens.isDPoPBound, let key = tokens.dpopKey else {
            throw AuthError(
                .configurationInvalid, "the access token is a bearer token: it needs no DPoP proof",
                hint: "send it with --format header alone")
        }
        return try key.proof(
            method: method.uppercased(), url: url, accessToken: tokens.accessToken, now: Date())
    }

    /// Why an access token will not pass for an ID token at a Kubernetes API server (a JWT whose
    /// `aud` holds the client id): it is opaque, or for another audience; `nil` when it would pass.
    static func audienceProblem(of tokens: TokenSet, clientID: String) -> String? {
        guard let claims = JOSEParsing.parts(ofCompactJWS: tokens.accessToken)?.claims else {
            return "it is not a JWT"
        }
        let audience: [String] =
            switch claims["aud"] {
            case .string(let one): [one]
            case .array(let many): many.compactMap(\.stringValue)
            default: []
            }
        guard !audience.contains(clientID) else { return nil }
        return audience.isEmpty ? "it names no audience" : "its audience is not the client id"
    }

    /// RFC 3339 in UTC, whole seconds (`2026-11-25T09:30:00Z`), as Kubernetes writes times.
    static func timestamp(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(.iso8601)
    }

    /// Refuses a value that would break a line-based protocol (git's) or a terminal: a line break
    /// or NUL in a token from a server.
    static func checkPrintable(_ token: String) throws(AuthError) {
        guard !token.isEmpty, !token.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) else {
            throw AuthError(
                .responseMalformed, "the access token is empty or holds a line break; it is not passed on",
                hint: "sign in again; if this persists, the server issues malformed tokens")
        }
    }
}

/// What `KUBERNETES_EXEC_INFO` tells a credential plugin: the `ExecCredential` version kubectl
/// wants back and whether the person can interact (client-go's exec plugins).
struct KubernetesExecInfo: Equatable, Sendable {
    static let versions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    /// The `apiVersion` to answer with.
    var apiVersion: String
    /// Whether a sign-in may open a browser and wait (`spec.interactive`).
    var interactive: Bool

    /// Parses the variable's value; without one (run by hand), `v1`, interactive when standard
    /// error is a terminal.
    static func parse(_ value: String?, stderrIsTerminal: Bool = isatty(STDERR_FILENO) == 1) throws(AuthError)
        -> KubernetesExecInfo
    {
        guard let value, !value.isEmpty else {
            return KubernetesExecInfo(apiVersion: versions[0], interactive: stderrIsTerminal)
        }
        let problem = { (what: String) in
            AuthError(
                .configurationInvalid, "KUBERNETES_EXEC_INFO \(what)",
                hint: "it is set by kubectl for credential plugins; unset it to run the command by hand")
        }
        guard value.utf8.count <= 1 << 20,
            let object = try? JSONValue.parse(Data(value.utf8)).objectValue
        else { throw problem("is not a JSON object") }
        guard let version = object["apiVersion"]?.stringValue else { throw problem("has no apiVersion") }
        guard versions.contains(version) else {
            throw problem(
                "asks for \(version); this plugin answers \(versions.joined(separator: " and "))"
                    + " (set apiVersion in the kubeconfig's exec entry)")
        }
        var interactive = false
        if let spec = object["spec"] {
            guard let spec = spec.objectValue else { throw problem("has a spec that is not an object") }
            switch spec["interactive"] {
            case .bool(let value)?: interactive = value
            case nil, .null?: interactive = false
            default: throw problem("has an interactive flag that is not true or false")
            }
        }
        return KubernetesExecInfo(apiVersion: version, interactive: interactive)
    }
}

/// Getting a valid token for a program that waits on this one.
enum TokenSupply {
    /// What to do when the account must sign in.
    enum SignIn: Sendable {
        /// Fail at once; the error adds why the command could not ask (`reason`), when given.
        case never(reason: String?)
        /// Sign in with the system browser (its URL on stderr), then go on.
        case withBrowser
    }

    /// A valid access token of the prepared account, with its set (with `idToken`, a valid ID
    /// token too, refreshed for even when the access token is good); when a sign-in is needed,
    /// what `signIn` says.
    static func tokens<Tool: NativeAuthTool>(
        _ prepared: PreparedAccount,
        signIn: SignIn,
        tool: Tool.Type,
        idToken: Bool = false
    ) async throws -> TokenSet {
        let authenticator = prepared.authenticator
        do {
            if idToken {
                let tokens = try await authenticator.tokensWithValidIDToken()
                try TokenOutput.checkPrintable(tokens.idToken ?? "")
                return tokens
            }
            let token = try await authenticator.accessToken()
            try TokenOutput.checkPrintable(token)
            guard var tokens = try await authenticator.currentTokens() else {
                return TokenSet(accessToken: token, issuedAt: Date())
            }
            if tokens.accessToken != token {
                // Refreshed by another process between the two calls: the token asked for, no expiry.
                tokens.accessToken = token
                tokens.expiresAt = nil
            }
            return tokens
        } catch let error as AuthError where error.isLoginRequired {
            // Borrowed from an agent: the sign-in is the agent's to make, where it runs.
            if authenticator.borrowsTokens { throw error }
            if case .never(let reason) = signIn {
                guard let reason else { throw error }
                var refused = error
                refused.message += "; \(reason)"
                throw refused
            }
            CommandSupport.notice("\(error.message): signing in")
            let result = try await browserSignIn(prepared)
            try TokenOutput.checkPrintable(result.tokens.accessToken)
            return result.tokens
        }
    }

    /// Signs in with the system browser (a loopback redirect, five minutes at most) as the account
    /// the options name, and says who signed in.
    static func browserSignIn(_ prepared: PreparedAccount) async throws
        -> Accounts.SignIn
    {
        // The port the client was registered with, for a server that matches redirect URIs exactly.
        let port = prepared.authenticator.provider.configuration.loopbackRedirectPort ?? 0
        let presenter = LoopbackPresenter(
            configuration: .init(port: port, timeout: .seconds(300), opener: SystemBrowserOpener()))
        let accounts = prepared.accounts
        let name = prepared.named?.name
        let result = try await CommandSupport.cancellingOnSignals {
            try await accounts.login(.browser(presenter), name: name)
        }
        CommandSupport.notice("signed in as \(result.account)")
        return result
    }

    /// Signs the person in in the browser into the account `name` (whatever the ID token would
    /// name it), leaving which account is active as it was; returns `name`.
    static func browserSignIn(_ prepared: PreparedAccount, into name: String) async throws -> String {
        try Accounts.validate(name: name)
        let port = prepared.authenticator.provider.configuration.loopbackRedirectPort ?? 0
        let presenter = LoopbackPresenter(
            configuration: .init(port: port, timeout: .seconds(300), opener: SystemBrowserOpener()))
        let authenticator = prepared.accounts.authenticator(for: name)
        _ = try await CommandSupport.cancellingOnSignals { try await authenticator.login(.browser(presenter)) }
        CommandSupport.notice("signed in as \(name)")
        return name
    }
}

extension TokenSupply.SignIn {
    /// Whether a named account that is not signed in yet may be signed in under that name.
    var mayNameNewAccount: Bool {
        if case .withBrowser = self { return true }
        return false
    }
}
