public import Foundation
package import LenientJSON

/// A device authorization response (RFC 8628 §3.2): the code the person enters, where, and how
/// long the client may poll.
public struct DeviceAuthorization: Sendable {
    /// The device verification code the client polls with. Secret: never print it.
    public var deviceCode: String
    /// The code the person enters at ``verificationURI``.
    public var userCode: String
    /// The page where the person enters ``userCode``.
    public var verificationURI: URL
    /// A page that already carries the code, when the server offers one.
    public var verificationURIComplete: URL?
    /// How long, in seconds, the codes stay valid.
    public var expiresIn: Int
    /// The minimum number of seconds between polls (5 when the server does not say).
    public var interval: Int

    /// Creates a response.
    public init(
        deviceCode: String,
        userCode: String,
        verificationURI: URL,
        verificationURIComplete: URL? = nil,
        expiresIn: Int,
        interval: Int = 5
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    /// Builds a response from its fields (JSON, or form fields turned into an object).
    ///
    /// - Accepts Google's `verification_url` (and `verification_url_complete`) spelling.
    /// - `expires_in` and `interval` may be numbers or numeric strings; `interval` defaults to 5.
    /// - The verification pages must be https (plain http only on loopback): the person is sent there.
    package static func decode(_ object: JSONObject) throws -> DeviceAuthorization {
        func page(_ keys: [String], required: Bool) throws -> URL? {
            for key in keys {
                guard let text = try object.string(key), !text.isEmpty else { continue }
                guard let url = URL(string: text), url.host?.isEmpty == false,
                    (try? EndpointPolicy.validate(url)) != nil
                else {
                    throw AuthError(
                        .responseMalformed,
                        "the device authorization response's \"\(key)\" is not an https URL",
                        operation: .deviceAuthorization
                    )
                }
                return url
            }
            if required { throw JSONFieldError(key: keys[0], problem: .missing) }
            return nil
        }
        let deviceCode = try object.requiredString("device_code")
        let userCode = try object.requiredString("user_code")
        guard let verification = try page(["verification_uri", "verification_url"], required: true) else {
            throw JSONFieldError(key: "verification_uri", problem: .missing)
        }
        let expiresIn = try object.requiredInteger("expires_in")
        let interval = try object.integer("interval") ?? 5
        return DeviceAuthorization(
            deviceCode: deviceCode,
            userCode: userCode,
            verificationURI: verification,
            verificationURIComplete: try page(
                ["verification_uri_complete", "verification_url_complete"], required: false),
            expiresIn: Int(clamping: max(0, expiresIn)),
            interval: Int(clamping: max(0, interval))
        )
    }
}

extension DeviceAuthorization: CustomStringConvertible {
    /// The user code and pages; never the device code.
    public var description: String {
        "DeviceAuthorization(user_code: \(userCode), verification_uri: \(verificationURI.absoluteString),"
            + " expires_in: \(expiresIn), interval: \(interval))"
    }
}
