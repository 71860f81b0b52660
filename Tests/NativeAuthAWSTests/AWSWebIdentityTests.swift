import Foundation
import HTTPTypes
import LenientJSON
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

@testable import NativeAuthAWS
@testable import NativeAuthCommands

/// NativeAuthAWS without a network: the STS request as AWS documents it, its answers (AWS's own
/// documented examples, and moto's, whose times carry microseconds), its refusals, the endpoint
/// the AWS CLI would use, and the credentials kept with the tokens, asked for once.
@Suite(.testLogging) struct AWSWebIdentityTests {
    static let role = "arn:aws:iam::123456789012:role/FederatedWebIdentityRole"

    /// STS's answer, from the AssumeRoleWithWebIdentity API reference's example, in the JSON STS
    /// gives when asked with `Accept: application/json` (its times as seconds since 1970, or as
    /// the XML's text, as moto writes them).
    static func answer(expiration: JSONValue = 2_108_761_223, key: String = "ASgeIAIOSFODNN7EXAMPLE") -> String {
        let result: JSONObject = [
            "SubjectFromWebIdentityToken": "amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A",
            "Audience": "client.5498841531868486423.1548@apps.example.com",
            "AssumedRoleUser": [
                "Arn": "arn:aws:sts::123456789012:assumed-role/FederatedWebIdentityRole/app1",
                "AssumedRoleId": "AROACLKWSDQRAOEXAMPLE:app1",
            ],
            "Credentials": [
                "SessionToken": "AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE",
                "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
                "Expiration": expiration,
                "AccessKeyId": .string(key),
            ],
            "SourceIdentity": "SourceIdentityValue",
            "Provider": "www.amazon.com",
        ]
        let document: JSONObject = [
            "AssumeRoleWithWebIdentityResponse": [
                "AssumeRoleWithWebIdentityResult": .object(result),
                "ResponseMetadata": ["RequestId": "ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE"],
            ]
        ]
        return (try? JSONValue.object(document).encodedString()) ?? ""
    }

    /// The URL `text` names.
    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    /// STS's error document, in JSON.
    static func refusal(_ code: String, _ message: String) -> String {
        let document: JSONObject = [
            "Error": ["Type": "Sender", "Code": .string(code), "Message": .string(message)],
            "RequestId": "c6104cbe-af31-11e0-8154-cbc7ccf896c7",
        ]
        return (try? JSONValue.object(document).encodedString()) ?? ""
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> (HTTPResponse, Data) {
        (HTTPResponse(status: status, headerFields: [.contentType: "application/json"]), Data(text.utf8))
    }

    @Test func theRequestIsTheDocumentedUnsignedOneAndTheAnswerIsRead() async throws {
        let seen = Shared<[FormField]>([])
        let transport = FakeTransport { request, body in
            #expect(request.method == .post && request.url?.host == "sts.eu-west-1.amazonaws.com")
            #expect(request.headerFields[.authorization] == nil, "AssumeRoleWithWebIdentity is unsigned")
            #expect(request.headerFields[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true)
            #expect(request.headerFields[.accept] == "application/json", "STS answers JSON when asked so")
            seen.update { $0 = FormURLEncoding.decode(String(decoding: body ?? Data(), as: UTF8.self)) }
            return Self.json(Self.answer())
        }
        let identity = try AWSWebIdentity(
            roleARN: Self.role, endpoint: AWSWebIdentity.endpoint(region: "eu-west-1", environment: [:]),
            durationSeconds: 3600)
        let credentials = try await identity.assumeRole(
            with: "header.claims.signature", subject: "alice@example.com/1", transport: transport)
        let form = seen.value
        #expect(form.first(named: "Action") == "AssumeRoleWithWebIdentity")
        #expect(form.first(named: "Version") == "2011-06-15")
        #expect(form.first(named: "RoleArn") == Self.role)
        #expect(form.first(named: "WebIdentityToken") == "header.claims.signature")
        #expect(form.first(named: "DurationSeconds") == "3600")
        #expect(form.first(named: "RoleSessionName") == "nativeauth-alice@example.com-1")
        #expect(credentials.accessKeyID == "ASgeIAIOSFODNN7EXAMPLE")
        #expect(credentials.secretAccessKey == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY")
        #expect(credentials.expiration == Date(timeIntervalSince1970: 2_108_761_223))
        #expect(credentials.assumedRoleARN == "arn:aws:sts::123456789012:assumed-role/FederatedWebIdentityRole/app1")
        // What is printed of them holds neither secret.
        for text in [
            "\(credentials)", String(reflecting: credentials),
            "\(Mirror(reflecting: credentials).children.map(\.value))",
        ] {
            #expect(!text.contains("wJalrXUtnFEMI") && !text.contains("AQoDYXdzEE0a8"), "\(text)")
        }
        let printed = try #require(try JSONValue.parse(Data(credentials.credentialProcessJSON.utf8)).objectValue)
        #expect(printed["Version"] == JSONValue.integer(1) && printed["AccessKeyId"] == "ASgeIAIOSFODNN7EXAMPLE")
        #expect(printed["SessionToken"] == "AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE")
        #expect(printed["Expiration"] == "2036-10-27T23:00:23Z")
    }

    @Test func moto_sTextTimesWithFractionalSecondsAreRead() async throws {
        let transport = FakeTransport { _, _ in Self.json(Self.answer(expiration: "2036-11-27T23:50:59.521960Z")) }
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("http://127.0.0.1:9/"))
        let credentials = try await identity.assumeRole(with: "t", subject: nil, transport: transport)
        #expect(credentials.expiration == (try Date("2036-11-27T23:50:59Z", strategy: .iso8601)))
    }

    @Test(arguments: [
        ("InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider", "invalid_token"),
        (
            "ExpiredTokenException", "Token expired: current date/time 1700000000 must be before the expiration",
            "invalid_token"
        ),
        ("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", "authorization_failed"),
        ("IDPCommunicationError", "The identity provider could not be reached", "server_error"),
        ("ValidationError", "1 validation error detected: Value '99999' at 'durationSeconds'", "configuration_invalid"),
        ("Throttling", "Rate exceeded", "rate_limited"),
    ])
    func stsRefusalsMapToACodeAndAHint(code: String, message: String, expected: String) async throws {
        let transport = FakeTransport { _, _ in Self.json(Self.refusal(code, message), status: .badRequest) }
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"))
        let error = await #expect(throws: AuthError.self) {
            try await identity.assumeRole(with: "secret-web-identity-token", subject: nil, transport: transport)
        }
        #expect(error?.code.rawValue == expected)
        #expect(error?.oauthError == code && error?.oauthErrorDescription?.hasPrefix(message.prefix(14)) == true)
        #expect(error?.message.contains("(\(code)): \(message.prefix(14))") == true, "\(String(describing: error))")
        #expect(error?.hint?.isEmpty == false)
        #expect(!"\(String(describing: error))".contains("secret-web-identity-token"))
    }

    @Test func aProxysPageOrAnEmptyAnswerIsNotTakenForCredentials() async throws {
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"))
        let page = FakeTransport { _, _ in
            (HTTPResponse(status: .badGateway), Data("<html><body>Bad gateway</body></html>".utf8))
        }
        let gateway = await #expect(throws: AuthError.self) {
            try await identity.assumeRole(with: "t", subject: nil, transport: page)
        }
        #expect(gateway?.code == .serverError && gateway?.status == 502)
        let notCredentials = FakeTransport { _, _ in
            (HTTPResponse(status: .ok), Data("<html><body>Sign in to the proxy</body></html>".utf8))
        }
        let malformed = await #expect(throws: AuthError.self) {
            try await identity.assumeRole(with: "t", subject: nil, transport: notCredentials)
        }
        #expect(malformed?.code == .responseMalformed)
        let empty = FakeTransport { _, _ in (HTTPResponse(status: .ok), Data()) }
        await #expect(throws: AuthError.self) {
            try await identity.assumeRole(with: "t", subject: nil, transport: empty)
        }
    }

    /// STS's JSON, read with LenientJSON: its answer and its error (at the top, or in an
    /// `ErrorResponse`), its times in either form; an XML answer, an HTML page or another document
    /// is nothing.
    @Test func stsJSONIsReadAndAnythingElseIsNothing() throws {
        let result = try #require(STSAnswer.result(of: "AssumeRoleWithWebIdentity", in: Data(Self.answer().utf8)))
        #expect(result["Credentials"]?.objectValue?["AccessKeyId"] == "ASgeIAIOSFODNN7EXAMPLE")
        #expect(STSAnswer.result(of: "GetCallerIdentity", in: Data(Self.answer().utf8)) == nil)
        let refusal = try #require(STSAnswer.refusal(in: Data(Self.refusal("AccessDenied", "Not authorized").utf8)))
        #expect(refusal.code == "AccessDenied" && refusal.message == "Not authorized")
        let wrapped = #"{"ErrorResponse": {"Error": {"Code": "Throttling", "Message": "Rate exceeded"}}}"#
        #expect(STSAnswer.refusal(in: Data(wrapped.utf8))?.code == "Throttling")
        #expect(STSAnswer.date(.double(1.7000136e9)) == Date(timeIntervalSince1970: 1_700_013_600))
        #expect(STSAnswer.date(.integer(1_700_013_600)) == Date(timeIntervalSince1970: 1_700_013_600))
        #expect(STSAnswer.date("2023-11-15T02:00:00Z") == Date(timeIntervalSince1970: 1_700_013_600))
        #expect(STSAnswer.date("2023-11-15T02:00:00.123456Z") == Date(timeIntervalSince1970: 1_700_013_600))
        for notADate: JSONValue in ["tomorrow", .bool(true), .null, .double(.infinity)] {
            #expect(STSAnswer.date(notADate) == nil, "\(notADate)")
        }
        for notSTS in [
            "", "   ", "plain text", "<html><body>Bad gateway<br></body></html>", "[1, 2]", #"{"Error": "x"}"#,
            #"<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>"#,
            #"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult/></AssumeRoleWithWebIdentityResponse>"#,
        ] {
            #expect(STSAnswer.refusal(in: Data(notSTS.utf8)) == nil, "\(notSTS)")
            #expect(STSAnswer.result(of: "AssumeRoleWithWebIdentity", in: Data(notSTS.utf8)) == nil, "\(notSTS)")
        }
    }

    @Test func theEndpointIsTheOneTheAWSCLIWouldUse() throws {
        #expect(try AWSWebIdentity.endpoint(environment: [:]).absoluteString == "https://sts.us-east-1.amazonaws.com")
        #expect(
            try AWSWebIdentity.endpoint(environment: ["AWS_DEFAULT_REGION": "eu-central-1"]).absoluteString
                == "https://sts.eu-central-1.amazonaws.com")
        #expect(
            try AWSWebIdentity.endpoint(environment: ["AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-central-1"])
                .absoluteString == "https://sts.ap-south-1.amazonaws.com")
        #expect(
            try AWSWebIdentity.endpoint(region: "cn-north-1", environment: ["AWS_REGION": "ap-south-1"]).absoluteString
                == "https://sts.cn-north-1.amazonaws.com.cn")
        let both = ["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL": "http://127.0.0.1:5000"]
        #expect(
            try AWSWebIdentity.endpoint(region: "eu-west-1", environment: both).absoluteString
                == "http://127.0.0.1:4566")
        #expect(
            try AWSWebIdentity.endpoint(environment: ["AWS_ENDPOINT_URL": "http://127.0.0.1:5000"]).absoluteString
                == "http://127.0.0.1:5000")
        var ignored = both
        ignored["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
        #expect(
            try AWSWebIdentity.endpoint(environment: ignored).absoluteString == "https://sts.us-east-1.amazonaws.com")
        #expect(throws: AuthError.self) {
            try AWSWebIdentity.endpoint(region: "eu-west-1.evil.example/", environment: [:])
        }
        // Plain HTTP only on loopback: the ID token is a credential.
        #expect(throws: AuthError.self) {
            try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("http://sts.example.com"))
        }
    }

    @Test func aRoleARNAndADurationAreChecked() throws {
        let endpoint = try Self.url("https://sts.amazonaws.com")
        for bad in [
            "arn:aws:iam::123456789012:user/alice", "arn:aws:iam::1234:role/x", "role/x",
            "arn:aws:iam::123456789012:role/",
            "arn:aws:iam::123456789012:role/x\n[default]",
        ] {
            let error = #expect(throws: AuthError.self) { try AWSWebIdentity(roleARN: bad, endpoint: endpoint) }
            #expect(error?.field == "role_arn", "\(bad)")
        }
        #expect(throws: Never.self) {
            try AWSWebIdentity(roleARN: "arn:aws-us-gov:iam::123456789012:role/path/to/Role", endpoint: endpoint)
        }
        let short = #expect(throws: AuthError.self) {
            try AWSWebIdentity(roleARN: Self.role, endpoint: endpoint, durationSeconds: 60)
        }
        #expect(short?.field == "duration")
    }

    @Test func theSessionNameIsWhatSTSAllows() {
        #expect(AWSWebIdentity.sessionName(subject: nil) == "nativeauth")
        #expect(
            AWSWebIdentity.sessionName(subject: "auth0|5f7c8ec7c33c6c004bbafe82")
                == "nativeauth-auth0-5f7c8ec7c33c6c004bbafe82")
        #expect(AWSWebIdentity.sessionName(subject: String(repeating: "a", count: 100)).count == 64)
    }

    // MARK: - Kept with the tokens

    /// A stored sign-in whose ID token is good for an hour (its signature is not checked again).
    static func signedIn() async throws -> (Authenticator, MemoryTokenStore) {
        let claims =
            #"{"iss":"https://issuer.example","sub":"alice","aud":"test-client","exp":\#(Int(Date().timeIntervalSince1970) + 3600)}"#
        let idToken =
            Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
        let provider = try GenericOIDCProvider(
            configuration: testConfiguration(issuer: try Self.url("https://issuer.example")))
        let store = MemoryTokenStore()
        let auth = Authenticator(
            provider: provider, store: store,
            transport: FakeTransport { _, _ in throw AuthError(.requestFailed, "no request to the issuer expected") })
        let tokens = TokenSet(
            accessToken: "access-token-1", refreshToken: "refresh-1", idToken: idToken,
            expiresAt: Date().addingTimeInterval(3600), issuedAt: Date(), subject: "alice")
        await store.save(tokens, for: auth.key)
        return (auth, store)
    }

    @Test func manyCallersGetOneSTSCallAndTheCredentialsAreKeptUntilFiveMinutesBeforeTheyExpire() async throws {
        let (auth, store) = try await Self.signedIn()
        let calls = Shared(0)
        let expiry = Shared(Date().addingTimeInterval(3600))
        let transport = FakeTransport { _, body in
            calls.update { $0 += 1 }
            let form = FormURLEncoding.decode(String(decoding: body ?? Data(), as: UTF8.self))
            #expect(form.first(named: "WebIdentityToken")?.hasSuffix(".c2ln") == true, "the ID token")
            try await Task.sleep(for: .milliseconds(50))
            return Self.json(
                Self.answer(expiration: .string(expiry.value.formatted(.iso8601)), key: "ASIAKEY\(calls.value)"))
        }
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"))
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask { try await identity.credentials(from: auth, transport: transport).accessKeyID }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(keys) == ["ASIAKEY1"] && calls.value == 1)
        var stored = try #require(await store.load(auth.key))
        #expect(stored.derivedCredentials.map(\.name) == [identity.credentialName])
        #expect(!"\(stored)".contains("wJalrXUtnFEMI"), "\(stored)")
        // The stored form keeps them (a file or keyring store writes this).
        let reread = try TokenSet(storageJSON: try #require(stored.storageJSON.objectValue))
        #expect(reread.derivedCredentials == stored.derivedCredentials)

        // Four minutes left: replaced, once.
        stored.derivedCredentials[0].expiresAt = Date().addingTimeInterval(240)
        await store.save(stored, for: auth.key)
        let fresh = Authenticator(provider: auth.provider, store: store, transport: auth.transport)
        #expect(try await identity.credentials(from: fresh, transport: transport).accessKeyID == "ASIAKEY2")
        #expect(try await identity.credentials(from: fresh, transport: transport).accessKeyID == "ASIAKEY2")
        #expect(calls.value == 2)

        // Another role, or the access token sent instead: other credentials, beside these.
        let other = try AWSWebIdentity(
            roleARN: "arn:aws:iam::123456789012:role/Other", endpoint: try Self.url("https://sts.amazonaws.com"))
        _ = try await other.credentials(from: fresh, transport: transport)
        #expect(try #require(await store.load(auth.key)).derivedCredentials.count == 2)
        // Another duration: credentials of their own, not the hour's kept ones.
        let short = try AWSWebIdentity(
            roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"), durationSeconds: 900)
        #expect(try await short.credentials(from: fresh, transport: transport).accessKeyID == "ASIAKEY4")
        #expect(try #require(await store.load(auth.key)).derivedCredentials.count == 3)
    }

    @Test func aRefusalStoresNothingAndADPoPBoundAccessTokenIsNotSent() async throws {
        let (auth, store) = try await Self.signedIn()
        let refusing = FakeTransport { _, _ in
            Self.json(Self.refusal("AccessDenied", "Not authorized"), status: .forbidden)
        }
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"))
        await #expect(throws: AuthError.self) { try await identity.credentials(from: auth, transport: refusing) }
        #expect(try #require(await store.load(auth.key)).derivedCredentials.isEmpty)

        var bound = try #require(await store.load(auth.key))
        bound.tokenType = "DPoP"
        await store.save(bound, for: auth.key)
        let byAccess = try AWSWebIdentity(
            roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"), sendsAccessToken: true)
        let never = FakeTransport { _, _ in throw AuthError(.requestFailed, "nothing may be sent") }
        let error = await #expect(throws: AuthError.self) {
            try await byAccess.credentials(
                from: Authenticator(provider: auth.provider, store: store, transport: never), transport: never)
        }
        #expect(error?.field == "dpop", "\(String(describing: error))")
    }

    @Test func signedOutIsLoginRequired() async throws {
        let provider = try GenericOIDCProvider(
            configuration: testConfiguration(issuer: try Self.url("https://issuer.example")))
        let never = FakeTransport { _, _ in throw AuthError(.requestFailed, "nothing may be sent") }
        let auth = Authenticator(provider: provider, store: MemoryTokenStore(), transport: never)
        let identity = try AWSWebIdentity(roleARN: Self.role, endpoint: try Self.url("https://sts.amazonaws.com"))
        let error = await #expect(throws: AuthError.self) {
            try await identity.credentials(from: auth, transport: never)
        }
        #expect(error?.isLoginRequired == true)
    }
}

/// `setup-aws`'s edit of the AWS CLI's configuration file, and `google-executable`'s responses.
@Suite(.testLogging) struct CloudConfigurationTests {
    @Test func aNewProfileIsAddedAndEverythingElseStays() throws {
        let before = "# mine\n[default]\nregion = us-east-1\n"
        let edit = try AWSConfigFile.setting("credential_process", to: "/bin/tool token", profile: "dev", in: before)
        #expect(
            edit.text
                == "# mine\n[default]\nregion = us-east-1\n\n[profile dev]\ncredential_process = /bin/tool token\n")
        #expect(edit.replaced == nil && edit.winning.isEmpty)
        let fresh = try AWSConfigFile.setting("credential_process", to: "x", profile: "default", in: "")
        #expect(fresh.text == "[default]\ncredential_process = x\n")
    }

    @Test func theKeyIsReplacedWithItsContinuationLinesAndTheOthersStay() throws {
        let before = """
            [profile  dev ]
            region = eu-west-1
            credential_process = /old/tool
              --with more
            output = json

            [profile other]
            credential_process = /other

            """
        let edit = try AWSConfigFile.setting("credential_process", to: "/new tool", profile: "dev", in: before)
        #expect(
            edit.text
                == "[profile  dev ]\nregion = eu-west-1\ncredential_process = /new tool\noutput = json\n\n[profile other]\ncredential_process = /other\n"
        )
        #expect(edit.replaced == "/old/tool")
        let again = try AWSConfigFile.setting("credential_process", to: "/new tool", profile: "dev", in: edit.text)
        #expect(again.text == edit.text && again.replaced == nil)
    }

    @Test func keysTheAWSCLIUsesFirstAreNamed() throws {
        let before = "[profile dev]\nrole_arn = arn:aws:iam::1:role/x\nsso_session = corp\n\n[profile next]\n"
        let edit = try AWSConfigFile.setting("credential_process", to: "/t", profile: "dev", in: before)
        #expect(edit.winning == ["role_arn", "sso_session"])
        #expect(
            edit.text
                == "[profile dev]\nrole_arn = arn:aws:iam::1:role/x\nsso_session = corp\ncredential_process = /t\n\n[profile next]\n"
        )
    }

    @Test func aProfileNameOrValueThatWouldBreakTheFileIsRefused() {
        for name in ["", "dev\n[default]", "a]b", " dev", "dev\r"] {
            #expect(throws: AuthError.self, "\(name.debugDescription)") {
                try AWSConfigFile.setting("credential_process", to: "/t", profile: name, in: "")
            }
        }
        #expect(throws: AuthError.self) {
            try AWSConfigFile.setting("credential_process", to: "/t\n[default]", profile: "dev", in: "")
        }
    }

    @Test func theExecutableResponsesAreGooglesShape() throws {
        let claims = #"{"sub":"alice","exp":2000000000}"#
        let idToken = "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
        let tokens = TokenSet(accessToken: "access-token-1", idToken: idToken, issuedAt: Date())
        let success = try #require(
            try JSONValue.parse(Data(GoogleExecutable.success(tokens, kind: .id).utf8)).objectValue)
        #expect(success["version"] == .integer(1) && success["success"] == .bool(true))
        #expect(success["token_type"] == "urn:ietf:params:oauth:token-type:id_token")
        #expect(success["id_token"] == .string(idToken) && success["expiration_time"] == .integer(2_000_000_000))
        let access = try #require(
            try JSONValue.parse(Data(GoogleExecutable.success(tokens, kind: .access).utf8)).objectValue)
        #expect(
            access["token_type"] == "urn:ietf:params:oauth:token-type:jwt" && access["id_token"] == "access-token-1")

        let failure = try #require(
            try JSONValue.parse(Data(GoogleExecutable.failure(AuthError(.loginRequired, "not signed in")).utf8))
                .objectValue)
        #expect(failure["version"] == .integer(1) && failure["success"] == .bool(false))
        #expect(
            failure["code"] == "login_required" && failure["message"]?.stringValue?.hasPrefix("not signed in") == true)
    }
}
