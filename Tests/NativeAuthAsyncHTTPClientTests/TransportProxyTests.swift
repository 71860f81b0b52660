import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// Proxy settings as curl reads them, in memory.
@Suite(.testLogging) struct ProxySettingsTests {
    private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test func theSchemesVariableIsReadLowercaseFirstThenAllProxy() throws {
        let settings = ProxySettings(environment: [
            "https_proxy": "http://lower:3128", "HTTPS_PROXY": "http://upper:3128", "ALL_PROXY": "fallback:8080",
        ])
        #expect(try settings.proxy(for: url("https://idp.example.com/token"))?.description == "lower:3128")
        #expect(try settings.proxy(for: url("http://idp.example.com/token"))?.description == "fallback:8080")
        #expect(try ProxySettings(environment: [:]).proxy(for: url("https://idp.example.com/")) == nil)
    }

    @Test func aProxyWithoutSchemeOrPortIsHTTPOnPort1080AndKeepsItsCredentials() throws {
        let server = try ProxyServer(parsing: "proxy.corp")
        #expect(server.kind == .http && server.port == 1080 && server.username == nil)
        let withCredentials = try ProxyServer(parsing: "http://us%40er:p%3Ass@[::1]:3128")
        #expect(withCredentials.host == "::1" && withCredentials.port == 3128)
        #expect(withCredentials.username == "us@er" && withCredentials.password == "p:ss")
        #expect(withCredentials.description == "[::1]:3128", "never the credentials")
        #expect(try ProxyServer(parsing: "socks5h://127.0.0.1:1081").kind == .socks5)
    }

    @Test(arguments: ["https://proxy:3128", "ftp://proxy", "http://proxy:99999", "http://"])
    func aMalformedProxyVariableFailsTheRequestNamingIt(value: String) throws {
        let settings = ProxySettings(environment: ["HTTPS_PROXY": value])
        let error = #expect(throws: AuthError.self) { try settings.proxy(for: url("https://idp.example.com/")) }
        #expect(error?.code == .configurationInvalid)
        #expect(error?.message.contains("HTTPS_PROXY") == true)
    }

    @Test func aSecretInAMalformedProxyIsNotRepeated() throws {
        let settings = ProxySettings(environment: ["https_proxy": "https://user:Pr0xy-Secret-Value@proxy:3128"])
        let error = #expect(throws: AuthError.self) { try settings.proxy(for: url("https://idp.example.com/")) }
        #expect(error?.message.contains("Pr0xy-Secret-Value") == false)
    }

    @Test func noProxyMatchesDomainsSubdomainsAddressesAndRanges() throws {
        let settings = ProxySettings(environment: [
            "HTTPS_PROXY": "proxy:3128",
            "NO_PROXY": " internal.example ,.corp.example, 10.0.0.0/8,192.0.2.7,[2001:db8::1]",
        ])
        let direct = [
            "https://internal.example/", "https://idp.internal.example/", "https://corp.example/",
            "https://a.b.corp.example/", "https://10.1.2.3/", "https://192.0.2.7/", "https://[2001:db8::1]/",
        ]
        let proxied = [
            "https://example.com/", "https://notinternal.example/", "https://internal.example.com/",
            "https://11.0.0.1/", "https://192.0.2.8/",
        ]
        for address in direct { #expect(try settings.proxy(for: url(address)) == nil, "\(address)") }
        for address in proxied { #expect(try settings.proxy(for: url(address)) != nil, "\(address)") }
        let star = ProxySettings(environment: ["HTTPS_PROXY": "proxy:3128", "no_proxy": "*"])
        #expect(try star.proxy(for: url("https://example.com/")) == nil)
    }

    @Test func loopbackIsNeverProxiedUnlessTold() throws {
        let settings = ProxySettings(environment: ["HTTP_PROXY": "proxy:3128", "HTTPS_PROXY": "proxy:3128"])
        for address in ["http://127.0.0.1:8080/", "https://[::1]/", "https://localhost/", "http://127.9.9.9/"] {
            #expect(try settings.proxy(for: url(address)) == nil, "\(address)")
        }
        let told = ProxySettings(environment: ["HTTP_PROXY": "proxy:3128", "NATIVEAUTH_PROXY_LOOPBACK": "1"])
        #expect(try told.proxy(for: url("http://127.0.0.1:8080/")) != nil)
    }
}

/// The AsyncHTTPClient transport through a real proxy: Debian's tinyproxy on 127.0.0.1
/// (scripts/tinyproxy), whose log shows what went through it.
@Suite(.testLogging, .serialized) struct TransportProxyTests {
    private func get(_ url: URL) -> HTTPRequest { HTTPRequest(method: .get, url: url) }

    private func transport(_ environment: [String: String], tls: TLSSettings = TLSSettings())
        -> AsyncHTTPClientTransport
    {
        AsyncHTTPClientTransport(configuration: .init(proxy: ProxySettings(environment: environment), tls: tls))
    }

    /// Plain HTTP goes through the proxy too (AsyncHTTPClient tunnels it with CONNECT); loopback
    /// only when told, and `NO_PROXY` sends it past the proxy.
    @Test func plainHTTPGoesThroughTheProxyOnlyWhereTheEnvironmentSays() async throws {
        let proxy = try await TinyProxy.start()
        let server = try await TestHTTPServer.start { _ in .json(#"{"ok": true}"#) }
        let url = server.url("/.well-known/openid-configuration")

        let (untold, _) = try await transport(["HTTP_PROXY": proxy.url()]).send(get(url), body: nil)
        #expect(untold.status.code == 200)
        #expect(proxy.requests.isEmpty, "loopback is not proxied unless told")

        let told = ["HTTP_PROXY": proxy.url(), "NATIVEAUTH_PROXY_LOOPBACK": "1"]
        let (response, body) = try await transport(told).send(get(url), body: nil)
        #expect(response.status.code == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("ok"))
        #expect(proxy.requests == ["CONNECT 127.0.0.1:\(server.port) HTTP/1.1"])

        var bypassed = told
        bypassed["NO_PROXY"] = "127.0.0.1"
        let other = try await TestHTTPServer.start { _ in .json("{}") }
        _ = try await transport(bypassed).send(get(other.url("/bypassed")), body: nil)
        #expect(proxy.requests.count == 1, "NO_PROXY bypassed the proxy")
        await other.stop()
        await server.stop()
        await proxy.stop()
    }

    /// HTTPS is tunnelled with CONNECT: the proxy sees the host and port, never the path, and the
    /// server's certificate is still checked end to end.
    @Test func httpsIsTunnelledWithConnect() async throws {
        let proxy = try await TinyProxy.start()
        let certificates = try await TestCertificates.make()
        let server = try await TestHTTPServer.start(
            tls: TestTLSIdentity(
                certificateFile: certificates.path("server.pem"), keyFile: certificates.path("server.key"))
        ) { _ in .json(#"{"ok": true}"#) }
        let environment = ["HTTPS_PROXY": proxy.url(), "NATIVEAUTH_PROXY_LOOPBACK": "1"]
        let url = server.url("/token")

        let (response, _) = try await transport(environment, tls: TLSSettings(caFile: certificates.path("ca.pem")))
            .send(get(url), body: nil)
        #expect(response.status.code == 200)
        #expect(proxy.requests == ["CONNECT 127.0.0.1:\(server.port) HTTP/1.1"])

        let untrusted = await #expect(throws: AuthError.self) {
            _ = try await transport(environment).send(get(url), body: nil)
        }
        #expect(untrusted?.code == .certificateUntrusted)
        #expect(untrusted?.message.contains("through the proxy 127.0.0.1:\(proxy.port)") == true)
        await server.stop()
        await proxy.stop()
    }

    /// A proxy that wants credentials gets them from its URL; without them, its 407 is a clear
    /// network error naming the proxy, for HTTPS and for plain HTTP.
    @Test func proxyCredentialsComeFromTheURLAndA407NamesTheProxy() async throws {
        let proxy = try await TinyProxy.start(credentials: "nativeauth:proxy-pass")
        let certificates = try await TestCertificates.make()
        let tls = TLSSettings(caFile: certificates.path("ca.pem"))
        let https = try await TestHTTPServer.start(
            tls: TestTLSIdentity(
                certificateFile: certificates.path("server.pem"), keyFile: certificates.path("server.key"))
        ) { _ in .json("{}") }
        let http = try await TestHTTPServer.start { _ in .json("{}") }

        let withCredentials = [
            "HTTPS_PROXY": proxy.url(credentials: "nativeauth:proxy-pass"),
            "HTTP_PROXY": proxy.url(credentials: "nativeauth:proxy-pass"), "NATIVEAUTH_PROXY_LOOPBACK": "1",
        ]
        let (tunnelled, _) = try await transport(withCredentials, tls: tls).send(get(https.url("/a")), body: nil)
        #expect(tunnelled.status.code == 200)
        let (plain, _) = try await transport(withCredentials).send(get(http.url("/b")), body: nil)
        #expect(plain.status.code == 200)

        let without = ["HTTPS_PROXY": proxy.url(), "HTTP_PROXY": proxy.url(), "NATIVEAUTH_PROXY_LOOPBACK": "1"]
        for url in [https.url("/c"), http.url("/d")] {
            let error = await #expect(throws: AuthError.self) {
                _ = try await transport(without, tls: tls).send(get(url), body: nil)
            }
            #expect(error?.code == .network)
            #expect(error?.message.contains("the proxy 127.0.0.1:\(proxy.port)") == true)
            #expect(error?.message.contains("407") == true)
            #expect(error?.hint?.contains("user:password") == true)
            #expect(error?.message.contains("proxy-pass") == false)
        }
        await https.stop()
        await http.stop()
        await proxy.stop()
    }

    /// A proxy that cannot reach the server answers CONNECT with its own error page (tinyproxy's
    /// 500 or 502): a network error that names the proxy and the server, not a malformed answer.
    @Test func aProxysErrorPageNamesTheProxy() async throws {
        let proxy = try await TinyProxy.start()
        // Held for the whole test: a server's port closed before the request could be taken by
        // another test's server meanwhile, and the proxy would reach it.
        let closed = try RefusingPort()
        let url = try #require(URL(string: "http://127.0.0.1:\(closed.port)/token"))
        let error = await #expect(throws: AuthError.self) {
            _ = try await transport(["HTTP_PROXY": proxy.url(), "NATIVEAUTH_PROXY_LOOPBACK": "1"]).send(
                get(url), body: nil)
        }
        #expect(error?.code == .network)
        #expect(error?.message.contains("the proxy 127.0.0.1:\(proxy.port)") == true)
        #expect(error?.message.contains("did not open a connection to 127.0.0.1") == true)
        #expect(error?.hint?.contains("NO_PROXY") == true)
        #expect(proxy.requests == ["CONNECT 127.0.0.1:\(closed.port) HTTP/1.1"])
        await proxy.stop()
        withExtendedLifetime(closed) {}
    }

    /// A proxy that is not there is a network error naming it and the variables to check.
    @Test func aProxyThatIsDownIsNamed() async throws {
        let proxy = try await TinyProxy.start()
        let port = proxy.port
        await proxy.stop()
        try await Task.sleep(for: .milliseconds(200))
        let server = try await TestHTTPServer.start { _ in .json("{}") }
        let error = await #expect(throws: AuthError.self) {
            _ = try await transport([
                "HTTP_PROXY": "http://127.0.0.1:\(port)", "NATIVEAUTH_PROXY_LOOPBACK": "1",
            ]).send(get(server.url("/")), body: nil)
        }
        #expect(error?.code == .network)
        #expect(error?.message.contains("the proxy 127.0.0.1:\(port)") == true)
        #expect(error?.hint?.contains("HTTPS_PROXY") == true)
        await server.stop()
    }
}
