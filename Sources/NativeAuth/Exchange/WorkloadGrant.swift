public import Foundation
internal import HTTPTypes
internal import LenientJSON

/// Where a workload's subject token comes from: read again for every token request, so that a
/// token the platform rotates (a Kubernetes projected service-account token, a CI job's OIDC
/// token) is never sent stale.
///
/// Printing a source names where it reads from, never a token.
public struct SubjectTokenSource: Sendable, CustomStringConvertible {
    enum Origin: Sendable {
        case value(String)
        case file(String)
        case command([String], timeout: Duration, environment: ChildEnvironment)
        case gitHubActions(audience: String?, environment: [String: String])
    }

    let origin: Origin

    /// A token given in code (it is not read again: use it for tokens that do not rotate).
    public static func value(_ token: String) -> SubjectTokenSource { .init(origin: .value(token)) }

    /// A file, read whole (surrounding whitespace dropped) at each request: a Kubernetes projected
    /// service-account token, `AZURE_FEDERATED_TOKEN_FILE`, a token another agent writes.
    public static func file(_ path: String) -> SubjectTokenSource { .init(origin: .file(path)) }

    /// A command run without a shell at each request; its standard output (surrounding whitespace
    /// dropped) is the token. It gets only the variables of the program's environment that
    /// `environment` passes on, and no standard input. One that runs longer than `timeout` is
    /// stopped with its process group (`SIGTERM`, then `SIGKILL`) and the request fails: a hung
    /// command never holds the renewal, and every caller waiting on it, for ever.
    ///
    /// - Parameters:
    ///   - arguments: The program (a path, or a name looked up in `PATH`) and its arguments.
    ///   - timeout: How long it may run; 30 seconds by default.
    ///   - environment: The variables it gets; ``ChildEnvironment/standard`` by default. Add those
    ///     the command needs (`VAULT_ADDR`, `AWS_*`) with ``ChildEnvironment/adding(_:)``.
    public static func command(
        _ arguments: [String], timeout: Duration = .seconds(30), environment: ChildEnvironment = .standard
    ) -> SubjectTokenSource {
        .init(origin: .command(arguments, timeout: timeout, environment: environment))
    }

    /// A command line split into words as a POSIX shell splits them (quotes and backslashes), then
    /// run without a shell, as ``command(_:timeout:environment:)``.
    public static func command(
        line: String, timeout: Duration = .seconds(30), environment: ChildEnvironment = .standard
    ) -> SubjectTokenSource {
        .init(origin: .command(ChildProcess.split(line), timeout: timeout, environment: environment))
    }

    /// The OIDC token of a GitHub Actions job (`permissions: id-token: write`), asked of the
    /// runner at each request with `ACTIONS_ID_TOKEN_REQUEST_URL` and
    /// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`.
    ///
    /// - Parameters:
    ///   - audience: The `aud` to ask for (the authorization server's expected audience).
    ///   - environment: Where the two variables are read.
    public static func gitHubActions(
        audience: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> SubjectTokenSource {
        .init(origin: .gitHubActions(audience: audience, environment: environment))
    }

    public var description: String {
        switch origin {
        case .value: "a token given in code"
        case .file(let path): "the file \(path)"
        case .command(let arguments, _, _): "the command `\(arguments.joined(separator: " "))`"
        case .gitHubActions: "the GitHub Actions OIDC token"
        }
    }

    /// The largest token read.
    static let maximumBytes = 64 * 1024

    /// Reads the token now.
    ///
    /// - Throws: ``AuthError``: ``AuthError/Code/configurationInvalid`` for a file that cannot be
    ///   read, a command that cannot be started or GitHub Actions variables that are missing;
    ///   ``AuthError/Code/tokenExchangeFailed`` for a command that fails, an empty token, or a
    ///   runner that refuses; each saying which source it was.
    package func read(using transport: any HTTPTransport) async throws(AuthError) -> String {
        let text: String
        switch origin {
        case .value(let token):
            text = token
        case .file(let path):
            let file = try SecretFile(path, what: "subject token file", maxBytes: Self.maximumBytes)
            text = String(decoding: file.contents, as: UTF8.self)
        case .command(let arguments, let timeout, let environment):
            text = try await run(arguments, timeout: timeout, environment: environment)
        case .gitHubActions(let audience, let environment):
            text = try await gitHubActionsToken(audience: audience, environment: environment, transport: transport)
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
            throw AuthError(
                .tokenExchangeFailed,
                "the subject token from \(self) is " + (token.isEmpty ? "empty" : "not one token (it has spaces)"),
                hint: "check what \(self) holds")
        }
        return token
    }

    private func run(_ arguments: [String], timeout: Duration, environment: ChildEnvironment) async throws(AuthError)
        -> String
    {
        guard let name = arguments.first, !name.isEmpty else {
            throw AuthError(.configurationInvalid, "the subject token command is empty")
        }
        guard let executable = ChildProcess.executable(name) else {
            throw AuthError(
                .configurationInvalid, "the subject token command \(name) was not found",
                hint: "give its full path, or put it on PATH")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.environment = ChildProcess.childEnvironment(ProcessInfo.processInfo.environment, allowing: environment)
        let output = Pipe()
        process.standardOutput = output
        let reader = output.fileHandleForReading
        let result: (status: Int32, collected: (data: Data, complete: Bool), timedOut: Bool)
        do {
            // In its own process group, which the deadline stops whole; reading stops at the
            // deadline too, whatever holds the pipe (a wrapper script's child).
            result = try await ChildProcess.runToEnd(process, timeout: timeout) { deadline in
                ChildProcess.readToEnd(reader, limit: Self.maximumBytes, deadline: deadline)
            }
        } catch {
            throw AuthError(
                .configurationInvalid, "the subject token command \(name) could not be started", underlying: error)
        }
        guard !result.timedOut, result.collected.complete else {
            throw AuthError(
                .timeout, "the subject token command \(name) ran longer than \(timeout) and was stopped",
                hint: "run it yourself to see where it waits")
        }
        guard result.status == 0 else {
            throw AuthError(
                .tokenExchangeFailed, "the subject token command \(name) exited with status \(result.status)",
                hint: "run it yourself to see why")
        }
        guard result.collected.data.count <= Self.maximumBytes else {
            throw AuthError(.tokenExchangeFailed, "the subject token command \(name) printed more than 64 KiB")
        }
        return String(decoding: result.collected.data, as: UTF8.self)
    }

    private func gitHubActionsToken(
        audience: String?,
        environment: [String: String],
        transport: any HTTPTransport
    ) async throws(AuthError) -> String {
        guard let address = environment["ACTIONS_ID_TOKEN_REQUEST_URL"], !address.isEmpty,
            let bearer = environment["ACTIONS_ID_TOKEN_REQUEST_TOKEN"], !bearer.isEmpty
        else {
            throw AuthError(
                .configurationInvalid,
                "ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set: this is not a GitHub"
                    + " Actions job allowed OIDC tokens",
                hint: "give the job `permissions: id-token: write`")
        }
        guard var components = URLComponents(string: address), components.host != nil else {
            throw AuthError(.configurationInvalid, "ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
        }
        if let audience {
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "audience", value: audience)]
        }
        guard let url = components.url else {
            throw AuthError(.configurationInvalid, "ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
        }
        var request = HTTPRequest(method: .get, url: url)
        request.headerFields[.authorization] = "Bearer " + bearer
        request.headerFields[.accept] = "application/json"
        let response: HTTPResponse
        let body: Data
        do {
            (response, body) = try await transport.send(request, body: nil)
        } catch let error as AuthError {
            throw error.scrubbing([bearer])
        } catch {
            throw AuthError(.network, "the GitHub Actions runner could not be reached", underlying: error)
        }
        guard response.status.code == 200 else {
            throw AuthError(
                .tokenExchangeFailed,
                "the GitHub Actions runner refused the OIDC token request (HTTP \(response.status.code))",
                hint: "check the job's `permissions: id-token: write`", status: response.status.code)
        }
        guard let value = (try? JSONValue.parse(body).objectValue?.string("value")) ?? nil else {
            throw AuthError(.responseMalformed, "the GitHub Actions runner's answer has no \"value\"")
        }
        return value
    }
}

/// How a workload gets tokens without a person, besides client credentials: a token from
/// elsewhere, traded (RFC 8693 token exchange) or presented (RFC 7523 JWT bearer), read from its
/// ``SubjectTokenSource`` again at every request, the renewals too.
///
/// Set it as ``ProviderConfiguration/workload``; ``Authenticator/login(_:scopes:)`` with ``SignInMethod/workload`` signs
/// in with it, and the tokens it gets are renewed with it when they expire.
public struct WorkloadGrant: Sendable, CustomStringConvertible {
    /// The grant: ``Grant/Kind/tokenExchange`` or ``Grant/Kind/jwtBearer``.
    public let kind: Grant.Kind
    /// Where the subject token (or the JWT bearer assertion) comes from.
    public let subject: SubjectTokenSource
    /// The subject token's type (token exchange).
    public let subjectTokenType: Grant.TokenType
    /// The actor token and its type, for delegation (token exchange).
    public let actor: (source: SubjectTokenSource, type: Grant.TokenType)?
    /// The `audience` to ask for (token exchange).
    public let audience: String?

    /// A token exchange (RFC 8693).
    ///
    /// - Parameters:
    ///   - subject: Where the subject token comes from.
    ///   - type: Its type; default a JWT.
    ///   - actor: Where an actor token comes from, and its type, for delegation.
    ///   - audience: The `audience` to ask for.
    public static func tokenExchange(
        subject: SubjectTokenSource,
        type: Grant.TokenType = .jwt,
        actor: (source: SubjectTokenSource, type: Grant.TokenType)? = nil,
        audience: String? = nil
    ) -> WorkloadGrant {
        WorkloadGrant(kind: .tokenExchange, subject: subject, subjectTokenType: type, actor: actor, audience: audience)
    }

    /// A JWT bearer grant (RFC 7523 §2.1): the JWT from `assertion` is the grant.
    public static func jwtBearer(_ assertion: SubjectTokenSource) -> WorkloadGrant {
        WorkloadGrant(kind: .jwtBearer, subject: assertion, subjectTokenType: .jwt, actor: nil, audience: nil)
    }

    public var description: String {
        kind == .jwtBearer ? "a JWT bearer grant from \(subject)" : "a token exchange of \(subject)"
    }

    /// The grant to send now: the sources read again.
    package func grant(scopes: [String], transport: any HTTPTransport) async throws(AuthError) -> Grant {
        let token = try await subject.read(using: transport)
        if kind == .jwtBearer { return .jwtBearer(assertion: token, scopes: scopes) }
        var actorToken: (token: String, type: Grant.TokenType)?
        if let actor { actorToken = (try await actor.source.read(using: transport), actor.type) }
        return .tokenExchange(
            subjectToken: token, subjectTokenType: subjectTokenType, actorToken: actorToken, audience: audience,
            scopes: scopes)
    }
}
