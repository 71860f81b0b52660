import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@Suite(.testLogging) struct RedactionTests {
    // Shapes of real secrets: a GitHub token, a JWT, a django-oauth-toolkit token, a client secret, a hex token.
    static let secrets = [
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
        "p8VzGx2Q1fKbW7mRtYcN4sLdHjE9aU",
        "s3cr3t-Client-Secret-Value-0001",
        "4f2c9a7e1b3d5f608a9c0e1d2b3c4d5e6f708192",
    ]

    /// Every text form of an error: what a program, a log line or a debugger could show.
    static func texts(of error: AuthError) -> [String] {
        var dumped = ""
        dump(error, to: &dumped)
        return [
            error.description, String(reflecting: error), "\(error)", error.message, error.hint ?? "",
            error.oauthErrorDescription ?? "", error.oauthErrorURI ?? "", dumped,
            String(describing: error.localizedDescription),
        ]
    }

    static func expectNoSecrets(in error: AuthError, sourceLocation: SourceLocation = #_sourceLocation) {
        for text in texts(of: error) {
            for secret in secrets {
                #expect(!text.contains(secret), "leaked in: \(text)", sourceLocation: sourceLocation)
                // Not even a recognisable half of it.
                #expect(!text.contains(secret.prefix(secret.count / 2)), sourceLocation: sourceLocation)
            }
        }
    }

    @Test func serverTextThatEchoesSecretsIsScrubbed() {
        let description =
            "Invalid refresh token \(Self.secrets[0]) for client \(Self.secrets[3]), id_token \(Self.secrets[1])"
        let body = """
            {"error":"invalid_grant","error_description":"\(description)","error_uri":"https://acme.example/errors?token=\(Self.secrets[2])"}
            """
        let failure = AuthFailure(
            operation: .refresh,
            response: HTTPResponse(status: .badRequest, headerFields: [.contentType: "application/json"]),
            body: Data(body.utf8)
        )
        let error = StandardErrorMapper().mapFailure(failure)
        #expect(error.code == .loginRequired)
        #expect(error.oauthErrorDescription?.contains("Invalid refresh token") == true)
        #expect(error.oauthErrorURI == "https://acme.example/errors")
        Self.expectNoSecrets(in: error)
        #expect(!"\(failure)".contains(Self.secrets[0]))
    }

    @Test func aBearerChallengeThatEchoesTheTokenIsScrubbed() {
        let header = #"Bearer error="invalid_token", error_description="token \#(Self.secrets[4]) expired""#
        let failure = AuthFailure(
            operation: .apiRequest,
            response: HTTPResponse(status: .unauthorized, headerFields: [.wwwAuthenticate: header])
        )
        let error = StandardErrorMapper().mapFailure(failure)
        #expect(error.code == .invalidToken)
        Self.expectNoSecrets(in: error)
    }

    @Test func aMalformedTokenResponseIsNotQuoted() throws {
        // A broken token response: the parse error points into the token itself.
        let body = #"{"access_token": "\#(Self.secrets[2])\u00zz", "refresh_token": "\#(Self.secrets[0])"}"#
        let parseError = try #require(StandardErrorMapperTests.parseError(body))
        #expect((parseError.snippet?.count ?? 0) <= JSONParseError.maxSnippetLength + 1)
        let error = StandardErrorMapper().mapFailure(
            AuthFailure(
                operation: .tokenExchange,
                response: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
                body: Data(body.utf8),
                underlying: parseError
            )
        )
        #expect(error.code == .responseMalformed)
        #expect(error.message.contains("line 1"))
        Self.expectNoSecrets(in: error)
    }

    @Test func anUnderlyingErrorIsNeverPrinted() {
        struct LeakyError: Error, CustomStringConvertible {
            var description: String { "request failed with token \(RedactionTests.secrets[0])" }
        }
        let error = AuthError(.network, "could not reach 127.0.0.1", underlying: LeakyError())
        Self.expectNoSecrets(in: error)
        #expect(String(reflecting: error).contains("LeakyError"))
    }

    @Test func messagesBuiltWithSecretsAreScrubbed() {
        let error = AuthError(
            .configurationInvalid,
            "bad secret \(Self.secrets[3])",
            hint: "check \(Self.secrets[3])",
            oauthError: Self.secrets[2]
        )
        Self.expectNoSecrets(in: error)
    }

    @Test func ordinaryTextIsKept() {
        let text =
            "the server refused: invalid_grant; see https://docs.github.com/apps/troubleshooting-oauth-app-access-token-request-errors (HTTP 400)"
        #expect(Redaction.scrub(text) == text)
        #expect(Redaction.scrub("ERR_CONNECTION_REFUSED_BY_THE_PEER") == "ERR_CONNECTION_REFUSED_BY_THE_PEER")
        #expect(Redaction.scrub("token=\(Self.secrets[0]);") == "token=[redacted];")
        #expect(Redaction.scrub("known abc", secrets: ["abc"]) == "known [redacted]")
        let path =
            "/tmp/nativeauth-tests-089AB576-2539-4FC3-A3D8-36B2D96CD3AB/tokens-76b68547ee9255fecd2731d73e6d13fc.json"
        #expect(Redaction.scrub("cannot read \(path)") == "cannot read \(path)")
    }

    /// Tokens right after a `/` outside a path, and single-case tokens, are secrets too: Google's
    /// refresh tokens (`1//…`) and codes (`4/0A…`), base64 secrets with `/`, a lowercase token.
    @Test func tokensAfterASlashOutsideAPathAndSingleCaseTokensAreScrubbed() {
        let google = "1//0gLd8XyZqWmN3vBpRtS5uK7eHcFaJ2oIyTqWeRtYuIoPaSdFgHjKl"
        let code = "4/0AX4XfWhQ8sLmN2pRtVbC7yZkE5uJ1oIaSdFgHjKlQwErTy"
        let base64 = "Q2xpZW50/U2VjcmV0+VmFsdWUx/MjM0NTY3ODk="
        let lowercase = "abcdefghijklmnopqrstuvwxyzabcdefghijkl"
        for secret in [google, code, base64, lowercase] {
            let scrubbed = Redaction.scrub("the server said: token \(secret) is invalid")
            #expect(!scrubbed.contains(secret.suffix(16)), "\(scrubbed)")
        }
        #expect(Redaction.scrub("refresh_token=\(google)") == "refresh_token=[redacted]")
        // Paths and URL paths still name files and endpoints; error codes stay.
        let file = "/home/alice/.local/state/nativeauth/tokens-76b68547ee9255fecd2731d73e6d13fc.json"
        #expect(Redaction.scrub("cannot read \(file)") == "cannot read \(file)")
        let url = "https://login.example/tenant/6bA2c3D4e5F6g7H8i9J0kLmNoPqRsT/oauth2/token"
        #expect(Redaction.scrub("POST \(url) failed") == "POST \(url) failed")
        #expect(Redaction.scrub("\(url)?code=\(code)").hasSuffix("?code=[redacted]"))
        for kept in ["invalid_authorization_details_type", "expected application/x-www-form-urlencoded", "and/or"] {
            #expect(Redaction.scrub(kept) == kept)
        }
    }

    /// A server that echoes what it was sent: the values the request carried are removed whatever
    /// their shape, even a client secret too short and plain for the shape-based scrubbing.
    @Test func theValuesARequestSentAreRemovedFromItsError() async throws {
        let secret = "plain-secret-42"
        #expect(Redaction.scrub("bad \(secret)") == "bad \(secret)", "too plain for the shapes")
        let client = SandboxAuthorizationServer.Client(id: "confidential", secret: secret)
        let sandbox = try await SandboxAuthorizationServer.start(
            .init(clients: [client], autoApprove: true), mode: .inMemory)
        let provider = try GenericOIDCProvider(
            configuration: ProviderConfiguration(
                issuer: sandbox.issuer, clientID: "confidential", clientSecret: secret,
                scopes: ["openid"], clientAuthentication: .clientSecretPost))
        let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: sandbox.transport)
        try await auth.login(.browser(RedirectFollowingPresenter(transport: sandbox.transport)))
        let refreshToken = try #require(try await auth.currentTokens()?.refreshToken)
        let echo =
            #"{"error": "invalid_request", "error_description": "client_secret \#(secret), refresh_token \#(refreshToken)"}"#
        sandbox.failNext(1, .token, with: .response(status: 400, contentType: "application/json", body: echo))
        let error = await #expect(throws: AuthError.self) { try await auth.refresh() }
        let shown = try #require(error).description + (error?.oauthErrorDescription ?? "")
        #expect(!shown.contains(secret) && !shown.contains(refreshToken))
        #expect(error?.oauthErrorDescription == "client_secret [redacted], refresh_token [redacted]")
        await sandbox.stop()
    }

    /// The every-command check lets `token` print the access token where its format puts it, and
    /// nothing else: not a second token beside it, not the token from any other command.
    @Test func theEveryCommandCheckAllowsOnlyTokensOwnOutput() {
        let access = Self.secrets[2]
        let id = Self.secrets[1]
        func leaks(_ command: [String], _ stdout: String) -> [String] {
            EveryCommandRun(
                outputs: [
                    CommandOutput(command: command, result: CommandResult(status: 0, stdout: stdout, stderr: ""))
                ],
                tokens: [access, id]
            ).leaks()
        }
        #expect(leaks(["token"], access + "\n").isEmpty)
        #expect(leaks(["token", "--format", "header"], "Bearer \(access)\n").isEmpty)
        #expect(leaks(["token", "--format", "json"], #"{"access_token":"\#(access)","scope":[]}"# + "\n").isEmpty)
        #expect(
            leaks(["token", "--format", "json"], #"{"access_token":"\#(access)","id":"\#(id)"}"# + "\n").count == 2)
        #expect(leaks(["token"], access + access + "\n").count == 1)
        #expect(leaks(["token"], "token: \(access)\n").count == 1)
        #expect(leaks(["status"], access + "\n").count == 1)
    }
}
