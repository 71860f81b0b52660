public import Foundation
internal import LenientJSON

/// Temporary AWS credentials: what STS `AssumeRoleWithWebIdentity` answers, and what an AWS CLI
/// `credential_process` prints.
///
/// Printing one shows its key id's first characters and its expiry, never the secret key or the
/// session token.
public struct AWSCredentials: Sendable, Equatable {
    /// The access key id (`ASIA…`).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token.
    public var sessionToken: String
    /// When they expire.
    public var expiration: Date
    /// The assumed role's session ARN (`arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`), when STS
    /// named it.
    public var assumedRoleARN: String?

    /// Creates them.
    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Date,
        assumedRoleARN: String? = nil
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
        self.assumedRoleARN = assumedRoleARN
    }

    /// The JSON an AWS CLI or SDK reads from a `credential_process` (`Version` 1, `AccessKeyId`,
    /// `SecretAccessKey`, `SessionToken`, `Expiration` in ISO 8601), one line. Holds the secret:
    /// print it for the AWS CLI only.
    public var credentialProcessJSON: String {
        let object: JSONObject = [
            "Version": .integer(1),
            "AccessKeyId": .string(accessKeyID),
            "SecretAccessKey": .string(secretAccessKey),
            "SessionToken": .string(sessionToken),
            "Expiration": .string(expiration.formatted(.iso8601)),
        ]
        return (try? JSONValue.object(object).encodedString()) ?? "{}"
    }

    /// The fields kept in a `DerivedCredential`.
    var fields: [String: String] {
        var fields = [
            "AccessKeyId": accessKeyID, "SecretAccessKey": secretAccessKey, "SessionToken": sessionToken,
        ]
        if let assumedRoleARN { fields["AssumedRoleArn"] = assumedRoleARN }
        return fields
    }

    /// Read from the fields kept in a `DerivedCredential`; `nil` when one is missing.
    init?(fields: [String: String], expiration: Date) {
        guard let key = fields["AccessKeyId"], let secret = fields["SecretAccessKey"],
            let session = fields["SessionToken"]
        else { return nil }
        self.init(
            accessKeyID: key, secretAccessKey: secret, sessionToken: session, expiration: expiration,
            assumedRoleARN: fields["AssumedRoleArn"])
    }
}

extension AWSCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "AWSCredentials(\(accessKeyID.prefix(4))…, expires \(expiration.formatted(.iso8601)))"
    }

    public var debugDescription: String { description }

    /// Reflection shows the same as the description, never the secret key or the session token.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessKeyID": "\(accessKeyID.prefix(4))…", "secretAccessKey": "<redacted>",
                "sessionToken": "<redacted>", "expiration": expiration,
                "assumedRoleARN": assumedRoleARN as Any,
            ],
            displayStyle: .struct)
    }
}
