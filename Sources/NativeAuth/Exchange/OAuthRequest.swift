public import Foundation
public import HTTPTypes

/// A form-encoded request to one of the provider's OAuth endpoints (token, device authorization,
/// revocation), before it is sent: what a provider adjusts in ``AuthProvider/prepare(_:metadata:)``.
///
/// The request says what it is for (``operation``) and, at the token endpoint, which ``grant`` it
/// redeems; providers decide from those, never from the form's contents. The header fields, the
/// form and the helpers that change them are provider-author plumbing:
/// `@_spi(Provider) import NativeAuth`.
public struct OAuthRequest: Sendable {
    /// The endpoint.
    public let url: URL
    /// What the request is for: ``AuthOperation/tokenExchange`` or ``AuthOperation/refresh`` at
    /// the token endpoint, ``AuthOperation/deviceAuthorization``, or ``AuthOperation/revocation``.
    public let operation: AuthOperation
    /// The grant a token request redeems; `nil` at the other endpoints.
    public let grant: Grant.Kind?
    /// The header fields; `Content-Type` is set when the request is sent.
    @_spi(Provider) public var headerFields: HTTPFields
    /// The form fields, in order. They hold secrets: never print them.
    @_spi(Provider) public var form: [FormField]
    /// The signed client assertion NativeAuth made for this request when the client authenticates
    /// with `private_key_jwt` or `client_secret_jwt` (``ClientAuthentication/usesAssertion``); a
    /// new one, with its own `jti`, for every request. A secret.
    @_spi(Provider) public var clientAssertion: String?

    /// A token request redeeming `grant`.
    package init(tokenEndpoint url: URL, grant: Grant) {
        self.init(url: url, operation: grant.operation, grant: grant.kind, form: grant.formFields)
    }

    /// A request to an endpoint that takes no grant.
    package init(url: URL, operation: AuthOperation, grant: Grant.Kind? = nil, form: [FormField]) {
        self.url = url
        self.operation = operation
        self.grant = grant
        self.headerFields = HTTPFields()
        self.form = form
    }

    /// Adds client authentication as RFC 6749 §2.3.1 describes: `client_id` in the form for a public
    /// client, `client_id` and `client_secret` in the form for `client_secret_post`, HTTP Basic with
    /// form-encoded id and secret for `client_secret_basic`; `client_id`, `client_assertion_type` and
    /// ``clientAssertion`` for `private_key_jwt` and `client_secret_jwt` (RFC 7523 §2.2).
    ///
    /// - Parameters:
    ///   - method: The client authentication method (see ``ClientAuthentication/standard(for:metadata:)``).
    ///   - configuration: Where the client id and secret come from.
    /// What the standard ``AuthProvider/prepare(_:metadata:)`` does: `Accept: application/json` and
    /// the standard client authentication (``ClientAuthentication/standard(for:metadata:)``). For a
    /// provider that adds to it (Entra's `scope` on refresh, Auth0's `audience`).
    ///
    /// - Parameters:
    ///   - configuration: The client's registration.
    ///   - metadata: The provider's metadata.
    @_spi(Provider) public mutating func applyStandardPreparation(
        configuration: ProviderConfiguration,
        metadata: ProviderMetadata
    ) {
        headerFields[.accept] = "application/json"
        applyStandardClientAuthentication(
            .standard(for: configuration, metadata: metadata), configuration: configuration)
    }

    @_spi(Provider) public mutating func applyStandardClientAuthentication(
        _ method: ClientAuthentication,
        configuration: ProviderConfiguration
    ) {
        let secret = configuration.clientSecret ?? ""
        switch method {
        case .none, .tlsClientAuth, .selfSignedTLSClientAuth:
            // With mutual TLS the certificate is the credential (RFC 8705 §2): `client_id` alone.
            setForm("client_id", configuration.clientID)
        case .clientSecretPost:
            setForm("client_id", configuration.clientID)
            setForm("client_secret", secret)
        case .privateKeyJWT, .clientSecretJWT:
            setForm("client_id", configuration.clientID)
            setForm("client_assertion_type", ClientAssertion.type)
            setForm("client_assertion", clientAssertion ?? "")
        case .clientSecretBasic:
            let credentials =
                FormURLEncoding.encode(component: configuration.clientID) + ":"
                + FormURLEncoding.encode(component: secret)
            headerFields[.authorization] = "Basic " + Data(credentials.utf8).base64EncodedString()
        }
    }

    /// Sets a form field, replacing an earlier one of the same name.
    ///
    /// - Parameters:
    ///   - name: The field's name.
    ///   - value: Its value.
    @_spi(Provider) public mutating func setForm(_ name: String, _ value: String) {
        form.removeAll { $0.name == name }
        form.append(FormField(name, value))
    }

    /// The HTTP request and body to send.
    /// The form fields whose values are secret.
    static let secretFields: Set<String> = [
        "code", "code_verifier", "refresh_token", "client_secret", "device_code", "client_assertion", "assertion",
        "token", "subject_token", "actor_token", "password",
    ]

    /// The secret values this request sends: codes, verifiers, tokens and client secrets in its form,
    /// and the credentials of its `Authorization` header. Error texts are scrubbed of them, whatever
    /// their shape.
    package var sentSecrets: [String] {
        var secrets = form.filter { Self.secretFields.contains($0.name) }.map(\.value)
        if let clientAssertion { secrets.append(clientAssertion) }
        if let authorization = headerFields[.authorization], let space = authorization.firstIndex(of: " ") {
            let credentials = String(authorization[authorization.index(after: space)...])
            secrets.append(credentials)
            if let decoded = Data(base64Encoded: credentials).map({ String(decoding: $0, as: UTF8.self) }),
                let colon = decoded.firstIndex(of: ":")
            {
                let secret = String(decoded[decoded.index(after: colon)...])
                secrets.append(secret)
                secrets.append(secret.removingPercentEncoding ?? secret)
            }
        }
        return secrets.filter { !$0.isEmpty }
    }

    func httpRequest() -> (HTTPRequest, Data) {
        var request = HTTPRequest(method: .post, url: url)
        request.headerFields = headerFields
        request.headerFields[.contentType] = FormURLEncoding.mediaType
        return (request, Data(FormURLEncoding.encode(form).utf8))
    }
}

extension OAuthRequest: CustomStringConvertible, CustomReflectable {
    /// The endpoint, operation, grant type and field names; never values or the Authorization header.
    public var description: String {
        let grant = grant.map { ", grant \($0.rawValue)" } ?? ""
        return "OAuthRequest(\(operation.rawValue)\(grant) at \(Redaction.scrubURL(url.absoluteString)), fields: "
            + form.map(\.name).joined(separator: ", ") + ")"
    }

    /// Reflection shows the same as the description.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": Redaction.scrubURL(url.absoluteString), "operation": operation.rawValue,
                "grant": grant?.rawValue as Any, "fields": form.map(\.name),
            ],
            displayStyle: .struct
        )
    }
}
