internal import Foundation
internal import LenientJSON

/// What STS answered to an action, read from its JSON: STS's Query API answers in JSON when asked
/// with `Accept: application/json`, as tools that read STS without an SDK ask it (the Kubernetes
/// aws-iam-authenticator's server, Vault's AWS auth method), with the XML answer's structure
/// (`{"ActionResponse": {"ActionResult": {…}, "ResponseMetadata": {…}}}`, and
/// `{"Error": {"Type", "Code", "Message"}, "RequestId"}` for a refusal).
///
/// Read with LenientJSON, as every other answer NativeAuth reads: no XML parser is linked (STS's
/// XML would need libxml2, or a reader of the module's own). Anything that is not such a document
/// (a proxy's HTML page, an XML answer, an empty body) is nothing.
enum STSAnswer {
    /// The result object of `action` (`AssumeRoleWithWebIdentityResult`); `nil` when `data` is not
    /// STS's JSON answer to it.
    static func result(of action: String, in data: Data) -> JSONObject? {
        document(data)?[action + "Response"]?.objectValue?[action + "Result"]?.objectValue
    }

    /// The refusal in `data`: STS's error code and message; `nil` when `data` is not STS's JSON
    /// error (the error object at the top, or inside `ErrorResponse`).
    static func refusal(in data: Data) -> (code: String, message: String?)? {
        guard let document = document(data) else { return nil }
        let error = document["Error"]?.objectValue ?? document["ErrorResponse"]?.objectValue?["Error"]?.objectValue
        guard let code = error?["Code"]?.stringValue, !code.isEmpty else { return nil }
        return (code, error?["Message"]?.stringValue)
    }

    /// A time as STS writes it in JSON: seconds since 1970 (`1.7000136E9`), or an ISO 8601 text as
    /// its XML has it (`2026-11-27T23:50:59Z`, with or without fractional seconds: moto's).
    static func date(_ value: JSONValue?) -> Date? {
        switch value {
        case .integer(let seconds)?: return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .double(let seconds)?: return seconds.isFinite ? Date(timeIntervalSince1970: seconds.rounded(.down)) : nil
        case .string(let text)?:
            var text = text.trimmingCharacters(in: .whitespaces)
            if let dot = text.firstIndex(of: "."),
                let end = text[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" })
            {
                text.removeSubrange(dot..<end)
            }
            return try? Date(text, strategy: .iso8601)
        default: return nil
        }
    }

    private static func document(_ data: Data) -> JSONObject? {
        guard !data.isEmpty else { return nil }
        return (try? JSONValue.parse(data, options: JSONParseOptions(maxBytes: 1 << 20)))?.objectValue
    }
}
