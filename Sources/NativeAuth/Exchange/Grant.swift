public import Foundation

/// What a token request trades for tokens: one value per `grant_type` (RFC 6749 §4 and the grant
/// extensions), with the parameters it carries.
///
/// NativeAuth builds grants itself; a provider sees the ``kind`` of the grant a token request
/// carries in ``OAuthRequest/grant`` (GitHub sends no client secret with a device code, for
/// example), never by reading the form.
///
/// Printing a grant shows its kind only: codes, verifiers and refresh tokens are secrets.
public struct Grant: Sendable {
    /// A grant type: the value of the `grant_type` parameter. An open set, like ``AuthError/Code``.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The `grant_type` value.
        public let rawValue: String

        /// Creates a grant type.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// `authorization_code` (RFC 6749 §4.1.3).
        public static let authorizationCode = Self(rawValue: "authorization_code")
        /// `refresh_token` (RFC 6749 §6).
        public static let refreshToken = Self(rawValue: "refresh_token")
        /// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4).
        public static let deviceCode = Self(rawValue: "urn:ietf:params:oauth:grant-type:device_code")
        /// `client_credentials` (RFC 6749 §4.4): the client acts for itself, with no person.
        public static let clientCredentials = Self(rawValue: "client_credentials")
        /// `urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693): a token from elsewhere (a
        /// workload identity) traded for this server's.
        public static let tokenExchange = Self(rawValue: "urn:ietf:params:oauth:grant-type:token-exchange")
        /// `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1): a JWT from a trusted
        /// issuer as the grant.
        public static let jwtBearer = Self(rawValue: "urn:ietf:params:oauth:grant-type:jwt-bearer")
    }

    /// A token type identifier of token exchange (RFC 8693 §3).
    public struct TokenType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The URI.
        public let rawValue: String

        /// Creates a token type.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// `urn:ietf:params:oauth:token-type:jwt`: any JWT (a Kubernetes service-account token, a
        /// CI provider's OIDC token).
        public static let jwt = Self(rawValue: "urn:ietf:params:oauth:token-type:jwt")
        /// `urn:ietf:params:oauth:token-type:id_token`.
        public static let idToken = Self(rawValue: "urn:ietf:params:oauth:token-type:id_token")
        /// `urn:ietf:params:oauth:token-type:access_token`.
        public static let accessToken = Self(rawValue: "urn:ietf:params:oauth:token-type:access_token")

        /// Reads `jwt`, `id_token`, `access_token` or a full `urn:` URI; `nil` for anything else.
        public init?(name: String) {
            switch name {
            case "jwt": self = .jwt
            case "id_token": self = .idToken
            case "access_token": self = .accessToken
            default:
                guard name.hasPrefix("urn:") else { return nil }
                self.init(rawValue: name)
            }
        }
    }

    /// The grant type.
    public let kind: Kind
    /// The parameters besides `grant_type`, in order. They hold secrets.
    let parameters: [FormField]

    /// The authorization code of a sign-in, with the redirect URI it came to and the PKCE verifier.
    ///
    /// - Parameters:
    ///   - code: The code from the callback.
    ///   - redirectURI: The redirect URI of the authorization request.
    ///   - codeVerifier: The PKCE verifier whose challenge the authorization request carried.
    public static func authorizationCode(_ code: String, redirectURI: URL, codeVerifier: String) -> Grant {
        Grant(
            kind: .authorizationCode,
            parameters: [
                FormField("code", code),
                FormField("redirect_uri", redirectURI.absoluteString),
                FormField("code_verifier", codeVerifier),
            ]
        )
    }

    /// A refresh token.
    ///
    /// - Parameters:
    ///   - token: The refresh token.
    ///   - scopes: Scopes to narrow the new access token to (RFC 6749 §6); none sends no `scope`:
    ///     the scopes of the sign-in.
    public static func refreshToken(_ token: String, scopes: [String] = []) -> Grant {
        Grant(
            kind: .refreshToken,
            parameters: [FormField("refresh_token", token)]
                + (scopes.isEmpty ? [] : [FormField("scope", scopes.joined(separator: " "))]))
    }

    /// This grant asking for tokens for `resources` (RFC 8707 §2.2): one `resource` parameter each,
    /// after the ones it has.
    ///
    /// - Parameter resources: The protected resources' URLs (see
    ///   ``ProviderConfiguration/resourceIndicator(_:)``).
    public func forResources(_ resources: [URL]) -> Grant {
        Grant(kind: kind, parameters: parameters + resources.map { FormField("resource", $0.absoluteString) })
    }

    /// The resources the grant asks for (its `resource` parameters).
    public var resources: [String] { parameters.filter { $0.name == "resource" }.map(\.value) }

    /// The device code of a device authorization (RFC 8628).
    ///
    /// - Parameter code: The `device_code` from the device authorization response.
    public static func deviceCode(_ code: String) -> Grant {
        Grant(kind: .deviceCode, parameters: [FormField("device_code", code)])
    }

    /// The client's own credentials (RFC 6749 §4.4): a workload asking for tokens for itself. Its
    /// authentication at the token endpoint (a secret, a signed assertion, a TLS certificate) is
    /// the whole grant.
    ///
    /// - Parameter scopes: The scopes to ask for; none sends no `scope` (the server's default).
    public static func clientCredentials(scopes: [String]) -> Grant {
        Grant(
            kind: .clientCredentials,
            parameters: scopes.isEmpty ? [] : [FormField("scope", scopes.joined(separator: " "))]
        )
    }

    /// A token exchange (RFC 8693 §2.1): `subjectToken` (and, for delegation, `actorToken`) traded
    /// for this server's tokens.
    ///
    /// - Parameters:
    ///   - subjectToken: The token that says who the request is for.
    ///   - subjectTokenType: Its type.
    ///   - actorToken: The token of the party acting for the subject, and its type, if any.
    ///   - audience: The `audience` to ask for, if any.
    ///   - scopes: The scopes to ask for; none sends no `scope`.
    public static func tokenExchange(
        subjectToken: String,
        subjectTokenType: TokenType,
        actorToken: (token: String, type: TokenType)? = nil,
        audience: String? = nil,
        scopes: [String]
    ) -> Grant {
        var parameters = [
            FormField("subject_token", subjectToken), FormField("subject_token_type", subjectTokenType.rawValue),
        ]
        if let actorToken {
            parameters.append(FormField("actor_token", actorToken.token))
            parameters.append(FormField("actor_token_type", actorToken.type.rawValue))
        }
        if let audience { parameters.append(FormField("audience", audience)) }
        if !scopes.isEmpty { parameters.append(FormField("scope", scopes.joined(separator: " "))) }
        return Grant(kind: .tokenExchange, parameters: parameters)
    }

    /// A JWT as the grant (RFC 7523 §2.1).
    ///
    /// - Parameters:
    ///   - assertion: The JWT.
    ///   - scopes: The scopes to ask for; none sends no `scope`.
    public static func jwtBearer(assertion: String, scopes: [String]) -> Grant {
        Grant(
            kind: .jwtBearer,
            parameters: [FormField("assertion", assertion)]
                + (scopes.isEmpty ? [] : [FormField("scope", scopes.joined(separator: " "))])
        )
    }

    /// What an error while redeeming this grant is about: ``AuthOperation/refresh`` for a refresh
    /// token, ``AuthOperation/tokenExchange`` for the others.
    public var operation: AuthOperation {
        kind == .refreshToken ? .refresh : .tokenExchange
    }

    /// The form fields of the token request: `grant_type` first, then the grant's parameters.
    var formFields: [FormField] {
        [FormField("grant_type", kind.rawValue)] + parameters
    }
}

extension Grant: CustomStringConvertible, CustomReflectable {
    /// The grant type and the names of its parameters; never their values.
    public var description: String {
        "Grant(\(kind.rawValue): " + parameters.map(\.name).joined(separator: ", ") + ")"
    }

    /// Reflection shows the same as the description.
    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind.rawValue, "parameters": parameters.map(\.name)], displayStyle: .struct)
    }
}
