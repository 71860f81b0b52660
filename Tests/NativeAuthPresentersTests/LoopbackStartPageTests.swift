import CNativeAuthPOSIX
import Crypto
import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// The one-time start address a browser gets instead of the authorization or end-session URL,
/// which another local user could read from the browser's command line (`/proc/PID/cmdline`), and
/// the refusal of requests from other users' sockets.
#if os(Linux)
    private let isLinux = true
#else
    private let isLinux = false
#endif

@Suite(.testLogging) struct LoopbackStartPageTests {
    static let state = "the-state-of-this-sign-in"
    static let authorization = URL(
        string: "https://idp.example/authorize?client_id=c&state=\(state)&nonce=n0nce&code_challenge=ch4llenge")

    static func handler(_ callback: AuthorizationCallback) -> CallbackDisposition<AuthorizationResponse> {
        guard case .redirect(let url) = callback,
            FormURLEncoding.decode(url.query ?? "").first(named: "state") == state
        else { return .ignore }
        let code = FormURLEncoding.decode(url.query ?? "").first(named: "code") ?? ""
        return .complete(.success(AuthorizationResponse(code: code, issuer: nil)))
    }

    /// Runs a loopback session whose browser is `browser`, given what a browser gets: the start
    /// address; the session's result. The timeout only bounds a hang: beside the whole suite on two
    /// cores these few local exchanges have taken 50 s, and 20 s failed CI.
    static func signIn(
        _ browser: @escaping @Sendable (URL) async throws -> Void
    ) async throws -> Result<AuthorizationResponse, AuthError> {
        let presenter = LoopbackPresenter(
            configuration: .init(
                timeout: .seconds(120), opener: ClosureOpener(body: browser), output: ConsoleOutput { _ in }))
        let session = try await presenter.beginSession()
        do {
            let url = try #require(authorization)
            return .success(try await session.authorize(url) { handler($0) })
        } catch let error as AuthError {
            return .failure(error)
        }
    }

    /// GETs `url` without following redirects.
    static func get(_ url: URL) async throws -> (HTTPResponse, String) {
        let (response, body) = try await URLSessionTransport().send(HTTPRequest(method: .get, url: url), body: nil)
        return (response, String(decoding: body, as: UTF8.self))
    }

    static func callback(_ start: URL, _ query: String) throws -> URL {
        try #require(URL(string: "http://127.0.0.1:\(start.port ?? 0)/callback?\(query)"))
    }

    @Test func theBrowserGetsAOneTimeAddressThatRedirectsToTheAuthorizationURL() async throws {
        let result = try await Self.signIn { start in
            #expect(start.host == "127.0.0.1" && start.path.hasPrefix("/start/") && start.query == nil)
            #expect(start.lastPathComponent.count >= 43, "32 random bytes")
            for part in [Self.state, "n0nce", "ch4llenge", "idp.example"] {
                #expect(!start.absoluteString.contains(part), "nothing of the authorization URL is in it")
            }
            let (response, _) = try await Self.get(start)
            #expect(response.status.code == 302)
            #expect(response.headerFields[.location] == Self.authorization?.absoluteString)
            #expect(response.headerFields[.cacheControl] == "no-store")
            _ = try await Self.get(try Self.callback(start, "code=good&state=\(Self.state)"))
        }
        #expect(try result.get().code == "good")
    }

    /// Someone who read the start address fetched it first: the person's browser fetches it second,
    /// and the sign-in stops with an error the person sees, on the page and in the terminal.
    @Test func aSecondFetchOfTheStartAddressStopsTheSignIn() async throws {
        let result = try await Self.signIn { start in
            let (first, _) = try await Self.get(start)
            #expect(first.status.code == 302)
            let (second, page) = try await Self.get(start)
            #expect(second.status.code == 400)
            #expect(page.contains("opened twice") && !page.contains("idp.example"))
        }
        guard case .failure(let error) = result else {
            Issue.record("the sign-in went on")
            return
        }
        #expect(error.code == .invalidState)
        #expect(error.message.contains("opened twice"))
    }

    /// An end-session URL carries the ID token: the start page posts it in a form, so that it is
    /// neither in a command line nor in the browser's history, and only the page's own script runs.
    @Test func anEndSessionURLWithAnIDTokenIsPostedAsAForm() throws {
        let idToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln\"><script>alert(1)</script>"
        var components = try #require(URLComponents(string: "https://idp.example/logout"))
        components.queryItems = [
            URLQueryItem(name: "id_token_hint", value: idToken),
            URLQueryItem(name: "post_logout_redirect_uri", value: "http://127.0.0.1:9/logged-out"),
            URLQueryItem(name: "state", value: "s"),
        ]
        let target = try #require(components.url)
        let answer = StartPage(target: target).answer
        #expect(answer.status == 200)
        #expect(!answer.headers.contains { $0.0 == "Location" })
        #expect(answer.body.contains(#"<form method="post" action="https://idp.example/logout">"#))
        #expect(answer.body.contains(#"name="post_logout_redirect_uri" value="http://127.0.0.1:9/logged-out""#))
        #expect(!answer.body.contains("<script>alert"), "values are escaped")
        #expect(answer.body.contains("c2ln&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"))
        let policy = try #require(answer.headers.first { $0.0 == "Content-Security-Policy" }?.1)
        let hash = Data(SHA256.hash(data: Data("document.forms[0].submit()".utf8))).base64EncodedString()
        #expect(policy == "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-\(hash)'")
        #expect(answer.body.contains("<script>document.forms[0].submit()</script>"))

        let redirected = StartPage(target: target, postsSecrets: false).answer
        #expect(redirected.status == 302, "a provider that refuses POST gets the URL")
        let plain = StartPage(target: try #require(Self.authorization)).answer
        #expect(plain.status == 302 && plain.body.isEmpty)
    }

    @Test func theOwnerOfALoopbackSocketIsReadFromTheKernelsTable() {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:AED9 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
               1: 0100007F:B8F6 0100007F:AED9 01 00000000:00000000 00:00000000 00000000  1001        0 2 1
               2: 0100007F:AED9 0100007F:B8F6 01 00000000:00000000 00:00000000 00000000     0        0 3 1
            """
        #expect(LoopbackPeer.owner(in: table, peerPort: 0xB8F6, listenerPort: 0xAED9) == 1001)
        #expect(LoopbackPeer.owner(in: table, peerPort: 0xAED9, listenerPort: 0xB8F6) == 0)
        #expect(LoopbackPeer.owner(in: table, peerPort: 1, listenerPort: 0xAED9) == nil)
    }

    /// The kernel names the owner of one socket (sock_diag): this process's, for a connection it made.
    @Test(.enabled(if: isLinux, "sock_diag is Linux's"))
    func theKernelNamesTheOwnerOfOneSocket() throws {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer {
            close(client)
            close(server)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(server, generic, length) == 0 && listen(server, 1) == 0
                    && getsockname(server, generic, &length) == 0 && connect(client, generic, length) == 0
            }
        }
        #expect(bound)
        var local = sockaddr_in()
        withUnsafeMutablePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(client, $0, &length) }
        }
        let clientPort = UInt16(bigEndian: local.sin_port)
        let serverPort = UInt16(bigEndian: address.sin_port)
        let owner = nativeauth_tcp_socket_owner(AF_INET, "127.0.0.1", clientPort, "127.0.0.1", serverPort)
        #expect(owner == Int64(getuid()))
        #expect(nativeauth_tcp_socket_owner(AF_INET, "127.0.0.1", clientPort &+ 1, "127.0.0.1", serverPort) == -1)
    }

    /// Another user of the machine read the start address (or the state) from the browser's
    /// command line. Their requests, from their own sockets, are refused and change nothing: the
    /// start address still works once for the person, and a callback with the right `state` but the
    /// other user's code is not taken (RFC 9700 §4.5, account injection).
    @Test(.enabled(if: OtherUser.isAvailable, "\(OtherUser.unavailableReason ?? "")"))
    func requestsFromAnotherUsersSocketsAreRefusedAndChangeNothing() async throws {
        try await OtherUser.ensure()
        let result = try await Self.signIn { start in
            #expect(try await OtherUser.fetch(start) == 403, "the other user cannot use the start address")
            let injected = try Self.callback(start, "code=hers&state=\(Self.state)")
            #expect(try await OtherUser.fetch(injected) == 403, "nor deliver a code with the right state")
            let (response, _) = try await Self.get(start)
            #expect(response.status.code == 302, "the start address was not spent")
            _ = try await Self.get(try Self.callback(start, "code=mine&state=\(Self.state)"))
        }
        #expect(try result.get().code == "mine")
    }
}
