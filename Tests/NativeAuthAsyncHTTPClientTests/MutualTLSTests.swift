import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// RFC 8705 against the sandbox served over HTTPS with a client CA: `tls_client_auth` at the
/// `mtls_endpoint_aliases`, and access tokens bound to the client certificate, sent only through a
/// transport that presents it.
@Suite(.testLogging) struct MutualTLSTests {
    /// The `x5t#S256` of a PEM certificate as openssl computes it, independent of the code under test.
    private func thumbprint(_ pem: String) async throws -> String {
        let result = try await run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in '\(pem)' -outform der | openssl dgst -sha256 -binary | base64 -w0"
                    + " | tr '+/' '-_' | tr -d '='",
            ])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func tlsClientAuthBindsTheTokensToTheCertificate() async throws {
        let certificates = try await TestCertificates.make()
        let clientThumbprint = try await thumbprint(certificates.path("client.pem"))
        #expect(clientThumbprint.count == 43)
        var client = SandboxAuthorizationServer.Client(id: "mtls-client")
        client.certificateThumbprint = clientThumbprint
        var configuration = SandboxAuthorizationServer.Configuration(clients: [client], autoApprove: true)
        configuration.tls = TestTLSIdentity(
            certificateFile: certificates.path("server.pem"), keyFile: certificates.path("server.key"),
            clientCAFile: certificates.path("ca.pem"), requiresClientCertificate: false)
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        let ca = certificates.path("ca.pem")
        let presenting = AsyncHTTPClientTransport(
            configuration: .init(
                proxy: .none,
                tls: TLSSettings(
                    caFile: ca, clientCertificateFile: certificates.path("client.pem"),
                    clientKeyFile: certificates.path("client.key"))))
        #expect(presenting.clientCertificateThumbprint == clientThumbprint)
        let withoutCertificate = AsyncHTTPClientTransport(
            configuration: .init(proxy: .none, tls: TLSSettings(caFile: ca)))
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: "mtls-client", scopes: ["openid", "profile"],
                clientAuthentication: .tlsClientAuth))
        let store = MemoryTokenStore()

        // Signed in over mutual TLS: the code is redeemed at the token endpoint's alias, and the
        // tokens are bound to the certificate.
        let auth = Authenticator(provider: provider, store: store, transport: presenting)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: withoutCertificate)))
        #expect(sandbox.aliasRequestCount(.token) == 1)
        #expect(sandbox.requestCount(.token) == 1)
        let tokens = try #require(try await auth.currentTokens())
        #expect(tokens.certificateThumbprint == clientThumbprint)
        #expect(try await auth.userInfo().subject == tokens.subject)
        #expect(sandbox.aliasRequestCount(.userInfo) == 1)

        // The bound token is not sent through a transport without the certificate.
        let elsewhere = Authenticator(provider: provider, store: store, transport: withoutCertificate)
        let refused = await #expect(throws: AuthError.self) { _ = try await elsewhere.userInfo() }
        #expect(refused?.code == .configurationInvalid)
        #expect(refused?.message.contains("bound to a TLS client certificate") == true)
        #expect(sandbox.requestCount(.userInfo) == 1, "nothing was sent")

        // And the server refuses it without the certificate: the binding is the server's check too.
        var request = HTTPRequest(method: .get, url: sandbox.url(.userInfo))
        request.headerFields[.authorization] = "Bearer \(tokens.accessToken)"
        let (stolen, _) = try await withoutCertificate.send(request, body: nil)
        #expect(stolen.status.code == 401)

        // Without the certificate the client cannot authenticate at the token endpoint.
        var tokenRequest = HTTPRequest(method: .post, url: sandbox.url(.token))
        tokenRequest.headerFields[.contentType] = FormURLEncoding.mediaType
        let form = FormURLEncoding.encode([
            FormField("grant_type", "refresh_token"), FormField("client_id", "mtls-client"),
            FormField("refresh_token", try #require(tokens.refreshToken)),
        ])
        let (unauthenticated, body) = try await withoutCertificate.send(tokenRequest, body: Data(form.utf8))
        #expect(unauthenticated.status.code == 401)
        #expect(String(decoding: body, as: UTF8.self).contains("invalid_client"))

        // A refresh over mutual TLS keeps the binding, and the binding survives the store's format.
        _ = try await auth.refresh()
        let refreshed = try #require(await store.load(auth.key))
        #expect(refreshed.certificateThumbprint == clientThumbprint)
        let stored = try TokenSet(storageJSON: try #require(refreshed.storageJSON.objectValue))
        #expect(stored.certificateThumbprint == clientThumbprint)
        await sandbox.stop()
    }

    /// The aliases apply to a client that speaks mutual TLS; the configuration's endpoints still win,
    /// and an alias that is not HTTPS is ignored.
    @Test func mutualTLSAliasesYieldToTheConfiguration() throws {
        let document: JSONObject = [
            "authorization_endpoint": "https://id.example/authorize",
            "token_endpoint": "https://id.example/token",
            "userinfo_endpoint": "https://id.example/userinfo",
            "mtls_endpoint_aliases": [
                "token_endpoint": "https://mtls.id.example/token", "userinfo_endpoint": "http://mtls.id.example/u",
                "revocation_endpoint": "https://mtls.id.example/revoke",
            ],
        ]
        let source = try #require(URL(string: "https://id.example/.well-known/openid-configuration"))
        let metadata = try ProviderMetadata(document: document, source: source, overrides: EndpointOverrides())
        let overrides = EndpointOverrides(revocation: URL(string: "https://configured.example/revoke"))
        let aliased = metadata.applyingMutualTLSAliases(keeping: overrides)
        #expect(aliased.tokenEndpoint.absoluteString == "https://mtls.id.example/token")
        #expect(aliased.userInfoEndpoint?.absoluteString == "https://id.example/userinfo", "plain HTTP ignored")
        #expect(aliased.revocationEndpoint?.absoluteString == "https://configured.example/revoke")
        #expect(aliased.authorizationEndpoint == metadata.authorizationEndpoint)
    }
}
