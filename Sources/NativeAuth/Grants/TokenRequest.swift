public import Foundation
public import HTTPTypes

/// A request to the token endpoint: a form body and its headers, before it is sent.
///
/// Providers adjust it in ``AuthProvider/prepareTokenRequest(_:metadata:)``.
public struct TokenRequest: Sendable {
    /// The token endpoint.
    public var url: URL
    /// What the request is for: ``AuthOperation/tokenExchange`` or ``AuthOperation/refresh``.
    public var operation: AuthOperation
    /// The header fields; `Content-Type` is set when the request is sent.
    public var headerFields: HTTPFields
    /// The form fields, in order. Hold secrets: never print them.
    public var form: [FormField]

    /// Creates a request with the given form fields and no headers.
    public init(url: URL, operation: AuthOperation, form: [FormField]) {
        self.url = url
        self.operation = operation
        self.headerFields = HTTPFields()
        self.form = form
    }

    /// Adds client authentication as RFC 6749 §2.3.1 describes: `client_id` in the form for a public
    /// client, `client_id` and `client_secret` in the form for `client_secret_post`, HTTP Basic with
    /// form-encoded id and secret for `client_secret_basic`.
    public mutating func applyStandardClientAuthentication(
        _ method: ClientAuthentication,
        configuration: ProviderConfiguration
    ) {
        let secret = configuration.clientSecret ?? ""
        switch method {
        case .none:
            setForm("client_id", configuration.clientID)
        case .clientSecretPost:
            setForm("client_id", configuration.clientID)
            setForm("client_secret", secret)
        case .clientSecretBasic:
            let credentials =
                FormURLEncoding.encode(component: configuration.clientID) + ":"
                + FormURLEncoding.encode(component: secret)
            headerFields[.authorization] = "Basic " + Data(credentials.utf8).base64EncodedString()
        }
    }

    /// Sets a form field, replacing an earlier one of the same name.
    public mutating func setForm(_ name: String, _ value: String) {
        form.removeAll { $0.name == name }
        form.append(FormField(name, value))
    }

    /// The HTTP request and body to send.
    public func httpRequest() -> (HTTPRequest, Data) {
        var request = HTTPRequest(method: .post, url: url)
        request.headerFields = headerFields
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        return (request, Data(FormURLEncoding.encode(form).utf8))
    }
}

extension TokenRequest: CustomStringConvertible {
    /// The endpoint, operation and field names; never values or the Authorization header.
    public var description: String {
        "TokenRequest(\(operation.rawValue) at \(Redaction.scrubURL(url.absoluteString)), fields: "
            + form.map(\.name).joined(separator: ", ") + ")"
    }
}
