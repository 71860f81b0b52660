public import Foundation
internal import HTTPTypes
internal import LenientJSON
@_spi(Provider) public import NativeAuth

/// Temporary AWS credentials for a role, from STS `AssumeRoleWithWebIdentity` with the sign-in's
/// ID token (or access token): what an AWS CLI `credential_process` prints.
///
/// The request is unsigned (the web identity token is the credential) and goes to the region's
/// STS endpoint, or the one the AWS CLI's own variables name (``endpoint(region:environment:)``).
/// ``credentials(from:transport:)`` keeps the answer with the sign-in's tokens
/// (`TokenSet.derivedCredentials`, sealed as they are) and reuses it until five
/// minutes before it expires: one STS call however many processes ask, where the AWS CLI itself
/// runs `credential_process` afresh for every command.
///
/// ```swift
/// let role = try AWSWebIdentity(
///     roleARN: "arn:aws:iam::123456789012:role/developer",
///     endpoint: AWSWebIdentity.endpoint(region: "eu-west-1"))
/// let credentials = try await role.credentials(from: authenticator, transport: transport)
/// ```
public struct AWSWebIdentity: Sendable {
    /// The role to assume (`arn:aws:iam::ACCOUNT:role/NAME`).
    public let roleARN: String
    /// The STS endpoint.
    public let endpoint: URL
    /// How long the credentials last, in seconds (900 up to the role's maximum); `nil` lets STS
    /// choose (an hour).
    public let durationSeconds: Int?
    /// Whether the access token is sent instead of the ID token (for an IAM OIDC provider whose
    /// audience is an API's, and whose access tokens are JWTs).
    public let sendsAccessToken: Bool

    /// How long before their expiry cached credentials are replaced, in seconds.
    public static let renewalMargin: TimeInterval = 300

    /// Describes the role to assume.
    ///
    /// - Throws: `configurationInvalid` for a role ARN that is not
    ///   one (field `role_arn`), a duration outside 900…43200 (field `duration`), or an endpoint
    ///   that is not HTTPS (plain HTTP only to a loopback address).
    public init(roleARN: String, endpoint: URL, durationSeconds: Int? = nil, sendsAccessToken: Bool = false)
        throws(AuthError)
    {
        let parts = roleARN.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "arn", parts[1].hasPrefix("aws"), parts[2] == "iam",
            parts[4].count == 12, parts[4].allSatisfy(\.isNumber), parts[5].hasPrefix("role/"), parts[5].count > 5,
            roleARN.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline })
        else {
            throw AuthError(
                .configurationInvalid, "\(roleARN.debugDescription) is not an IAM role ARN",
                hint: "give the role as arn:aws:iam::ACCOUNT:role/NAME", field: Setting.awsRoleARN.key)
        }
        if let durationSeconds, !(900...43_200).contains(durationSeconds) {
            throw AuthError(
                .configurationInvalid, "STS gives credentials for 900 to 43200 seconds, not \(durationSeconds)",
                hint: "give a duration the role's maximum session duration allows", field: Setting.awsDuration.key)
        }
        try EndpointPolicy.validate(endpoint)
        self.roleARN = roleARN
        self.endpoint = endpoint
        self.durationSeconds = durationSeconds
        self.sendsAccessToken = sendsAccessToken
    }

    /// The STS endpoint the AWS CLI would use: `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`
    /// (both ignored when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true`), else the regional
    /// endpoint of `region` (`https://sts.REGION.amazonaws.com`, `.com.cn` in China), else of
    /// `AWS_REGION`, else of `AWS_DEFAULT_REGION`, else of `us-east-1`.
    ///
    /// - Throws: `configurationInvalid` for a region or an endpoint
    ///   URL that cannot be one (field `aws_region`, or the variable's name).
    public static func endpoint(
        region: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(AuthError) -> URL {
        if environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]?.lowercased() != "true" {
            for variable in ["AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"] {
                guard let text = environment[variable], !text.isEmpty else { continue }
                guard let url = URL(string: text), url.host != nil else {
                    throw AuthError(
                        .configurationInvalid, "\(variable) is not a URL", hint: "set it to the STS endpoint's URL",
                        field: variable)
                }
                return url
            }
        }
        let region =
            [region, environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }
            .first { !$0.isEmpty } ?? "us-east-1"
        guard region.allSatisfy({ ($0.isLetter && $0.isLowercase && $0.isASCII) || $0.isNumber || $0 == "-" }),
            let url = URL(string: "https://sts.\(region).amazonaws.com\(region.hasPrefix("cn-") ? ".cn" : "")")
        else {
            throw AuthError(
                .configurationInvalid, "\(region.debugDescription) is not an AWS region",
                hint: "give a region like eu-west-1", field: Setting.awsRegion.key)
        }
        return url
    }

    /// The name the credentials are kept under in the sign-in's set: one per endpoint, role, token
    /// kind and duration asked for (credentials asked for 15 minutes are not those of an hour).
    public var credentialName: String {
        "aws-sts " + endpoint.absoluteString + " " + roleARN + (sendsAccessToken ? " access-token" : " id-token")
            + (durationSeconds.map { " \($0)s" } ?? "")
    }

    /// Credentials for the role, valid for at least five minutes: the ones the sign-in keeps, else
    /// new ones from STS, asked for once however many callers and processes want them (see
    /// `Authenticator.derivedCredential(named:minimumValidity:idToken:obtain:)`).
    ///
    /// - Throws: `AuthError`: `loginRequired` when not
    ///   signed in, or no valid ID token can be had; what ``assumeRole(with:subject:transport:)``
    ///   throws.
    public func credentials(from authenticator: Authenticator, transport: any HTTPTransport) async throws
        -> AWSCredentials
    {
        let kept = try await authenticator.derivedCredential(
            named: credentialName, minimumValidity: Self.renewalMargin, idToken: !sendsAccessToken
        ) { tokens in
            let token = sendsAccessToken ? tokens.accessToken : tokens.idToken ?? ""
            if sendsAccessToken, tokens.isDPoPBound {
                throw AuthError(
                    .configurationInvalid,
                    "the access token is DPoP-bound (RFC 9449), and STS cannot present a proof for it",
                    hint: "send the ID token, or turn `dpop` off for this configuration", field: Setting.dpop.key)
            }
            let credentials = try await assumeRole(with: token, subject: tokens.subject, transport: transport)
            return DerivedCredential(
                name: credentialName, fields: credentials.fields, expiresAt: credentials.expiration)
        }
        guard let credentials = AWSCredentials(fields: kept.fields, expiration: kept.expiresAt) else {
            throw AuthError(.tokenStoreFailed, "the stored AWS credentials lack a field")
        }
        return credentials
    }

    /// One `AssumeRoleWithWebIdentity` call with `token`, nothing kept.
    ///
    /// - Parameters:
    ///   - token: The web identity token.
    ///   - subject: Who signed in (the ID token's `sub`), for the session's name
    ///     (`nativeauth-SUBJECT`, cut to what STS allows); CloudTrail shows it.
    ///   - transport: What sends the request.
    /// - Throws: `AuthError`: STS's refusals mapped, with a hint each and STS's code in `oauthError`, or
    ///   `responseMalformed` for an answer that is not STS's.
    public func assumeRole(with token: String, subject: String?, transport: any HTTPTransport) async throws
        -> AWSCredentials
    {
        var fields = [
            FormField("Action", "AssumeRoleWithWebIdentity"), FormField("Version", "2011-06-15"),
            FormField("RoleArn", roleARN), FormField("RoleSessionName", Self.sessionName(subject: subject)),
            FormField("WebIdentityToken", token),
        ]
        if let durationSeconds { fields.append(FormField("DurationSeconds", String(durationSeconds))) }
        var request = HTTPRequest(method: .post, url: endpoint)
        request.headerFields[.contentType] = FormURLEncoding.mediaType + "; charset=utf-8"
        // STS's Query API answers in JSON when asked so (STSAnswer).
        request.headerFields[.accept] = "application/json"
        let (response, body) = try await transport.send(request, body: Data(FormURLEncoding.encode(fields).utf8))
        guard response.status.code == 200 else {
            throw STSError.mapped(status: response.status.code, refusal: STSAnswer.refusal(in: body), roleARN: roleARN)
        }
        let result = STSAnswer.result(of: "AssumeRoleWithWebIdentity", in: body)
        let issued = result?["Credentials"]?.objectValue
        guard let key = issued?["AccessKeyId"]?.stringValue, let secret = issued?["SecretAccessKey"]?.stringValue,
            let session = issued?["SessionToken"]?.stringValue, !key.isEmpty, !secret.isEmpty, !session.isEmpty,
            let expiration = STSAnswer.date(issued?["Expiration"])
        else {
            throw AuthError(
                .responseMalformed,
                "the answer of \(Redaction.scrubURL(endpoint.absoluteString)) is not STS's credentials",
                hint: "check the STS endpoint (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the region)", status: 200)
        }
        return AWSCredentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: session, expiration: expiration,
            assumedRoleARN: result?["AssumedRoleUser"]?.objectValue?["Arn"]?.stringValue)
    }

    /// `nativeauth-SUBJECT` in the characters STS allows (`[\w+=,.@-]`), 2 to 64 of them.
    static func sessionName(subject: String?) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-")
        let cleaned = String((subject ?? "").map { allowed.contains($0) ? $0 : "-" })
        return String(("nativeauth" + (cleaned.isEmpty ? "" : "-" + cleaned)).prefix(64))
    }
}

extension Setting where Value == String {
    /// `role_arn`: the IAM role whose credentials are asked for (``AWSWebIdentity``).
    public static let awsRoleARN = Setting(
        "role_arn", help: "The IAM role to assume, as arn:aws:iam::ACCOUNT:role/NAME.", valueName: "arn",
        group: SettingGroup(rawValue: "aws"), parse: .text)
    /// `duration`: how long the credentials are asked for, in seconds (``AWSWebIdentity``).
    public static let awsDuration = Setting(
        "duration", help: "How long the credentials last, 900 to 43200 seconds.", valueName: "seconds",
        group: SettingGroup(rawValue: "aws"), parse: .text)
    /// `aws_region`: the region whose STS endpoint is asked (``AWSWebIdentity``).
    public static let awsRegion = Setting(
        "aws_region", help: "The AWS region whose STS is asked, like eu-west-1.", valueName: "region",
        group: SettingGroup(rawValue: "aws"), parse: .text)
}
