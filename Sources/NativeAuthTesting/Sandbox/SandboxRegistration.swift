import Foundation
import LenientJSON
import NativeAuth

/// Dynamic client registration (RFC 7591) and Client ID Metadata Documents: the clients the
/// sandbox learns while it runs.
extension SandboxCore {
    /// A client registered at `/register`, with when its secret expires.
    struct RegisteredClient: Sendable {
        var client: SandboxAuthorizationServer.Client
        var secretExpiresAt: Date?
    }

    /// The client `id` names: a configured one, a registered one whose secret has not expired, or
    /// the client of a Client ID Metadata Document the sandbox serves.
    func knownClient(_ id: String?) -> SandboxAuthorizationServer.Client? {
        guard let id else { return nil }
        if let configured = configuration.clients.first(where: { $0.id == id }) { return configured }
        let now = now
        if let registered = state.withLock({ $0.registeredClients[id] }) {
            guard registered.secretExpiresAt.map({ $0 > now }) ?? true else { return nil }
            return registered.client
        }
        return metadataDocumentClient(id)
    }

    /// `POST /register` (RFC 7591 §3): a JSON client metadata document in, the client out (201).
    func register(_ request: TestRequest) -> TestResponse {
        if let expected = configuration.registrationAccessToken {
            let given = request.header("Authorization").flatMap { header in
                header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)) : nil
            }
            guard let given, ConstantTime.equals(given, expected) else {
                return json(
                    ["error": "invalid_token", "error_description": "an initial access token is needed to register"],
                    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="sandbox", error="invalid_token""#)])
            }
        }
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/json") == true,
            let object = try? JSONValue.parse(request.body).objectValue
        else {
            return oauthError("invalid_client_metadata", "the request is not a JSON object")
        }
        let redirectURIs = (try? object.stringList("redirect_uris")) ?? nil ?? []
        let grantTypes = (try? object.stringList("grant_types")) ?? nil ?? ["authorization_code"]
        if grantTypes.contains("authorization_code") {
            guard !redirectURIs.isEmpty else {
                return oauthError("invalid_redirect_uri", "the authorization code grant needs redirect_uris")
            }
            // Native apps: https, a loopback http URI, or a private-use scheme; never a fragment (RFC 8252).
            for uri in redirectURIs {
                guard let parts = URLComponents(string: uri), let scheme = parts.scheme, parts.fragment == nil,
                    scheme == "https" || (scheme == "http" && ["127.0.0.1", "[::1]", "::1"].contains(parts.host ?? ""))
                        || (scheme.contains(".") && scheme != "http")
                else {
                    return oauthError("invalid_redirect_uri", "the redirect URI \(uri) is not allowed")
                }
            }
        }
        let supported = Set(Grant.allCases.map(\.rawValue))
        if let unknown = grantTypes.first(where: { !supported.contains($0) }) {
            return oauthError("invalid_client_metadata", "the grant type \(unknown) is not supported")
        }
        let method = ((try? object.string("token_endpoint_auth_method")) ?? nil) ?? "client_secret_basic"
        guard ["none", "client_secret_basic", "client_secret_post"].contains(method) else {
            return oauthError("invalid_client_metadata", "the token_endpoint_auth_method \(method) is not supported")
        }
        let issued = now
        var client = SandboxAuthorizationServer.Client(id: "dyn-" + SecureRandom.token(), redirectURIs: redirectURIs)
        var expiresAt: Date?
        if method != "none" {
            client.secret = SecureRandom.token()
            IssuedSecrets.record([client.secret].compactMap { $0 })
            expiresAt = configuration.registeredSecretLifetime.map { issued.addingTimeInterval($0.timeInterval) }
        }
        state.withLock {
            $0.registeredClients[client.id] = RegisteredClient(client: client, secretExpiresAt: expiresAt)
        }
        var answer = object
        answer["client_id"] = .string(client.id)
        answer["client_id_issued_at"] = .integer(Int64(issued.timeIntervalSince1970))
        answer["token_endpoint_auth_method"] = .string(method)
        // As OIDC Dynamic Client Registration §2's servers do: the algorithm its ID tokens come in.
        answer["id_token_signed_response_alg"] = .string(state.withLock { $0.signer.algorithm.rawValue })
        if let secret = client.secret {
            answer["client_secret"] = .string(secret)
            answer["client_secret_expires_at"] = .integer(expiresAt.map { Int64($0.timeIntervalSince1970) } ?? 0)
        }
        return json(answer, status: 201)
    }

    /// `GET /client-metadata/NAME`: a Client ID Metadata Document the configuration holds, with
    /// its own URL as `client_id`.
    func clientMetadataDocument(_ request: TestRequest) -> TestResponse {
        let url = host + request.path
        guard let document = metadataDocument(url) else { return .text("not found", status: 404) }
        return json(document)
    }

    /// The document served at `url`, when it is one of the configuration's.
    private func metadataDocument(_ url: String) -> JSONObject? {
        let prefix = host + SandboxAuthorizationServer.Endpoint.clientMetadataDocument.rawValue
        guard url.hasPrefix(prefix),
            let redirectURIs = configuration.clientMetadataDocuments[String(url.dropFirst(prefix.count))]
        else { return nil }
        return [
            "client_id": .string(url), "client_name": "sandbox metadata document client",
            "redirect_uris": .array(redirectURIs.map(JSONValue.string)), "token_endpoint_auth_method": "none",
        ]
    }

    /// The client a Client ID Metadata Document URL names: public, with the document's redirect
    /// URIs, when the sandbox takes such documents and the document names itself as `client_id`.
    private func metadataDocumentClient(_ id: String) -> SandboxAuthorizationServer.Client? {
        guard configuration.acceptsClientMetadataDocuments, let document = metadataDocument(id),
            (try? document.string("client_id")) == id
        else { return nil }
        return SandboxAuthorizationServer.Client(
            id: id, redirectURIs: ((try? document.stringList("redirect_uris")) ?? nil) ?? [])
    }
}
