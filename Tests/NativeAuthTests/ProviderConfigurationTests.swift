import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct ProviderConfigurationTests {
    private func configuration(_ json: String) throws -> ProviderConfiguration {
        try ProviderConfiguration(json: try #require(try JSONValue.parse(json).objectValue))
    }

    @Test func readsEveryField() throws {
        let configuration = try configuration(
            """
            {"provider": "oidc", "issuer": "https://id.example.com", "client_id": "cli", "client_secret": "s3cret",
             "scope": "openid, email", "client_auth": "post", "device_authorization_endpoint": "https://id.example.com/device",
             "host": "https://ghe.example.com"}
            """
        )
        #expect(configuration.issuer?.absoluteString == "https://id.example.com")
        #expect(configuration.clientID == "cli")
        #expect(configuration.clientSecret == "s3cret")
        #expect(configuration.scopes == ["openid", "email"])
        #expect(configuration.clientAuthentication == .clientSecretPost)
        #expect(configuration.endpoints.deviceAuthorization?.absoluteString == "https://id.example.com/device")
        #expect(configuration.additional["host"] == "https://ghe.example.com")
        #expect(!configuration.description.contains("s3cret"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("s3cret"))
    }

    @Test func scopesMayBeAnArrayAndDefaultToOpenID() throws {
        #expect(try configuration(#"{"client_id": "c", "scope": ["a", "b"]}"#).scopes == ["a", "b"])
        #expect(try configuration(#"{"client_id": "c"}"#).scopes == ["openid"])
    }

    @Test(arguments: [
        (#"{"issuer": "https://id.example.com"}"#, #""client_id" is missing"#, "client_id"),
        (#"{"client_id": ""}"#, #""client_id" is missing"#, "client_id"),
        (#"{"client_id": 12, "issuer": "not a url"}"#, #""issuer" is not an absolute URL"#, "issuer"),
        (#"{"client_id": "c", "issuer": "http://id.example.com"}"#, #""issuer" must use https"#, "issuer"),
        (
            #"{"client_id": "c", "token_endpoint": "/token"}"#, #""token_endpoint" is not an absolute URL"#,
            "token_endpoint"
        ),
        (#"{"client_id": "c", "client_auth": "jwt"}"#, #""client_auth" should be one of"#, "client_auth"),
        (#"{"client_id": "c", "scope": 5}"#, #""scope" should be"#, "scope"),
        (#"{"client_id": ["c"]}"#, #""client_id" should be a string"#, "client_id"),
    ])
    func invalidFieldsAreNamed(json: String, expected: String, field: String) throws {
        let error = #expect(throws: AuthError.self) { try configuration(json) }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
        #expect(error?.field == field, "a program can point at the key without reading the message")
    }

    @Test func aProviderReadsItsDeclaredSettingsAndNamesTheFieldAtFault() throws {
        let tenant = ProviderSetting("tenant", help: "The tenant.")
        #expect(tenant.flag == "--tenant")
        #expect(ProviderSetting("user_pool_id", help: "").flag == "--user-pool-id")
        #expect(ProviderSetting("user_pool_id", help: "").environmentVariable == "NATIVEAUTH_USER_POOL_ID")
        let set = ProviderConfiguration(clientID: "c", additional: ["tenant": "main"])
        #expect(try set.value(of: tenant) == "main")
        #expect(try ProviderConfiguration(clientID: "c", additional: ["tenant": ""]).value(of: tenant) == nil)
        #expect(try ProviderConfiguration(clientID: "c").value(of: tenant) == nil)
        let wrong = #expect(throws: AuthError.self) {
            try ProviderConfiguration(clientID: "c", additional: ["tenant": ["a", "b"]]).value(of: tenant)
        }
        #expect(wrong?.field == "tenant")
        let missing = AuthError.missing(tenant)
        #expect(missing.code == .configurationInvalid)
        #expect(missing.field == "tenant")
        #expect(missing.hint == #"set "tenant" in the configuration: the tenant"#)
    }

    @Test func aConfigurationFileWithBadJSONSaysWhere() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/config.json"
        try "{\"client_id\": \"c\",\n \"client_secret\": \"s3cret-value\" x}".write(
            toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: path) }
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("line 2") == true)
        #expect(error?.description.contains("s3cret-value") == false)
        let missing = #expect(throws: AuthError.self) {
            try ProviderConfiguration.load(contentsOf: directory.path + "/none.json")
        }
        #expect(missing?.code == .configurationInvalid)
    }

    /// A configuration file may name a command to run (`subject_token_command`): as OpenSSH does
    /// with `~/.ssh/config`, only a regular file the user could have written is read (review L3).
    @Test func aConfigurationFileOthersCouldHaveWrittenIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/config.json"
        try #"{"client_id": "c", "subject_token_command": "touch /tmp/owned"}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        #expect(chmod(path, 0o644) == 0)
        #expect(try ProviderConfiguration.load(contentsOf: path)["client_id"] == "c", "readable by others is fine")

        #expect(chmod(path, 0o666) == 0)
        let writable = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: path) }
        #expect(writable?.message.contains("can be changed by other users") == true, "\(String(describing: writable))")
        #expect(writable?.hint == "run: chmod go-w '\(path)'")
        #expect(chmod(path, 0o620) == 0)
        #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: path) }
        #expect(chmod(path, 0o644) == 0)

        if getuid() == 0 {  // a second uid owns it (CI runs as root)
            #expect(chown(path, 65534, 65534) == 0)
            let foreign = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: path) }
            #expect(foreign?.message.contains("belongs to another user (uid 65534)") == true)
            #expect(chown(path, 0, 0) == 0)
        }

        let link = directory.path + "/link.json"
        #expect(symlink(path, link) == 0)
        let linked = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: link) }
        #expect(linked?.message.contains("symbolic link") == true)

        // A FIFO is refused at once: opening it does not wait for a writer.
        let fifo = directory.path + "/fifo.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: fifo) }
        #expect(pipe?.message.contains("not a regular file") == true)
        let folder = #expect(throws: AuthError.self) { try ProviderConfiguration.load(contentsOf: directory.path) }
        #expect(folder?.message.contains("not a regular file") == true)
    }

    @Test func theRegistryBuildsRegisteredProvidersAndNamesTheOthers() throws {
        struct AcmeProvider: AuthProvider {
            static let id = "acme"
            let configuration: ProviderConfiguration
            init(configuration: ProviderConfiguration) throws { self.configuration = configuration }
        }
        var registry = ProviderRegistry()
        try registry.register(GenericOIDCProvider.self)
        try registry.register(AcmeProvider.self)
        #expect(registry.ids == ["acme", "oidc"])
        #expect(throws: AuthError.self) { try registry.register(AcmeProvider.self) }

        let acme = try registry.makeProvider(ProviderConfiguration(provider: "acme", clientID: "c"))
        #expect(type(of: acme).id == "acme")
        #expect(acme.tokenIssuer == "acme")

        let error = #expect(throws: AuthError.self) {
            try registry.makeProvider(ProviderConfiguration(provider: "okta", clientID: "c"))
        }
        #expect(error?.code == .providerNotRegistered)
        #expect(error?.message.contains("registered: acme, oidc") == true)

        // The generic provider needs an issuer.
        #expect(throws: AuthError.self) { try registry.makeProvider(ProviderConfiguration(clientID: "c")) }
    }

    @Test func clientAuthenticationFollowsConfigurationThenMetadata() throws {
        let issuer = try #require(URL(string: "https://id.example.com"))
        let token = try #require(URL(string: "https://id.example.com/token"))
        var metadata = ProviderMetadata(
            issuer: issuer.absoluteString, authorizationEndpoint: token, tokenEndpoint: token)
        let secretless = try GenericOIDCProvider(configuration: ProviderConfiguration(issuer: issuer, clientID: "c"))
        let confidential = try GenericOIDCProvider(
            configuration: ProviderConfiguration(issuer: issuer, clientID: "c d", clientSecret: "s&t")
        )
        #expect(ClientAuthentication.standard(for: secretless.configuration, metadata: metadata) == .none)
        #expect(
            ClientAuthentication.standard(for: confidential.configuration, metadata: metadata) == .clientSecretBasic)
        metadata.tokenEndpointAuthMethodsSupported = ["private_key_jwt", "client_secret_post", "client_secret_basic"]
        #expect(ClientAuthentication.standard(for: confidential.configuration, metadata: metadata) == .clientSecretPost)

        var basic = OAuthRequest(url: token, operation: .tokenExchange, form: [FormField("grant_type", "x")])
        basic.applyStandardClientAuthentication(.clientSecretBasic, configuration: confidential.configuration)
        // RFC 6749 §2.3.1: id and secret are form-encoded before Basic encoding.
        #expect(basic.headerFields[.authorization] == "Basic " + Data("c+d:s%26t".utf8).base64EncodedString())
        #expect(basic.form.first(named: "client_secret") == nil)

        var post = OAuthRequest(url: token, operation: .tokenExchange, form: [])
        post.applyStandardClientAuthentication(.clientSecretPost, configuration: confidential.configuration)
        #expect(post.form.first(named: "client_id") == "c d")
        #expect(post.form.first(named: "client_secret") == "s&t")
        #expect(!post.description.contains("s&t"))
    }
}
