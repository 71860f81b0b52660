internal import Foundation
internal import HTTPTypes
@_spi(Provider) internal import NativeAuth

/// `NATIVEAUTH_ACCESS_TOKEN`: an access token given to the process (a CI secret, a token another
/// tool minted), which `token` and `api` use as it is, without reading or writing any store, as
/// `GH_TOKEN` works for `gh`. It is never refreshed; `status` says it is in use, and `login`,
/// `refresh` and `logout` refuse to run beside it rather than act on a store the other commands
/// ignore.
enum AccessTokenOverride {
    /// The variable's name.
    static let variable = "NATIVEAUTH_ACCESS_TOKEN"

    /// The token the variable gives, or `nil` when it is unset or empty.
    ///
    /// - Throws: `AuthError` for a value with a line break or a NUL, which no header may carry.
    static func token(in environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError)
        -> String?
    {
        guard let value = environment[variable], !value.isEmpty else { return nil }
        let token = value.trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, !token.contains(where: { $0.isWhitespace || $0 == "\0" }) else {
            throw AuthError(
                .configurationInvalid, "\(variable) holds whitespace, a line break or a NUL; it is not sent",
                hint: "set it to the access token alone", field: variable)
        }
        return token
    }

    /// Fails when the variable is set: `command` would act on stored tokens the others do not use.
    static func refuse(_ command: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(AuthError)
    {
        guard try token(in: environment) != nil else { return }
        throw AuthError(
            .configurationInvalid,
            "\(variable) is set: `token` and `api` use the token it gives, and \(command) does not apply to it",
            hint: "unset \(variable) to \(command) with stored tokens")
    }

    /// The tokens `token` prints for the override: the access token alone, of unknown expiry.
    static func tokens(_ token: String) -> TokenSet {
        TokenSet(accessToken: token, tokenType: "Bearer", issuedAt: Date())
    }

    /// Sends `request` with the override, as `Authorization: Bearer`, to an `https` URL (or plain
    /// `http` to the loopback interface). A 401 is an error saying the given token was refused:
    /// there is nothing to refresh.
    static func send(
        _ request: HTTPRequest, body payload: Data? = nil, token: String, transport: any HTTPTransport,
        streamingTo sink: ResponseBodySink? = nil
    ) async throws -> (HTTPResponse, Data) {
        guard let url = request.url else {
            throw AuthError(.configurationInvalid, "the request has no URL", operation: .apiRequest)
        }
        try EndpointPolicy.validate(url)
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer \(token)"
        let (response, body) =
            if let sink {
                try await transport.send(authorized, body: payload, streamingTo: sink)
            } else {
                try await transport.send(authorized, body: payload)
            }
        if response.status.code == 401 {
            throw AuthError(
                .invalidToken, "the API refused the access token in \(variable) (HTTP 401); it is not refreshed",
                hint: "give a valid token in \(variable), or unset it to use the stored sign-in",
                operation: .apiRequest, status: 401)
        }
        return (response, body)
    }
}
