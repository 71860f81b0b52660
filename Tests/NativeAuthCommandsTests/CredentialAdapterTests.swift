import Foundation
import LenientJSON
import NativeAuth
import TestSupport
import Testing

@testable import NativeAuthCommands

/// The protocols of the adapters for other programs, in memory: git's credential-helper format,
/// kubectl's `KUBERNETES_EXEC_INFO` and `ExecCredential`, Docker's helper requests, the token
/// formats, and dropping a refused access token.
@Suite(.testLogging) struct CredentialAdapterTests {
    let tokens = TokenSet(
        accessToken: "access-token-value-0123456789", tokenType: "bearer", refreshToken: "refresh-token-value",
        scopes: ["openid", "api"], expiresAt: Date(timeIntervalSince1970: 1_800_000_000.75),
        issuedAt: Date(timeIntervalSince1970: 1_799_996_400))

    // MARK: - git

    @Test func gitRequestsParseAsGitWritesThem() throws {
        let request = try GitCredentialRequest.parse(
            Data(
                """
                capability[]=authtype
                protocol=https
                host=git.example.test:8443
                wwwauth[]=Basic realm="x"
                wwwauth[]=Bearer realm="y"
                username=oauth2

                host=ignored-after-the-blank-line

                """.utf8))
        #expect(request.protocol == "https" && request.host == "git.example.test:8443" && request.username == "oauth2")
        #expect(request.wwwauth == [#"Basic realm="x""#, #"Bearer realm="y""#])
        #expect(request.wantsBearer)
        #expect(request.unknownKeys.isEmpty)

        let url = try GitCredentialRequest.parse(Data("url=https://user@git.example.test/owner/repo.git\n".utf8))
        #expect(url.protocol == "https" && url.host == "git.example.test" && url.username == "user")
        #expect(url.attributes["path"] == "owner/repo.git")
        let reset = try GitCredentialRequest.parse(Data("wwwauth[]=Basic\nwwwauth[]=\nfuture=1\n".utf8))
        #expect(reset.wwwauth.isEmpty && reset.unknownKeys == ["future"])

        // CRLF lines are lines (in Swift "\r\n" is one Character, so splitting Characters on "\n" failed).
        let crlf = try GitCredentialRequest.parse(
            Data("protocol=https\r\nhost=git.example.test\r\nusername=oauth2\r\n\r\nhost=ignored\r\n".utf8))
        #expect(crlf.protocol == "https" && crlf.host == "git.example.test" && crlf.username == "oauth2")
        // A URL's host is never percent-decoded into a host line.
        let encoded = try GitCredentialRequest.parse(Data("url=https://git.example.test%0aevil/\n".utf8))
        #expect(encoded.host == "git.example.test%0aevil")
        #expect(try !GitTarget("git.example.test").matches(encoded))
    }

    /// A malformed request, named by what is wrong with it (the 1 MiB line stays out of the log).
    struct Malformed: CustomTestStringConvertible, Sendable {
        var input: String
        var expected: String
        var testDescription: String { expected }
    }

    @Test(arguments: [
        Malformed(input: "host\n", expected: "line 1 is not key=value"),
        Malformed(input: "=value\n", expected: "line 1 is not key=value"),
        Malformed(input: "ho st=x\n", expected: "a key with characters"),
        Malformed(input: "host=a\0b\n", expected: "NUL"),
        Malformed(input: "host=" + String(repeating: "a", count: 70_000) + "\n", expected: "longer than 64 KiB"),
        Malformed(input: "host=" + String(repeating: "a", count: 1 << 20) + "\n", expected: "more than 256 KiB"),
        Malformed(input: "url=not a url\n", expected: "not a URL"),
    ])
    func malformedGitRequestsAreRefused(_ malformed: Malformed) {
        #expect {
            try GitCredentialRequest.parse(Data(malformed.input.utf8))
        } throws: { error in
            (error as? AuthError)?.message.contains(malformed.expected) == true
        }
    }

    @Test func gitTargetsAreHTTPSHostsOrLoopback() throws {
        #expect(try GitTarget("GitHub.com") == GitTarget("https://github.com/"))
        #expect(try GitTarget("git.example.test:8443").url == "https://git.example.test:8443")
        #expect(try GitTarget("http://127.0.0.1:9418").url == "http://127.0.0.1:9418")
        for refused in ["http://git.example.test", "https://git.example.test/path", "https://u@x.test", "", "ftp://x"] {
            #expect(throws: AuthError.self, "\(refused)") { try GitTarget(refused) }
        }
        let target = try GitTarget("git.example.test")
        let request = try GitCredentialRequest.parse(Data("protocol=https\nhost=GIT.example.test\n".utf8))
        #expect(target.matches(request))
        #expect(!target.matches(try GitCredentialRequest.parse(Data("protocol=http\nhost=git.example.test\n".utf8))))
    }

    @Test func gitAnswersCarryTheTokenAsPasswordOrBearerCredential() throws {
        let target = try GitTarget("git.example.test")
        let basic = try GitCredentialRequest.parse(Data("protocol=https\nhost=git.example.test\n".utf8))
        #expect(
            GitCredentialAnswer.lines(for: target, username: "oauth2", tokens: tokens, request: basic) == [
                "protocol=https", "host=git.example.test", "username=oauth2",
                "password=access-token-value-0123456789", "password_expiry_utc=1800000000",
            ])
        let bearer = try GitCredentialRequest.parse(
            Data("capability[]=authtype\nprotocol=https\nhost=git.example.test\nwwwauth[]=Bearer\n".utf8))
        let lines = GitCredentialAnswer.lines(for: target, username: "oauth2", tokens: tokens, request: bearer)
        #expect(lines.contains("authtype=Bearer") && lines.contains("credential=access-token-value-0123456789"))
        #expect(!lines.contains { $0.hasPrefix("password=") })
    }

    // MARK: - kubectl

    @Test func execInfoNamesTheVersionAndWhetherThePluginMayAsk() throws {
        let v1 =
            #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":true}}"#
        #expect(
            try KubernetesExecInfo.parse(v1) == .init(apiVersion: KubernetesExecInfo.versions[0], interactive: true))
        let beta = #"{"apiVersion":"client.authentication.k8s.io/v1beta1","spec":{}}"#
        #expect(
            try KubernetesExecInfo.parse(beta) == .init(apiVersion: KubernetesExecInfo.versions[1], interactive: false))
        #expect(try KubernetesExecInfo.parse(nil, stderrIsTerminal: true).interactive)
        #expect(try KubernetesExecInfo.parse("", stderrIsTerminal: false).apiVersion == KubernetesExecInfo.versions[0])
        for (bad, expected) in [
            ("not json", "is not a JSON object"), (#"{"kind":"ExecCredential"}"#, "has no apiVersion"),
            (
                #"{"apiVersion":"client.authentication.k8s.io/v1alpha1"}"#,
                "asks for client.authentication.k8s.io/v1alpha1"
            ),
            (#"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":"yes"}}"#, "not true or false"),
        ] {
            #expect(throws: AuthError.self) { try KubernetesExecInfo.parse(bad) }
            let message = Self.message { _ = try KubernetesExecInfo.parse(bad) }
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test func everyFormatPutsTheTokenInItsPlace() throws {
        let info = KubernetesExecInfo(apiVersion: KubernetesExecInfo.versions[1], interactive: false)
        #expect(try TokenFormat.raw.text(tokens, execInfo: info) == "access-token-value-0123456789")
        #expect(try TokenFormat.header.text(tokens, execInfo: info) == "Bearer access-token-value-0123456789")
        let json = try #require(
            try JSONValue.parse(Data(TokenFormat.json.text(tokens, execInfo: info).utf8)).objectValue)
        #expect(json["access_token"] == "access-token-value-0123456789")
        #expect(json["token_type"] == "Bearer" && json["expires_at"] == "2027-01-15T08:00:00Z")
        #expect(json["scope"] == ["openid", "api"] && json["refresh_token"] == nil)
        let exec = try #require(
            try JSONValue.parse(Data(TokenFormat.execCredential.text(tokens, execInfo: info).utf8)).objectValue)
        #expect(exec["apiVersion"] == "client.authentication.k8s.io/v1beta1" && exec["kind"] == "ExecCredential")
        #expect(
            exec["status"] == ["token": "access-token-value-0123456789", "expirationTimestamp": "2027-01-15T08:00:00Z"])
        var lasting = tokens
        lasting.expiresAt = nil
        let noExpiry = try JSONValue.parse(Data(TokenFormat.execCredential.text(lasting, execInfo: info).utf8))
        #expect(noExpiry.objectValue?["status"] == ["token": "access-token-value-0123456789"])
        #expect(throws: AuthError.self) { try TokenOutput.checkPrintable("two\nlines") }
    }

    /// `--token-kind id`: the ID token where the format puts a token, with its own expiry; the
    /// access token's audience is checked against the client id for a cluster that would take it.
    @Test func theIDTokenKindPutsTheIDTokenInItsPlace() throws {
        func jwt(_ claims: String) -> String {
            Base64URL.encode(Array(#"{"alg":"ES256","kid":"k"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
                + ".c2lnbmF0dXJl"
        }
        var signedIn = tokens
        signedIn.idToken = jwt(#"{"iss":"https://id.example","aud":"cli","exp":1800000000,"iat":1799996400}"#)
        let id = try #require(signedIn.idToken)
        let info = KubernetesExecInfo(apiVersion: KubernetesExecInfo.versions[0], interactive: false)
        #expect(try TokenFormat.raw.text(signedIn, execInfo: info, kind: .id) == id)
        #expect(try TokenFormat.header.text(signedIn, execInfo: info, kind: .id) == "Bearer \(id)")
        let exec = try #require(
            try JSONValue.parse(Data(TokenFormat.execCredential.text(signedIn, execInfo: info, kind: .id).utf8))
                .objectValue)
        #expect(exec["status"] == ["token": .string(id), "expirationTimestamp": "2027-01-15T08:00:00Z"])

        #expect(TokenOutput.audienceProblem(of: signedIn, clientID: "cli") == "it is not a JWT")
        var jwtAccess = signedIn
        jwtAccess.accessToken = jwt(#"{"aud":"https://api.example","exp":1800000000}"#)
        #expect(TokenOutput.audienceProblem(of: jwtAccess, clientID: "cli") == "its audience is not the client id")
        jwtAccess.accessToken = jwt(#"{"aud":["https://api.example","cli"],"exp":1800000000}"#)
        #expect(TokenOutput.audienceProblem(of: jwtAccess, clientID: "cli") == nil)
    }

    @Test func theKubeconfigEntryQuotesEveryValue() {
        let lines = KubeconfigCommand<TestTool>.entry(
            name: "it's \"mine\"", command: "/opt/my tools/cli", arguments: ["token", "--scope", "a b\nc: d"],
            interactiveMode: "Never")
        #expect(lines.count == 12)
        #expect(lines[1] == #"- name: "it's \"mine\"""#)
        #expect(lines[5] == #"      command: "/opt/my tools/cli""#)
        #expect(lines[9] == #"      - "a b\nc: d""#)
    }

    @Test func shellQuotingSurvivesTheShell() async throws {
        let words = ["plain", "with space", "it's", "$HOME", "a\"b", "", "--issuer=https://x.test/a?b=c&d"]
        let script = "printf '%s\\n' " + words.map(ToolInvocation.shellQuoted).joined(separator: " ")
        let result = try await run("/bin/sh", ["-c", script])
        #expect(result.stdout == words.map { $0 + "\n" }.joined())
    }

    // MARK: - Docker

    @Test func dockerRequestsNameARegistry() throws {
        #expect(
            try DockerCredentialProtocol.registry("https://Registry.example.test:5000/v2/")
                == "registry.example.test:5000")
        #expect(try DockerCredentialProtocol.registry("registry.example.test") == "registry.example.test")
        #expect(throws: AuthError.self) { try DockerCredentialProtocol.registry("two words") }
        #expect(try DockerCredentialProtocol.registry("[::1]:5000") == "[::1]:5000")
        #expect(try DockerCredentialProtocol.registry("http://127.0.0.1:5000") == "127.0.0.1:5000")
        let cleartext = #expect(throws: AuthError.self) {
            try DockerCredentialProtocol.registry("http://registry.example.test:5000")
        }
        #expect(cleartext?.message.contains("HTTPS") == true)
        #expect(try DockerCredentialProtocol.registry("xn--bcher-kva.example") == "xn--bcher-kva.example")
        // Never percent-decoded: `%0a` was a new line in the helper script setup-docker writes, `%2f` a path.
        for refused in [
            "registry.example.test%0atouch /tmp/pwned", "registry.example.test%0a", "a%2fb.example", "user@host",
            "registry.example.test:port", "[::1", "-bad.example", "bücher.example",
        ] {
            #expect(throws: AuthError.self, "\(refused)") { try DockerCredentialProtocol.registry(refused) }
            #expect(throws: AuthError.self, "\(refused)") { try GitTarget(refused) }
        }
        #expect(
            try DockerCredentialProtocol.serverURL(Data(" registry.example.test\n".utf8)) == "registry.example.test")
        #expect(throws: AuthError.self) { try DockerCredentialProtocol.serverURL(Data("a\nb".utf8)) }
        let stored = try DockerCredentialProtocol.storedServerURL(
            Data(#"{"ServerURL":"r.test","Username":"u","Secret":"s","Extra":1}"#.utf8))
        #expect(stored.serverURL == "r.test" && stored.unknownKeys == ["Extra"])
        #expect(throws: AuthError.self) {
            try DockerCredentialProtocol.storedServerURL(Data(#"{"Username":"u"}"#.utf8))
        }
    }

    // MARK: - Dropping a refused token

    @Test func aRefusedAccessTokenIsDroppedAndTheNextOneRefreshed() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .inMemory)
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: SandboxAuthorizationServer.Client.defaultID, scopes: ["openid"])),
            store: MemoryTokenStore(), transport: sandbox.transport)
        let first = try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        #expect(try await auth.discardAccessToken("not-the-stored-token") == false)
        #expect(try await auth.currentTokens() == first)
        #expect(try await auth.discardAccessToken(first.accessToken))
        let kept = try #require(try await auth.currentTokens())
        #expect(kept.expiresAt == Date(timeIntervalSince1970: 0) && kept.refreshToken == first.refreshToken)
        #expect(kept.accessToken == first.accessToken && kept.idToken == first.idToken)
        let next = try await auth.accessToken()
        #expect(next != first.accessToken && sandbox.grantCount(.refreshToken) == 1)
        await sandbox.stop()
    }

    static func message(_ body: () throws -> Void) -> String {
        do {
            try body()
            return ""
        } catch {
            return (error as? AuthError)?.message ?? "\(error)"
        }
    }
}

private struct TestTool: NativeAuthTool {
    static let toolName = "test-tool"
    static let defaultProvider = GenericOIDCProvider.id
    static func makeRegistry() throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try registry.register(GenericOIDCProvider.self)
        return registry
    }
}
