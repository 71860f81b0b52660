/// Turns a failure into an ``AuthError``: the plug-in point for a provider's own error dialect.
///
/// NativeAuth asks the provider's mapper first and falls back to ``StandardErrorMapper``, which
/// implements RFC 6749 §5.2, RFC 6750 §3 and the usual HTTP failures. A provider therefore maps
/// only its own quirks (GitHub's `bad_refresh_token`, errors sent with HTTP 200) and returns `nil`
/// for everything else.
///
/// ### Implementation requirements
/// - Return `nil` for any failure that is not the provider's own; never guess.
/// - Keep the server's `error` code in ``AuthError/oauthError`` unchanged, also for codes you do
///   not know, so callers can still act on them.
/// - Use ``AuthError/Code/loginRequired`` only when no refresh can help: the person must sign in.
/// - Never put a token, a secret or the response body into the error's text.
///   ``AuthError/init(_:_:hint:operation:field:status:oauthError:oauthErrorDescription:oauthErrorURI:isRetryable:underlying:)``
///   scrubs what it is given, but do not rely on it for things you know are secret.
public protocol ErrorMapper: Sendable {
    /// Maps a failure, or returns `nil` when it is not this mapper's to map.
    func map(_ failure: AuthFailure) -> AuthError?
}
