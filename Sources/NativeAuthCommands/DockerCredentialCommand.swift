public import ArgumentParser
internal import Foundation
internal import LenientJSON
@_spi(Provider) internal import NativeAuth

/// Docker's credential-helper protocol (docker/docker-credential-helpers): the action as the
/// argument, the request on standard input, the answer as JSON on standard output.
enum DockerCredentialProtocol {
    /// The most a helper reads: a server URL, or a small JSON object.
    static let inputLimit = 64 * 1024

    /// What helpers print, with exit status 1, for a server they hold nothing for; Docker's client
    /// recognises exactly this text (`credentials.ErrCredentialsNotFound`).
    static let notFound = "credentials not found in native keychain"

    /// The registry host of a server URL as Docker writes it (`registry.example.com`,
    /// `https://registry.example.com:5000/v2/`), in lower case with its port.
    static func registry(_ text: String) throws(AuthError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.contains(where: { $0.isWhitespace || $0 == "\0" }), let address = HostAddress(trimmed) else {
            throw AuthError(
                .configurationInvalid, "the request is not a registry's server URL",
                hint: "Docker writes the registry's URL on standard input, such as registry.example.com")
        }
        let scheme = address.components.scheme?.lowercased()
        guard scheme == "https" || (scheme == "http" && EndpointPolicy.isLoopback(host: address.name)) else {
            throw AuthError(
                .configurationInvalid,
                "\(trimmed): tokens are only given to registries over HTTPS (http:// only on loopback)")
        }
        return address.host
    }

    /// The server URL of a request (`get`, `erase`): the whole input, one line.
    static func serverURL(_ data: Data) throws(AuthError) -> String {
        guard let text = String(data: data, encoding: .utf8) else {
            throw AuthError(.configurationInvalid, "the request is not UTF-8 text")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !trimmed.contains("\n") else {
            throw AuthError(
                .configurationInvalid, "the request is not one server URL",
                hint: "Docker writes the registry's URL on standard input, such as registry.example.com")
        }
        return trimmed
    }

    /// The `ServerURL` of a `store` request: `{"ServerURL": …, "Username": …, "Secret": …}`.
    static func storedServerURL(_ data: Data) throws(AuthError) -> (serverURL: String, unknownKeys: [String]) {
        guard let object = try? JSONValue.parse(data).objectValue else {
            throw AuthError(.configurationInvalid, "the store request is not a JSON object")
        }
        guard let server = object["ServerURL"]?.stringValue, !server.isEmpty else {
            throw AuthError(.configurationInvalid, "the store request has no ServerURL")
        }
        let known: Set<String> = ["ServerURL", "Username", "Secret"]
        return (server, object.keys.filter { !known.contains($0) })
    }
}

/// The options the Docker commands share: the registry and the user name.
struct DockerOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The registry: HOST[:PORT].", valueName: "host"))
    var registry: String

    @Option(
        name: .customLong("docker-username"),
        help: ArgumentHelp(
            "The user name Docker sends with the token (default: oauth2accesstoken).", valueName: "name"))
    var dockerUsername: String?

    /// The user name: `oauth2accesstoken` unless given.
    var username: String { dockerUsername ?? "oauth2accesstoken" }
}

/// `docker-credential get|store|erase|list`: Docker's credential-helper protocol for one registry
/// that accepts the provider's OAuth access tokens as passwords.
///
/// - `get`: for the configured registry (`--registry`), prints
///   `{"ServerURL": …, "Username": …, "Secret": <access token>}`, refreshing when needed; it never
///   signs in (Docker runs helpers without a terminal): run `<tool> login` first. For any other
///   registry it prints Docker's `credentials not found in native keychain` and exits 1.
/// - `list`: `{"https://REGISTRY": "USERNAME"}` while an account is signed in, else `{}`.
/// - `erase` (`docker logout`): drops the access token, so that the next `get` gets a new one; the
///   sign-in stays (`<tool> logout` ends it).
/// - `store` (`docker login`): refused with a message; the tokens come from `<tool> login`.
///
/// Name it for one registry with `setup-docker`, or by hand: an executable
/// `docker-credential-NAME` on `PATH` that runs `<tool> docker-credential --registry HOST "$@"`,
/// and `"credHelpers": {"HOST": "NAME"}` in `~/.docker/config.json`.
public struct DockerCredentialCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "docker-credential",
            abstract: "Docker's credential helper for one registry (run by Docker; see setup-docker).",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: ToolOptions<Tool>
    @OptionGroup var docker: DockerOptions

    @Argument(help: ArgumentHelp("What Docker asks: get, store, erase or list.", valueName: "get|store|erase|list"))
    var action: String

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func validate() throws {
        guard ["get", "store", "erase", "list"].contains(action) else {
            throw ValidationError("unknown action '\(action)'; Docker asks get, store, erase or list")
        }
    }

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            let registry = try DockerCredentialProtocol.registry(docker.registry)
            let dockerUsername = docker.username
            let input =
                action == "list"
                ? Data() : try CommandSupport.readStandardInput(limit: DockerCredentialProtocol.inputLimit)
            switch action {
            case "store":
                let (server, unknown) = try DockerCredentialProtocol.storedServerURL(input)
                if !unknown.isEmpty {
                    CommandSupport.notice("ignored \(unknown.joined(separator: ", ")) in the request")
                }
                throw AuthError(
                    .configurationInvalid,
                    "\(Tool.toolName) does not store passwords for \(server): the tokens of \(registry) come from"
                        + " signing in", hint: "run `\(Tool.toolName) login`; `docker login` is not needed")
            case "list":
                let prepared = try await options.prepare(use: .describe)
                let signedIn = try await prepared.authenticator.currentTokens() != nil
                let object: JSONObject = signedIn ? ["https://\(registry)": .string(dockerUsername)] : [:]
                CommandSupport.printLine(try JSONValue.object(object).encodedString())
            case "erase":
                let server = try DockerCredentialProtocol.serverURL(input)
                guard try DockerCredentialProtocol.registry(server) == registry else { return }
                let prepared = try await options.prepare(use: .describe)
                if let tokens = try await prepared.authenticator.currentTokens() {
                    try await prepared.authenticator.discardAccessToken(tokens.accessToken)
                }
                CommandSupport.notice(
                    "Docker forgets \(registry); \(Tool.toolName) stays signed in (`\(Tool.toolName) logout` ends that)"
                )
            default:
                let server = try DockerCredentialProtocol.serverURL(input)
                guard try DockerCredentialProtocol.registry(server) == registry else {
                    CommandSupport.printLine(DockerCredentialProtocol.notFound)
                    throw ExitCode(1)
                }
                let prepared = try await options.prepare(use: .act)
                let tokens = try await TokenSupply.tokens(
                    prepared, signIn: .never(reason: "Docker runs this helper without a terminal"), tool: Tool.self)
                let object: JSONObject = [
                    "ServerURL": .string(server), "Username": .string(dockerUsername),
                    "Secret": .string(tokens.accessToken),
                ]
                CommandSupport.printLine(try JSONValue.object(object).encodedString())
            }
        }
    }
}
