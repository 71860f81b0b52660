/// How a person, a client or a workload signs in: what ``Authenticator/login(_:scopes:)`` and
/// ``Accounts/login(_:scopes:name:)`` are given.
///
/// ```swift
/// try await auth.login(.browser(LoopbackPresenter()))
/// try await auth.login(.device())
/// try await auth.login(.clientCredentials, scopes: ["reports:read"])
/// ```
public struct SignInMethod: Sendable {
    enum Kind: Sendable {
        case browser(any UserAgentPresenter, LoginOptions)
        case device(any DeviceCodeDisplay)
        case clientCredentials
        case workload
    }

    let kind: Kind

    /// The authorization code flow with PKCE through `presenter`: a browser, a printed URL, a
    /// pasted code.
    ///
    /// Discovery, the authorization request (PKCE S256, `state`, `nonce` when `openid` is asked
    /// for, the provider's extra parameters, a pushed request where the server takes one), the
    /// presenter, the callback's checks (`state` in constant time, `error`, RFC 9207 `iss`), the code
    /// exchange and the ID token's validation (whose claims name the account:
    /// ``TokenSet/subject``, ``TokenSet/displayName``).
    ///
    /// - Parameters:
    ///   - presenter: How the person gets to the authorization page (NativeAuthPresenters'
    ///     `LoopbackPresenter`, …).
    ///   - options: How the person should authenticate (``LoginOptions``: `prompt`, `max_age`,
    ///     `acr_values`, …); the ID token is checked against them.
    public static func browser(_ presenter: any UserAgentPresenter, options: LoginOptions = LoginOptions()) -> Self {
        Self(kind: .browser(presenter, options))
    }

    /// The device authorization grant (RFC 8628): for machines where the person cannot use a
    /// browser, or would rather approve on their phone.
    ///
    /// The device authorization endpoint (from the metadata, or the configuration's
    /// `device_authorization_endpoint` override) gives a code, shown through `display`; the token
    /// endpoint is polled as RFC 8628 says: every `interval` seconds, slower after `slow_down` or
    /// HTTP 429, with a back-off on network trouble and 5xx; `access_denied` is
    /// ``AuthError/Code/authorizationFailed``; `expired_token`, or `expires_in` running out, is
    /// ``AuthError/Code/timeout``; cancelling the task is ``AuthError/Code/loginCancelled`` at once.
    /// The waits use the authenticator's clock.
    ///
    /// - Parameter display: Shows the code and the page; default: ``TerminalDeviceCodeDisplay`` on
    ///   standard error.
    public static func device(_ display: any DeviceCodeDisplay = TerminalDeviceCodeDisplay()) -> Self {
        Self(kind: .device(display))
    }

    /// The client credentials grant (RFC 6749 §4.4): tokens for the client itself, for CI jobs,
    /// services and agents that act as themselves, with no person and no browser.
    ///
    /// The client authenticates as its configuration says: a secret (`client_secret_basic` or
    /// `client_secret_post`), a signed assertion (`private_key_jwt` with
    /// ``ProviderConfiguration/clientAssertionKey``, or `client_secret_jwt`), or a TLS client
    /// certificate. The tokens have the client id as their subject, no ID token, and are marked
    /// renewable (``TokenSet/renewableGrant``): when the access token expires, the grant is asked
    /// again, once however many callers and processes wait, exactly as they refresh. The scopes
    /// default to the configuration's without `openid`; none sends no `scope` (the server's default).
    public static let clientCredentials = Self(kind: .clientCredentials)

    /// A workload's own token traded for tokens: the configuration's ``WorkloadGrant`` (RFC 8693
    /// token exchange, or an RFC 7523 JWT bearer grant), its subject token read from its source
    /// now; without one, ``clientCredentials``.
    ///
    /// The tokens are marked renewable: when they expire, the subject token is read again (a
    /// rotated Kubernetes token, a new CI token) and traded again, once however many callers wait.
    /// Their subject is the client id; the scopes default to the configuration's without `openid`.
    public static let workload = Self(kind: .workload)

    /// Whether the sign-in is the client's or a workload's (no person).
    var isClient: Bool {
        switch kind {
        case .clientCredentials, .workload: return true
        case .browser, .device: return false
        }
    }
}
