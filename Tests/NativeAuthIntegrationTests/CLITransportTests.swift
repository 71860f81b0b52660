import Foundation
import LenientJSON
import NativeAuth
import NativeAuthTesting
import TestSupport
import Testing

/// The sample CLI's transport: an HTTPS issuer with a private CA (the sandbox serving TLS with
/// certificates openssl made), and a sign-in through a real proxy (tinyproxy).
@Suite(.testLogging) struct CLITransportTests {
    let cli = cliPath("oidc-login")

    /// Without the CA the sign-in stops with the certificate error and the fix; `--ca-file`, then
    /// `NATIVEAUTH_CA_FILE`, then a profile's `ca_file` make it work.
    @Test func anHTTPSIssuerWithAPrivateCANeedsTheCAFile() async throws {
        let certificates = try await TestCertificates.make()
        var configuration = SandboxAuthorizationServer.Configuration(autoApprove: true)
        configuration.tls = TestTLSIdentity(
            certificateFile: certificates.path("server.pem"), keyFile: certificates.path("server.key"))
        let sandbox = try await SandboxAuthorizationServer.start(configuration, mode: .live)
        #expect(sandbox.issuer.scheme == "https")
        let directory = try TemporaryDirectory()
        let connection = [
            "--issuer", sandbox.issuer.absoluteString, "--client-id", SandboxAuthorizationServer.Client.defaultID,
            "--store", directory.path + "/store",
        ]
        let environment = [
            "BROWSER": redirectFollowingBrowser, "BROWSER_CA_FILE": certificates.path("ca.pem"),
            "XDG_CONFIG_HOME": directory.path + "/config",
        ]

        let refused = try await run(cli, ["login", "--timeout", "30"] + connection, environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error: certificate_untrusted: the server's certificate is not trusted"))
        #expect(refused.stderr.contains("hint: trust the CA that issued it (--ca-file"))

        let login = try await run(
            cli, ["login", "--timeout", "30", "--ca-file", certificates.path("ca.pem")] + connection,
            environment: environment)
        #expect(login.status == 0, "\(login.stderr)")

        var withVariable = environment
        withVariable["NATIVEAUTH_CA_FILE"] = certificates.path("ca.pem")
        let refresh = try await run(cli, ["refresh"] + connection, environment: withVariable)
        #expect(refresh.status == 0, "\(refresh.stderr)")

        let add = try await run(
            cli, ["profile", "add", "tls", "--ca-file", certificates.path("ca.pem")] + connection,
            environment: environment)
        #expect(add.status == 0, "\(add.stderr)")
        let show = try await run(cli, ["profile", "show", "tls"], environment: environment)
        #expect(show.stdout.contains(certificates.path("ca.pem")))
        let viaProfile = try await run(cli, ["refresh", "--profile", "tls"], environment: environment)
        #expect(viaProfile.status == 0, "\(viaProfile.stderr)")

        // kubectl's exec entry carries the CA file, made absolute.
        let entry = try await run(
            cli, ["kubeconfig", "--ca-file", "ca.pem"] + connection, environment: environment,
            in: certificates.directory.path)
        #expect(entry.status == 0, "\(entry.stderr)")
        #expect(entry.stdout.contains(#""--ca-file""#) && entry.stdout.contains(certificates.path("ca.pem")))
        await sandbox.stop()
    }

    /// Discovery, the token requests and the refresh go through the proxy the environment names
    /// (and the trace log says so, without a token); `NO_PROXY` sends them past it.
    @Test func aSignInGoesThroughTheProxy() async throws {
        let proxy = try await TinyProxy.start()
        let sandbox = try await SandboxAuthorizationServer.start(.init(autoApprove: true), mode: .live)
        let directory = try TemporaryDirectory()
        let issuer = sandbox.issuer.absoluteString
        let connection = [
            "--issuer", issuer, "--client-id", SandboxAuthorizationServer.Client.defaultID, "--store",
            directory.path + "/store",
        ]
        let environment = [
            "BROWSER": redirectFollowingBrowser, "HTTP_PROXY": proxy.url(), "NATIVEAUTH_PROXY_LOOPBACK": "1",
            "NATIVEAUTH_LOG_LEVEL": "trace",
        ]
        let login = try await run(cli, ["login", "--timeout", "30"] + connection, environment: environment)
        #expect(login.status == 0, "\(login.stderr)")
        // Every request is tunnelled (CONNECT to the issuer), so the proxy's log names the issuer's
        // address; the CLI's own log names each request's path and the proxy it went through.
        #expect(proxy.requests.contains("CONNECT 127.0.0.1:\(sandbox.port) HTTP/1.1"), "\(proxy.requests)")
        #expect(proxy.requests.allSatisfy { $0.hasPrefix("CONNECT 127.0.0.1:\(sandbox.port) ") })
        let exchanges = login.stderr.split(separator: "\n").filter { $0.contains("HTTP exchange") }
        for path in ["/.well-known/openid-configuration", "/token", "/jwks"] {
            #expect(
                exchanges.contains {
                    $0.contains("path=\(path) ") && $0.contains("proxy=127.0.0.1:\(proxy.port)")
                        && $0.contains("transport=AsyncHTTPClient")
                }, "\(path)")
        }
        #expect(login.stderr.contains("http_proxy=127.0.0.1:\(proxy.port)"), "the transport's choice is traced")

        let before = proxy.requests.count
        var bypassed = environment
        bypassed["NO_PROXY"] = "127.0.0.1"
        let refresh = try await run(cli, ["refresh"] + connection, environment: bypassed)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(proxy.requests.count == before, "NO_PROXY bypassed the proxy")
        #expect(refresh.stderr.contains("proxy=none"))
        await sandbox.stop()
        await proxy.stop()
    }
}
