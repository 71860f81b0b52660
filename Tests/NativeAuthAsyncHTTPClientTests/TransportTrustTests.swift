import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Trust and client certificates of the AsyncHTTPClient transport, against a real HTTPS server on
/// 127.0.0.1 whose certificates openssl made (scripts/test-certificates).
@Suite(.testLogging) struct TransportTrustTests {
    private func get(_ url: URL) -> HTTPRequest { HTTPRequest(method: .get, url: url) }

    private func transport(_ tls: TLSSettings) -> AsyncHTTPClientTransport {
        AsyncHTTPClientTransport(configuration: .init(proxy: .none, tls: tls))
    }

    private func httpsServer(
        _ certificates: TestCertificates, clientCA: String? = nil
    ) async throws -> TestHTTPServer {
        let identity = TestTLSIdentity(
            certificateFile: certificates.path("server.pem"), keyFile: certificates.path("server.key"),
            clientCAFile: clientCA.map(certificates.path))
        return try await TestHTTPServer.start(tls: identity) { request in .json(#"{"path": "\#(request.path)"}"#) }
    }

    /// A private CA's server is refused with its own error and the fix; the CA file, `SSL_CERT_FILE`
    /// and `SSL_CERT_DIR` each make it trusted.
    @Test func aPrivateCAIsTrustedOnlyWhenGiven() async throws {
        let certificates = try await TestCertificates.make()
        let server = try await httpsServer(certificates)
        let url = server.url("/.well-known/openid-configuration")
        #expect(url.scheme == "https")

        let error = await #expect(throws: AuthError.self) {
            _ = try await transport(TLSSettings()).send(get(url), body: nil)
        }
        #expect(error?.code == .certificateUntrusted)
        #expect(error?.message.contains("the server's certificate is not trusted") == true)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(error?.hint?.contains("`ca_file`") == true)
        #expect(error?.isRetryable == false)

        for tls in [
            TLSSettings(caFile: certificates.path("ca.pem")),
            TLSSettings(environment: ["SSL_CERT_FILE": certificates.path("ca.pem")]),
            TLSSettings(environment: ["SSL_CERT_DIR": certificates.path("cadir")]),
        ] {
            let (response, body) = try await transport(tls).send(get(url), body: nil)
            #expect(response.status.code == 200, "\(tls)")
            #expect(String(decoding: body, as: UTF8.self).contains("openid-configuration"))
        }
        await server.stop()
    }

    /// Trusting the wrong CA is no better than trusting none.
    @Test func anotherCAIsNotEnough() async throws {
        let certificates = try await TestCertificates.make()
        let server = try await httpsServer(certificates)
        let error = await #expect(throws: AuthError.self) {
            _ = try await transport(TLSSettings(caFile: certificates.path("other-ca.pem"))).send(
                get(server.url("/")), body: nil)
        }
        #expect(error?.code == .certificateUntrusted)
        await server.stop()
    }

    /// A server that requires a client certificate accepts the one its CA issued and refuses
    /// another CA's, and no certificate at all.
    @Test func mutualTLSAcceptsTheRightClientCertificateOnly() async throws {
        let certificates = try await TestCertificates.make()
        let server = try await httpsServer(certificates, clientCA: "ca.pem")
        let url = server.url("/token")
        let ca = certificates.path("ca.pem")

        let accepted = transport(
            TLSSettings(
                caFile: ca, clientCertificateFile: certificates.path("client.pem"),
                clientKeyFile: certificates.path("client.key")))
        let (response, _) = try await accepted.send(get(url), body: nil)
        #expect(response.status.code == 200)

        let other = transport(
            TLSSettings(
                caFile: ca, clientCertificateFile: certificates.path("other-client.pem"),
                clientKeyFile: certificates.path("other-client.key")))
        let refused = await #expect(throws: AuthError.self) { _ = try await other.send(get(url), body: nil) }
        #expect(refused?.code == .network)
        #expect(refused?.message.contains("127.0.0.1") == true)

        let none = await #expect(throws: AuthError.self) {
            _ = try await transport(TLSSettings(caFile: ca)).send(get(url), body: nil)
        }
        #expect(none?.code == .network)
        await server.stop()
    }

    /// A client key that others may read is refused before anything is sent, with the fix; a
    /// missing CA file, a certificate without its key and a file that is not PEM name the setting.
    @Test func unusableTrustSettingsAreClearErrors() async throws {
        let certificates = try await TestCertificates.make()
        let url = try #require(URL(string: "https://127.0.0.1:9/token"))
        #expect(chmod(certificates.path("client.key"), 0o644) == 0)
        let cases: [(TLSSettings, String, String)] = [
            (
                TLSSettings(
                    clientCertificateFile: certificates.path("client.pem"),
                    clientKeyFile: certificates.path("client.key")),
                "client_key", "chmod 600"
            ),
            (TLSSettings(caFile: certificates.path("missing.pem")), "ca_file", "does not exist"),
            (TLSSettings(caFile: certificates.path("ca.key")), "ca_file", "no PEM certificate"),
            (TLSSettings(clientCertificateFile: certificates.path("client.pem")), "client_key", "needs its key"),
        ]
        for (tls, field, text) in cases {
            let error = await #expect(throws: AuthError.self) { _ = try await transport(tls).send(get(url), body: nil) }
            #expect(error?.code == .configurationInvalid)
            #expect(error?.field == field)
            let said = "\(error?.message ?? "") \(error?.hint ?? "")"
            #expect(said.contains(text), "\(said)")
        }
    }

    /// URLSession cannot take a CA file: asking for one is refused with the way out, and its
    /// failure on an untrusted server is the same clear error.
    @Test func urlSessionSaysWhatItCannotDo() async throws {
        let error = #expect(throws: AuthError.self) {
            _ = try StandardTransport.make(.urlSession, tls: TLSSettings(caFile: "/etc/ssl/certs/ca-certificates.crt"))
        }
        #expect(error?.field == "http_transport")
        #expect(error?.hint?.contains("asynchttpclient") == true)

        let certificates = try await TestCertificates.make()
        let server = try await httpsServer(certificates)
        let untrusted = await #expect(throws: AuthError.self) {
            _ = try await URLSessionTransport().send(get(server.url("/")), body: nil)
        }
        #expect(untrusted?.code == .certificateUntrusted, "\(String(describing: untrusted?.underlying))")
        await server.stop()
    }
}
