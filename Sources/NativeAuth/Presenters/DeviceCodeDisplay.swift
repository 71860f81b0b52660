internal import Foundation

/// Shows the person the code to enter and where (RFC 8628 §3.3).
///
/// ### Implementation requirements
/// - Show ``DeviceAuthorization/userCode`` and ``DeviceAuthorization/verificationURI`` (and
///   ``DeviceAuthorization/verificationURIComplete`` when there is one); never the device code.
/// - Return promptly: polling starts when `show` returns.
public protocol DeviceCodeDisplay: Sendable {
    /// Shows the code and the page.
    func show(_ authorization: DeviceAuthorization) async
}

/// Prints the device prompt on a ``ConsoleOutput`` (standard error by default):
///
/// ```
/// To sign in, open the page below in a browser on any device and enter the code.
/// Code: WDJB-MJHT
/// Open: https://example.com/device
/// Or open this page, which already holds the code: https://example.com/device?user_code=WDJB-MJHT
/// ```
///
/// Scripts find the code and the page on the lines that start with `Code: ` and `Open: `.
public struct TerminalDeviceCodeDisplay: DeviceCodeDisplay {
    /// Where the prompt is written.
    public let output: ConsoleOutput

    /// Creates a display writing to `output`.
    public init(output: ConsoleOutput = .standardError) {
        self.output = output
    }

    public func show(_ authorization: DeviceAuthorization) async {
        output.write("To sign in, open the page below in a browser on any device and enter the code.")
        output.write("Code: \(authorization.userCode)")
        output.write("Open: \(authorization.verificationURI.absoluteString)")
        if let complete = authorization.verificationURIComplete {
            output.write("Or open this page, which already holds the code: \(complete.absoluteString)")
        }
        let minutes = max(1, authorization.expiresIn / 60)
        output.write("Waiting for approval (the code expires in \(minutes) minute\(minutes == 1 ? "" : "s"))…")
    }
}
