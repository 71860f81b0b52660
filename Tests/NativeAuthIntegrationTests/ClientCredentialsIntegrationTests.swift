import Foundation
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// The client credentials grant against django-oauth-toolkit, a server nobody here wrote: a
/// confidential client registered for that grant alone.
@Suite(.testLogging, .enabled(if: TestServer.isRunning, "scripts/test-server start runs the real server"))
struct ClientCredentialsServerTests {
    let server: TestServer

    init() throws { server = try TestServer.load() }

    @Test func aServiceSignsInAsItselfAndIsRenewedWhenItsTokenExpires() async throws {
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: server.issuer, clientID: server.serviceClientID, clientSecret: server.serviceClientSecret,
                    scopes: ["read"])),
            store: store, transport: StandardTransport.platformDefault())
        let tokens = try await auth.login(.clientCredentials)
        #expect(tokens.renewableGrant == .clientCredentials)
        #expect(tokens.refreshToken == nil)
        #expect(tokens.scopes == ["read"])
        #expect(tokens.subject == server.serviceClientID)
        try await auth.expireAccessToken()
        let renewed = try await auth.accessToken()
        #expect(renewed != tokens.accessToken)
        #expect(await store.load(auth.key)?.accessToken == renewed)
    }

    @Test func aClientNotRegisteredForTheGrantIsRefusedAndNothingIsStored() async throws {
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: server.issuer, clientID: server.confidentialClientID,
                    clientSecret: server.confidentialClientSecret, scopes: ["read"])),
            store: store, transport: StandardTransport.platformDefault())
        let error = try await #require(throws: AuthError.self) { try await auth.login(.clientCredentials) }
        #expect(error.oauthError == "unauthorized_client", "\(error)")
        #expect(await store.keys().isEmpty)
    }
}

/// `login --client-credentials` with `--client-assertion-key`, as a CI job runs it, against the
/// sandbox served on a socket.
@Suite(.testLogging) struct ClientCredentialsCLITests {
    let cli = cliPath("oidc-login")

    @Test func aJobSignsInWithItsKeyPrintsTokensAndNeverTheKey() async throws {
        let pair = try SandboxAuthorizationServer.ClientKeyPair(.es256)
        var client = SandboxAuthorizationServer.Client(id: "ci-job")
        client.assertionKeyPEM = pair.publicKeyPEM
        let sandbox = try await SandboxAuthorizationServer.start(.init(clients: [client]), mode: .live)
        let directory = try TemporaryDirectory()
        let key = directory.path + "/job.pem"
        try pair.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", "ci-job", "--scope", "api", "--store",
            directory.path + "/store",
        ]

        #expect(chmod(key, 0o640) == 0)
        let open = try await run(cli, ["login", "--client-credentials", "--client-assertion-key", key] + connection)
        #expect(open.status == 1)
        #expect(open.stderr.contains("holds a private key but other users can read or change it"), "\(open.stderr)")
        #expect(sandbox.requestCount(.token) == 0)

        #expect(chmod(key, 0o600) == 0)
        let login = try await run(cli, ["login", "--client-credentials", "--client-assertion-key", key] + connection)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as ci-job\n")
        #expect(sandbox.grantCount(.clientCredentials) == 1)

        // Later commands need the key too: the tokens are renewed with it when they expire.
        let token = try await run(
            cli, ["token"] + connection, environment: ["NATIVEAUTH_CLIENT_ASSERTION_KEY": key])
        #expect(token.status == 0, "\(token.stderr)")
        #expect(token.stdout.trimmingCharacters(in: .newlines).count > 20)
        let status = try await run(cli, ["status", "--json"] + connection)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true)
        #expect(object["subject"] == "ci-job")
        for output in [open, login, token, status] {
            #expect(!output.stdout.contains("PRIVATE KEY") && !output.stderr.contains("PRIVATE KEY"))
        }
        await sandbox.stop()
    }

    /// A pod's projected service-account token, traded at login and read again by a later command
    /// that renews the expired tokens after the kubelet rotated the file.
    @Test func aWorkloadTradesItsTokenFileAndALaterCommandRereadsIt() async throws {
        let federated = SandboxAuthorizationServer.FederatedIssuer(issuer: "https://kubernetes.default.svc")
        var configuration = SandboxAuthorizationServer.Configuration(accessTokenLifetime: .seconds(1))
        configuration.federatedIssuers = [federated]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let tokenFile = directory.path + "/token"
        let subject = "system:serviceaccount:apps:reporter"
        try federated.token(subject: subject, audience: sandbox.issuer.absoluteString)
            .write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "api", "--store", directory.path + "/store", "--subject-token-file", tokenFile,
        ]
        let login = try await run(cli, ["login"] + connection)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(sandbox.grantCount(.tokenExchange) == 1)

        // The kubelet writes a new token for another pod identity; the access token has run out.
        try federated.token(subject: subject + "-rotated", audience: sandbox.issuer.absoluteString)
            .write(toFile: tokenFile, atomically: true, encoding: .utf8)
        try await Task.sleep(for: .milliseconds(1100))
        let token = try await run(cli, ["token"] + connection)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(sandbox.grantCount(.tokenExchange) == 2)
        #expect(sandbox.federatedSubjects == [subject, subject + "-rotated"], "the file was read again")
        await sandbox.stop()
    }

    /// The subject-token command gets PATH, HOME and the like, and the variables
    /// `--subject-token-command-environment` names; never the rest of the CLI's environment (a
    /// database password, a client secret in `NATIVEAUTH_CLIENT_SECRET`: review L6).
    @Test func theSubjectTokenCommandGetsTheNamedEnvironmentOnly() async throws {
        let federated = SandboxAuthorizationServer.FederatedIssuer(issuer: "https://kubernetes.default.svc")
        var configuration = SandboxAuthorizationServer.Configuration()
        configuration.federatedIssuers = [federated]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let record = directory.path + "/environment"
        let tokenFile = directory.path + "/token"
        try federated.token(subject: "system:serviceaccount:apps:vault", audience: sandbox.issuer.absoluteString)
            .write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let script = directory.path + "/token-command"
        try "#!/bin/sh\nenv > '\(record)'\ncat '\(tokenFile)'\n".write(
            toFile: script, atomically: true, encoding: .utf8)
        #expect(chmod(script, 0o755) == 0)
        let login = try await run(
            cli,
            [
                "login", "--issuer", sandbox.issuer.absoluteString, "--client-id",
                SandboxAuthorizationServer.Client.defaultID, "--scope", "api", "--store", directory.path + "/store",
                "--subject-token-command", script, "--subject-token-command-environment", "VAULT_ADDR AWS_*",
            ],
            environment: [
                "VAULT_ADDR": "https://vault.example", "AWS_REGION": "eu-west-1",
                "FLEET_DATABASE_URL": "postgres://fleet:planted-password@db/fleet",
                "NATIVEAUTH_CLIENT_SECRET": "planted-client-secret", "LC_ALL": "C.UTF-8",
            ])
        #expect(login.status == 0, "\(login.stderr)")
        let written = try String(contentsOfFile: record, encoding: .utf8)
        for kept in ["VAULT_ADDR=https://vault.example", "AWS_REGION=eu-west-1", "PATH=", "LC_ALL=C.UTF-8"] {
            #expect(written.contains(kept), "\(kept)")
        }
        for planted in ["planted-password", "FLEET_", "planted-client-secret", "NATIVEAUTH_"] {
            #expect(!written.contains(planted), "\(planted) reached the command")
        }
        await sandbox.stop()
    }
}

/// `NATIVEAUTH_ACCESS_TOKEN`: a CI job hands a token to the CLI, which uses it as it is and touches
/// no store, as `GH_TOKEN` works for `gh`.
@Suite(.testLogging) struct AccessTokenOverrideCLITests {
    let cli = cliPath("oidc-login")

    @Test func tokenAndAPIUseTheGivenTokenAndNoStoreIsRead() async throws {
        let client = SandboxAuthorizationServer.Client(id: "ci", secret: "ci-secret-\(UUID().uuidString)")
        let sandbox = try await SandboxAuthorizationServer.start(.init(clients: [client]), mode: .live)
        let issued = try await Authenticator(
            provider: try GenericOIDCProvider(
                configuration: ProviderConfiguration(
                    issuer: sandbox.issuer, clientID: "ci", clientSecret: client.secret, scopes: ["api"])),
            store: MemoryTokenStore(), transport: StandardTransport.platformDefault()
        ).login(.clientCredentials)
        let directory = try TemporaryDirectory()
        let store = directory.path + "/store"
        // No issuer, no client: the token and a full URL are all `token` and `api` need.
        let environment = ["NATIVEAUTH_ACCESS_TOKEN": issued.accessToken, "NATIVEAUTH_STORE": store]

        let token = try await run(cli, ["token"], environment: environment)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(token.stdout == issued.accessToken + "\n")
        let json = try await run(cli, ["token", "--format", "json"], environment: environment)
        let object = try #require(try JSONValue.parse(json.stdout).objectValue)
        #expect(object["access_token"] == .string(issued.accessToken))
        #expect(object["expires_at"] == .null)

        let resource = sandbox.issuer.absoluteString + "/resource"
        let api = try await run(cli, ["api", resource], environment: environment)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains("ci"), "\(api.stdout)")
        #expect(sandbox.requestCount(.token) == 1, "only the test's own sign-in reached the token endpoint")

        var wrong = environment
        wrong["NATIVEAUTH_ACCESS_TOKEN"] = "not-a-token-the-sandbox-issued"
        let refused = try await run(cli, ["api", resource], environment: wrong)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("refused the access token in NATIVEAUTH_ACCESS_TOKEN"), "\(refused.stderr)")
        #expect(sandbox.requestCount(.token) == 1, "a given token is never refreshed")

        let status = try await run(cli, ["status", "--json"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        let reported = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(reported["signed_in"] == true)
        #expect(reported["source"] == "NATIVEAUTH_ACCESS_TOKEN")
        let human = try await run(cli, ["status"], environment: environment)
        #expect(human.stdout.contains("Using the access token in NATIVEAUTH_ACCESS_TOKEN"), "\(human.stdout)")

        for command in ["login", "refresh", "logout"] {
            let result = try await run(
                cli, [command, "--issuer", sandbox.issuer.absoluteString, "--client-id", "ci"],
                environment: environment)
            #expect(result.status != 0, "\(command)")
            #expect(result.stderr.contains("unset NATIVEAUTH_ACCESS_TOKEN to \(command)"), "\(result.stderr)")
        }
        // git's credential helper answers with it too, as gh's does with GH_TOKEN.
        let git = try await run(
            cli,
            [
                "git-credential", "--git-host", "git.example.test", "--issuer", sandbox.issuer.absoluteString,
                "--client-id", "ci", "get",
            ], input: "protocol=https\nhost=git.example.test\n\n", environment: environment)
        #expect(git.status == 0, "\(git.stderr)")
        #expect(git.stdout.contains("password=\(issued.accessToken)\n"), "the helper answered with the given token")
        #expect(!FileManager.default.fileExists(atPath: store), "no store was created")

        let broken = try await run(
            cli, ["token"], environment: ["NATIVEAUTH_ACCESS_TOKEN": "an access token with spaces"])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("holds whitespace"), "\(broken.stderr)")
        await sandbox.stop()
    }
}

/// `--resource` (RFC 8707) and `login --add-scope` in the sample CLI, against the sandbox on a
/// socket whose protected resources take only tokens issued for them.
@Suite(.testLogging) struct ResourceCLITests {
    let cli = cliPath("oidc-login")

    /// `api -X METHOD -H 'Name: value' -d DATA` (`@FILE`, `@-`): the request goes as given, with
    /// the token the tool adds; the headers the tool sets itself are refused.
    @Test func apiSendsTheMethodHeadersAndBodyItIsGiven() async throws {
        let seen = Shared<[String]>([])
        let echo = try await TestHTTPServer.start(.live) { request in
            let line = [
                request.method, request.header("Authorization") ?? "-", request.header("Content-Type") ?? "-",
                request.header("Accept") ?? "-", String(decoding: request.body, as: UTF8.self),
            ]
            seen.update { $0.append(line.joined(separator: " | ")) }
            return .json(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        }
        let directory = try TemporaryDirectory()
        let token = ["NATIVEAUTH_ACCESS_TOKEN": "handed-over-token-77c1e0d4"]
        let url = echo.url("/mcp").absoluteString
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#
        let posted = try await run(
            cli, ["api", url, "-X", "POST", "-H", "Accept: application/json, text/event-stream", "-d", initialize],
            environment: token)
        #expect(posted.status == 0 && posted.stdout.contains(#""jsonrpc":"2.0""#), "\(posted.stderr)")
        let file = directory.path + "/request.json"
        try Data(#"{"method":"tools/list"}"#.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try await run(cli, ["api", url, "--data", "@" + file], environment: token)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let fromInput = try await run(
            cli, ["api", url, "-X", "PUT", "-H", "Content-Type: text/plain", "-d", "@-"], input: "plain words",
            environment: token)
        #expect(fromInput.status == 0, "\(fromInput.stderr)")
        #expect(
            seen.value == [
                "POST | Bearer handed-over-token-77c1e0d4 | application/json | application/json, text/event-stream | "
                    + initialize,
                #"POST | Bearer handed-over-token-77c1e0d4 | application/json | - | {"method":"tools/list"}"#,
                "PUT | Bearer handed-over-token-77c1e0d4 | text/plain | - | plain words",
            ])
        for bad in [["-H", "Authorization: Bearer mine"], ["-H", "no colon"], ["-X", "GE T"]] {
            let refused = try await run(cli, ["api", url] + bad, environment: token)
            #expect(refused.status == 64, "\(bad): \(refused.stderr)")
        }
        let missing = try await run(cli, ["api", url, "-d", "@/no/such/file"], environment: token)
        #expect(missing.status == 1 && missing.stderr.contains("cannot be read"), "\(missing.stderr)")
        #expect(seen.value.count == 3, "nothing sent for a refused command line")

        // The stored sign-in's path: a POST to the issuer's userinfo (OIDC Core §5.3.1 allows it).
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let userinfo = try await run(
            cli,
            [
                "api", sandbox.url(.userInfo).absoluteString, "-X", "POST", "-d", "x=1", "-H",
                "Content-Type: application/x-www-form-urlencoded",
            ] + connection)
        #expect(userinfo.status == 0 && userinfo.stdout.contains("sandbox-user-alice"), "\(userinfo.stderr)")
        let last = try #require(sandbox.requestLog.last)
        #expect(last.method == "POST" && last.path.hasSuffix("/userinfo") && last.fields.first(named: "x") == "1")
        await echo.stop()
        await sandbox.stop()
    }

    /// Review L8: `api` with a full URL attaches the sign-in's token only to the issuer's origin,
    /// the API base and the configured resources, as `gh api` only to hosts it signed in to.
    @Test func apiSendsNoTokenToAHostItWasNotIssuedFor() async throws {
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let seen = Shared<[String]>([])
        let other = try await TestHTTPServer.start(.live) { request in
            seen.update { $0.append(request.header("Authorization") ?? "none") }
            return .text("hello")
        }
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        let elsewhere = other.url("/data").absoluteString
        let refused = try await run(cli, ["api", elsewhere] + connection)
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(refused.stderr.contains("the access token is not sent to 127.0.0.1:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--resource"), "\(refused.stderr)")
        #expect(seen.value.isEmpty, "nothing was sent there")
        // The issuer's own origin takes it (userinfo), and a token the person hands over goes where told.
        let own = try await run(cli, ["api", sandbox.url(.userInfo).absoluteString] + connection)
        #expect(own.status == 0, "\(own.stderr)")
        let handed = try await run(
            cli, ["api", elsewhere], environment: ["NATIVEAUTH_ACCESS_TOKEN": "handed-over-token-5b2d91c7"])
        #expect(handed.status == 0 && seen.value == ["Bearer handed-over-token-5b2d91c7"], "\(handed.stderr)")
        await other.stop()
        await sandbox.stop()
    }

    @Test func tokensPerResourceAndAnAddedScope() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mail", "files"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let mail = sandbox.resourceURL("mail").absoluteString
        let files = sandbox.resourceURL("files").absoluteString
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--scope", "openid profile", "--store", directory.path + "/store",
        ]
        let browser = ["BROWSER": redirectFollowingBrowser]

        let login = try await run(cli, ["login", "--resource", mail] + connection, environment: browser)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(sandbox.issuedAudiences == [[mail]])
        let own = try await run(cli, ["api", mail] + connection)
        #expect(own.status == 0, "the sign-in's token is for mail: \(own.stderr)")
        let refused = try await run(cli, ["api", files, "--resource", mail] + connection)
        #expect(refused.status == 1, "a token for mail is no good at files")

        // A token for files alone needs the grant to cover it: sign in for both.
        let both = try await run(
            cli, ["login", "--resource", mail, "--resource", files] + connection, environment: browser)
        #expect(both.status == 0, "\(both.stderr)")
        let token = try await run(cli, ["token", "--format", "json", "--resource", files] + connection)
        #expect(token.status == 0, "\(token.stderr)")
        let api = try await run(cli, ["api", files, "--resource", files] + connection)
        #expect(api.status == 0, "\(api.stderr)")
        #expect(api.stdout.contains(files))
        #expect(sandbox.issuedAudiences.last == [files])
        let text = try await run(cli, ["status"] + connection)
        #expect(text.stdout.contains("Token for \(files) expires: "), "\(text.stdout)")
        let described = try await run(cli, ["status", "--json"] + connection)
        let kept = try #require(try JSONValue.parse(described.stdout).objectValue?.array("resource_tokens"))
        #expect(kept.compactMap { $0.objectValue?["resource"]?.stringValue } == [files], "\(described.stdout)")
        #expect(!described.stdout.contains("access_token"))
        let twice = try await run(cli, ["token", "--resource", files, "--resource", mail] + connection)
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("a token is for one resource"), "\(twice.stderr)")

        let added = try await run(cli, ["login", "--add-scope", "email"] + connection, environment: browser)
        #expect(added.status == 0, "\(added.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["scope"] == ["openid", "profile", "email"], "\(status.stdout)")
        await sandbox.stop()
    }

    /// `--register-client` without `--client-id`: `login` registers once (with the initial access
    /// token the server wants, from the environment), `status` and `token` use the kept registration.
    @Test func loginRegistersTheToolOnceAndLaterCommandsUseTheRegistration() async throws {
        let initial = "initial-access-" + UUID().uuidString
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.registrationAccessToken = initial
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--register-client", "--scope", "openid profile",
            "--store", directory.path + "/store",
        ]
        let statusFirst = try await run(cli, ["status"] + connection)
        #expect(sandbox.requestCount(.registration) == 0, "status registers nothing: \(statusFirst.stderr)")

        let refused = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("initial access token"), "\(refused.stderr)")

        let environment = ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_INITIAL_ACCESS_TOKEN": initial]
        let login = try await run(cli, ["login"] + connection, environment: environment)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("registered as client dyn-"), "\(login.stderr)")
        let status = try await run(cli, ["status", "--json"] + connection)
        #expect(status.status == 0, "\(status.stderr)")
        let object = try #require(try JSONValue.parse(status.stdout).objectValue)
        #expect(object["signed_in"] == true, "the kept registration's tokens: \(status.stdout)")
        let token = try await run(cli, ["token"] + connection)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(sandbox.requestCount(.registration) == 2, "one refused, one made; none after")
        await sandbox.stop()
    }

    /// A configuration naming the tool's Client ID Metadata Document: at a server that takes them,
    /// that URL is the client id, and nothing is registered.
    @Test func aClientIDMetadataDocumentInTheConfigurationIsTheClientID() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.acceptsClientMetadataDocuments = true
        configuration.clientMetadataDocuments = ["cli": ["http://127.0.0.1/callback"]]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let document = sandbox.url(.clientMetadataDocument).appendingPathComponent("cli").absoluteString
        let file = directory.path + "/config.json"
        let object: JSONObject = [
            "issuer": .string(sandbox.issuer.absoluteString), "register_client": true,
            "client_id_metadata_document": .string(document), "scope": "openid profile",
        ]
        try JSONValue.object(object).encodedString().write(toFile: file, atomically: true, encoding: .utf8)
        let connection = ["--config", file, "--store", directory.path + "/store"]
        let login = try await run(cli, ["login"] + connection, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(!login.stderr.contains("registered as client"), "\(login.stderr)")
        let token = try await run(cli, ["token"] + connection)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(sandbox.requestCount(.registration) == 0)
        await sandbox.stop()
    }

    /// An agent pointed at an API and nothing else: the API's 401 names its metadata, which names
    /// the authorization server; the person signs in there once, and later calls need no sign-in.
    @Test func apiDiscoverGoesFromABare401ToASignInAndTheAnswer() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        // The MCP server's URL itself: its metadata's `resource` must be it (RFC 9728 §3.3).
        let tools = sandbox.resourceURL("mcp").absoluteString
        let store = ["--store", directory.path + "/store"]

        // A refused registration: a clear error naming the server, and nothing kept.
        sandbox.failNext(1, .registration, with: .oauthError("invalid_client_metadata"))
        let refused = try await run(cli, ["api", "--discover", tools] + store)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("the API's authorization server is \(sandbox.issuer.absoluteString)"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("invalid_client_metadata"), "\(refused.stderr)")

        // No --client-id: the tool registers itself at the API's server (RFC 7591), then signs in.
        let first = try await run(
            cli, ["api", "--discover", tools] + store, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("registered as client dyn-"), "\(first.stderr)")
        #expect(first.stderr.contains("signing in there for it"), "\(first.stderr)")
        #expect(first.stdout.contains(sandbox.resourceURL("mcp").absoluteString), "\(first.stdout)")
        #expect(sandbox.requestCount(.authorization) == 1)
        #expect(sandbox.requestCount(.registration) == 2)

        let again = try await run(cli, ["api", "--discover", tools] + store)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stderr.contains("signing in") && !again.stderr.contains("registered"), "\(again.stderr)")
        #expect(sandbox.requestCount(.authorization) == 1, "the stored sign-in served")
        #expect(sandbox.requestCount(.registration) == 2, "the kept registration served")

        // A client id given wins: no registration.
        let client = ["--client-id", SandboxAuthorizationServer.Client.defaultID]
        let given = try await run(
            cli, ["api", "--discover", tools] + client + store, environment: ["BROWSER": redirectFollowingBrowser])
        #expect(given.status == 0, "\(given.stderr)")
        #expect(sandbox.requestCount(.registration) == 2)
        await sandbox.stop()
    }

    /// Review M1: a client configured for one server, pointed at an API whose metadata names
    /// another: none of its credentials reach that other server, which sees a public client
    /// registering itself.
    @Test func discoveryAtAnotherServerTakesNoneOfTheConfiguredClientsCredentials() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        let api = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let home = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let secretFile = directory.path + "/secret"
        let secret = "home-client-secret-7f3a9c2e41d8"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: secretFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile)
        IssuedSecrets.record([secret])
        let result = try await run(
            cli,
            [
                "api", "--discover", api.resourceURL("mcp").absoluteString, "--issuer", home.issuer.absoluteString,
                "--client-id", "home-client-id", "--client-secret-file", secretFile, "--client-auth",
                "client_secret_post", "--store", directory.path + "/store", "--trust-issuer", api.issuer.absoluteString,
            ],
            environment: [
                "BROWSER": redirectFollowingBrowser, "NATIVEAUTH_INITIAL_ACCESS_TOKEN": "home-initial-access-9c1e",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("none of the configured client's credentials go there"), "\(result.stderr)")
        #expect(result.stderr.contains("registered as client dyn-"), "\(result.stderr)")
        let seen = api.requestLog.flatMap(\.fields).map(\.value)
        #expect(!seen.isEmpty)
        #expect(!seen.contains { $0.contains(secret) || $0.contains("home-client-id") }, "\(seen)")
        #expect(home.requestLog.isEmpty, "the configured server is not asked either")
        await api.stop()
        await home.stop()
    }

    /// Review L1: with no issuer configured, a client id and secret in the environment or a
    /// configuration file, and an initial access token in the environment, were given for no
    /// server in particular: `api URL` at a server nobody configured sends none of them (no
    /// secret at its PAR or token endpoint, no initial access token at its registration endpoint).
    @Test func discoveryWithNoIssuerConfiguredTakesNoConfiguredClientCredentials() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        let api = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let directory = try TemporaryDirectory()
        let secretFile = directory.path + "/secret"
        let (secret, fileSecret) = ("env-client-secret-5b1e0c9d77", "file-client-secret-2c4d8e")
        try Data(fileSecret.utf8).write(to: URL(fileURLWithPath: secretFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile)
        IssuedSecrets.record([secret, fileSecret])
        let config = directory.path + "/config.json"
        let object: JSONObject = ["client_id": "file-client-id", "client_secret_file": .string(secretFile)]
        try JSONValue.object(object).encodedString().write(toFile: config, atomically: true, encoding: .utf8)
        let resource = api.resourceURL("mcp").absoluteString
        let environment = [
            "BROWSER": redirectFollowingBrowser, "NATIVEAUTH_CLIENT_ID": "env-client-id",
            "NATIVEAUTH_CLIENT_SECRET": secret,
        ]
        for layer in [["--config", config], []] {
            let store = ["--store", directory.path + "/store-\(layer.count)"]
            let result = try await run(cli, ["api", resource] + layer + store, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("registered as client dyn-"), "\(result.stderr)")
        }
        let seen = api.requestLog.flatMap(\.fields).map(\.value)
        #expect(!seen.isEmpty)
        let configured = [secret, fileSecret, "env-client-id", "file-client-id"]
        #expect(!seen.contains { value in configured.contains { value.contains($0) } }, "\(seen)")
        await api.stop()

        // An initial access token the server would take, had it been sent: it is not, and the
        // registration is refused for want of one.
        let initial = "initial-access-for-nobody-41c7"
        IssuedSecrets.record([initial])
        configuration.registrationAccessToken = initial
        let guarded = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let refused = try await run(
            cli, ["api", guarded.resourceURL("mcp").absoluteString, "--store", directory.path + "/store-guarded"],
            environment: ["BROWSER": redirectFollowingBrowser, "NATIVEAUTH_INITIAL_ACCESS_TOKEN": initial])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("initial access token"), "\(refused.stderr)")
        #expect(guarded.requestCount(.authorization) == 0 && guarded.requestCount(.token) == 0)
        await guarded.stop()
    }

    /// M1: an API that names another authorization server than the configured issuer gets no
    /// request sent there (no metadata, no registration, no sign-in) unless the person trusts it:
    /// `--trust-issuer` naming it, or yes at the terminal's question. Without a terminal, or with
    /// no, or with another server trusted, the tool stops after the API's own metadata.
    @Test func discoveryAtAnotherServerContactsItOnlyWhenThePersonTrustsIt() async throws {
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.protectedResources = ["mcp"]
        let api = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let home = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let resource = api.resourceURL("mcp")
        let arguments = [
            "api", "--discover", resource.absoluteString, "--issuer", home.issuer.absoluteString,
            "--client-id", "home-client-id", "--store", directory.path + "/store",
        ]
        let environment = ["BROWSER": redirectFollowingBrowser]
        /// Every request the API's server received went to the API or its resource metadata.
        func onlyTheAPIWasAsked() -> Bool {
            api.requestLog.allSatisfy {
                $0.path == resource.path || $0.path.hasPrefix("/.well-known/oauth-protected-resource")
            }
        }
        let piped = try await run(cli, arguments, environment: environment)
        #expect(piped.status == 1, "\(piped.stderr)")
        #expect(piped.stderr.contains("that server was not contacted"), "\(piped.stderr)")
        #expect(piped.stderr.contains("--trust-issuer \(api.issuer.absoluteString)"), "\(piped.stderr)")
        let another = try await run(
            cli, arguments + ["--trust-issuer", home.issuer.absoluteString], environment: environment)
        #expect(another.status == 1, "\(another.stderr)")
        let pty = repositoryRoot.path + "/scripts/lib/pty_run.py"
        let no = try await run("/usr/bin/python3", [pty, "[y/N]", "n", cli] + arguments, environment: environment)
        #expect(no.status == 1, "\(no.stdout)")
        #expect(no.stdout.contains("as a public client of its own? [y/N]"), "\(no.stdout)")
        #expect(!api.requestLog.isEmpty && onlyTheAPIWasAsked(), "\(api.requestLog.map(\.path))")
        #expect(home.requestLog.isEmpty)
        let yes = try await run("/usr/bin/python3", [pty, "[y/N]", "y", cli] + arguments, environment: environment)
        #expect(yes.status == 0, "\(yes.stdout)")
        #expect(yes.stdout.contains("registered as client dyn-"), "\(yes.stdout)")
        #expect(!onlyTheAPIWasAsked())
        await api.stop()
        await home.stop()
    }
}
