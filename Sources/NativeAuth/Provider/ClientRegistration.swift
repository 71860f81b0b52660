public import Foundation
public import LenientJSON

/// What a client asks to be registered as: the client metadata of a dynamic client registration
/// request (RFC 7591 §2), or of the Client ID Metadata Document it publishes instead.
///
/// The defaults describe a native app that signs people in through the loopback redirect (RFC 8252
/// §7.3: registered without a port, used on any): a public client (`token_endpoint_auth_method`
/// `none`) with the authorization code and refresh token grants.
public struct ClientMetadata: Sendable, Equatable {
    /// `client_name`: shown to the person on the consent page, and the name the registration is
    /// kept under in the token store.
    public var clientName: String
    /// `redirect_uris`.
    public var redirectURIs: [String]
    /// `grant_types`.
    public var grantTypes: [String]
    /// `token_endpoint_auth_method`: `none` for a public client.
    public var tokenEndpointAuthMethod: String
    /// `scope`: the scopes the client may ask for; `nil` sends none (the server's default).
    public var scope: String?
    /// `software_id` and `software_version`, when the app has them.
    public var softwareID: String?
    /// `software_version`.
    public var softwareVersion: String?
    /// The URL of the client's Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document):
    /// an `https` URL that serves this metadata with the URL itself as `client_id`. At a server
    /// that announces `client_id_metadata_document_supported`, the URL is the client id and nothing
    /// is registered.
    public var metadataDocument: URL?

    /// Creates client metadata.
    public init(
        clientName: String,
        redirectURIs: [String] = ["http://127.0.0.1/callback", "http://[::1]/callback"],
        grantTypes: [String] = ["authorization_code", "refresh_token"],
        tokenEndpointAuthMethod: String = "none",
        scope: String? = nil,
        softwareID: String? = nil,
        softwareVersion: String? = nil,
        metadataDocument: URL? = nil
    ) {
        self.clientName = clientName
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
        self.scope = scope
        self.softwareID = softwareID
        self.softwareVersion = softwareVersion
        self.metadataDocument = metadataDocument
    }

    /// The registration request's body (RFC 7591 §2, with OIDC Dynamic Registration's
    /// `application_type` `native`).
    public var registrationRequest: JSONObject {
        var object: JSONObject = [
            "client_name": .string(clientName),
            "grant_types": .array(grantTypes.map(JSONValue.string)),
            "token_endpoint_auth_method": .string(tokenEndpointAuthMethod),
            "application_type": "native",
        ]
        if !redirectURIs.isEmpty { object["redirect_uris"] = .array(redirectURIs.map(JSONValue.string)) }
        if grantTypes.contains("authorization_code") { object["response_types"] = ["code"] }
        if let scope { object["scope"] = .string(scope) }
        if let softwareID { object["software_id"] = .string(softwareID) }
        if let softwareVersion { object["software_version"] = .string(softwareVersion) }
        return object
    }

    /// What identifies the request: a registration made for other metadata (new redirect URIs, a
    /// new grant, other scopes) is not reused. The software version is left out: an upgraded app
    /// keeps its client, and the tokens signed in with it; so is the port of a loopback redirect
    /// URI, which a registration picks once (``ClientRegistration/loopbackRedirectPort``).
    var fingerprint: String {
        var request = registrationRequest
        request["software_version"] = nil
        if !redirectURIs.isEmpty {
            request["redirect_uris"] = .array(redirectURIs.map { .string(Self.withoutLoopbackPort($0)) })
        }
        return (try? JSONValue.object(request).encodedString(sortedKeys: true)) ?? clientName
    }

    /// `uri` without its port when its host is a loopback address.
    static func withoutLoopbackPort(_ uri: String) -> String {
        guard var components = URLComponents(string: uri), let host = components.host,
            EndpointPolicy.isLoopback(host: host) || host == "localhost"
        else { return uri }
        components.port = nil
        return components.string ?? uri
    }

    /// The redirect URIs of a native app on one loopback port chosen now, for servers that match
    /// redirect URIs exactly (the official MCP SDK's, among others) instead of taking any port as
    /// RFC 8252 §7.3 asks: `http://127.0.0.1:PORT/callback`. The port was free when asked; the
    /// registration keeps it, and sign-ins with that registration listen there.
    ///
    /// - Throws: ``AuthError`` with code ``AuthError/Code/network`` when no port can be had.
    public static func loopbackRedirectURIs() throws(AuthError) -> [String] {
        ["http://127.0.0.1:\(try FreePort.loopback())/callback"]
    }
}

/// A client registered with an authorization server (RFC 7591 §3.2.1): its `client_id`, its
/// secret if it got one and when that expires. ``Authenticator/registeringClient(_:initialAccessToken:)``
/// keeps it in the token store, beside the tokens, and registers again once it expired.
///
/// Printing one shows the client id and the expiry, never the secret or the registration access token.
public struct ClientRegistration: Sendable, Equatable {
    /// `client_id`.
    public var clientID: String
    /// `client_secret`, for a client the server made confidential.
    public var clientSecret: String?
    /// `client_id_issued_at`, when stated.
    public var clientIDIssuedAt: Date?
    /// `client_secret_expires_at`; `nil` when the secret does not expire (the server's `0`) or
    /// there is no secret.
    public var clientSecretExpiresAt: Date?
    /// `token_endpoint_auth_method` as registered, when the answer states it.
    public var tokenEndpointAuthMethod: String?
    /// `id_token_signed_response_alg` as registered (OIDC Dynamic Client Registration §2), when the
    /// answer states it: ID tokens in any other algorithm are refused.
    public var idTokenSignedResponseAlg: String?
    /// `registration_access_token` (RFC 7592), for reading or changing the registration later.
    public var registrationAccessToken: String?
    /// `registration_client_uri` (RFC 7592).
    public var registrationClientURI: URL?
    /// The registration endpoint that issued it.
    public var endpoint: URL
    /// What was asked for (``ClientMetadata``), so that other metadata registers anew.
    var requested: String
    /// `redirect_uris` as registered (the answer's, else the request's).
    public var redirectURIs: [String]

    /// The port of the loopback redirect URI the client was registered with, when it names one:
    /// a loopback presenter must listen there for a server that matches redirect URIs exactly.
    public var loopbackRedirectPort: Int? {
        for uri in redirectURIs {
            if let components = URLComponents(string: uri), let host = components.host,
                EndpointPolicy.isLoopback(host: host), let port = components.port
            {
                return port
            }
        }
        return nil
    }

    /// Whether it expired, or expires within `leeway` seconds of `now`.
    public func isExpired(at now: Date, leeway: TimeInterval = 60) -> Bool {
        guard let clientSecretExpiresAt else { return false }
        return clientSecretExpiresAt.timeIntervalSince(now) <= leeway
    }

    /// Reads a registration answer.
    ///
    /// - Throws: `JSONFieldError` for a missing `client_id` or a field of the wrong kind.
    init(answer object: JSONObject, endpoint: URL, requested: ClientMetadata) throws(JSONFieldError) {
        try self.init(fields: object, endpoint: endpoint, requested: requested.fingerprint)
        if redirectURIs.isEmpty { redirectURIs = requested.redirectURIs }
    }

    /// Reads the fields an answer and the stored form share (RFC 7591 §3.2.1's names).
    private init(fields object: JSONObject, endpoint: URL, requested: String) throws(JSONFieldError) {
        clientID = try object.requiredString("client_id")
        clientSecret = try object.string("client_secret").flatMap { $0.isEmpty ? nil : $0 }
        clientIDIssuedAt = try object.integer("client_id_issued_at").map { Date(timeIntervalSince1970: Double($0)) }
        // RFC 7591 §3.2.1: 0 means the secret does not expire (the stored form leaves it out then).
        clientSecretExpiresAt = try object.integer("client_secret_expires_at").flatMap {
            $0 == 0 ? nil : Date(timeIntervalSince1970: Double($0))
        }
        tokenEndpointAuthMethod = try object.string("token_endpoint_auth_method")
        idTokenSignedResponseAlg = try object.string("id_token_signed_response_alg")
        registrationAccessToken = try object.string("registration_access_token")
        registrationClientURI = try object.string("registration_client_uri").flatMap(URL.init(string:))
        redirectURIs = try object.stringList("redirect_uris") ?? []
        self.endpoint = endpoint
        self.requested = requested
    }

    /// The stored form.
    var storageJSON: JSONObject {
        var object: JSONObject = [
            "client_id": .string(clientID), "registration_endpoint": .string(endpoint.absoluteString),
            "requested": .string(requested),
        ]
        if let clientSecret { object["client_secret"] = .string(clientSecret) }
        if let clientIDIssuedAt {
            object["client_id_issued_at"] = .integer(Int64(clientIDIssuedAt.timeIntervalSince1970))
        }
        if let clientSecretExpiresAt {
            object["client_secret_expires_at"] = .integer(Int64(clientSecretExpiresAt.timeIntervalSince1970))
        }
        if let tokenEndpointAuthMethod { object["token_endpoint_auth_method"] = .string(tokenEndpointAuthMethod) }
        if let idTokenSignedResponseAlg {
            object["id_token_signed_response_alg"] = .string(idTokenSignedResponseAlg)
        }
        if let registrationAccessToken { object["registration_access_token"] = .string(registrationAccessToken) }
        if let registrationClientURI {
            object["registration_client_uri"] = .string(registrationClientURI.absoluteString)
        }
        if !redirectURIs.isEmpty { object["redirect_uris"] = .array(redirectURIs.map(JSONValue.string)) }
        return object
    }

    /// Reads the stored form.
    package init(storageJSON object: JSONObject) throws(JSONFieldError) {
        guard let endpoint = URL(string: try object.requiredString("registration_endpoint")) else {
            throw JSONFieldError(
                key: "registration_endpoint", problem: .wrongKind(expected: "a URL", found: "something else"))
        }
        try self.init(fields: object, endpoint: endpoint, requested: try object.string("requested") ?? "")
    }

    /// The token-store key registrations of `clientName` at `issuer` for `scope` are kept under.
    /// Its client id is ``storeClientID``, which no sign-in has, so that ``Accounts`` never lists it.
    ///
    /// One registration per scope set (its words sorted): two resources of one server that ask for
    /// different scopes (a server that authorizes a client only for the scopes it registered, as the
    /// MCP SDKs' do, needs a registration for each) keep a registration each, instead of replacing
    /// each other's and the sign-ins made under it.
    public static func storeKey(issuer: String, clientName: String, scope: String? = nil) -> TokenKey {
        let words = Set((scope ?? "").split(separator: " ").map(String.init)).sorted()
        let account = words.isEmpty ? clientName : clientName + " scope=" + words.joined(separator: " ")
        return TokenKey(issuer: issuer, clientID: storeClientID, account: account)
    }

    /// The client id of the keys registrations are stored under.
    public static let storeClientID = "urn:nativeauth:client-registration"

    /// The registration as the token-store record it is kept in: a ``TokenSet`` holding nothing but
    /// it (``TokenSet/clientRegistration``), so that every ``TokenStore`` keeps it as it keeps
    /// tokens, in the keyring too.
    package func record(at now: Date) -> TokenSet {
        var record = TokenSet(accessToken: "", issuedAt: now, subject: clientID)
        record.clientRegistration = self
        return record
    }
}

extension ClientRegistration: CustomStringConvertible, CustomReflectable {
    /// The client id and the secret's expiry; never the secret.
    public var description: String {
        let secret = clientSecret == nil ? "public" : "secret set"
        let expiry = clientSecretExpiresAt.map { ", expires \($0)" } ?? ""
        return "ClientRegistration(\(clientID), \(secret)\(expiry))"
    }

    /// Reflection shows what the description shows.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "clientID": clientID, "clientSecret": clientSecret == nil ? "nil" : "<redacted>",
                "clientSecretExpiresAt": clientSecretExpiresAt as Any, "endpoint": endpoint,
            ], displayStyle: .struct)
    }
}
