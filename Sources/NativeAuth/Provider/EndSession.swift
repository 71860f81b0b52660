public import Foundation

/// How a provider's session ends in the browser: the page to open, and whether that page sends
/// the browser back to the app.
///
/// ``AuthProvider/endSession(_:)`` returns one; ``Authenticator/logout(presenter:endingSessionWhenSignedOut:)`` waits for the
/// browser's return only when the page says it comes back.
public enum EndSession: Sendable, Equatable {
    /// The page redirects to the `post_logout_redirect_uri` it was given, with the `state`: a
    /// presenter can wait for it (OIDC RP-Initiated Logout, and pages like it).
    case returnsToApp(URL)
    /// The page ends on a page of its own (Cognito's `logout_uri`): the caller opens the URL, and
    /// nothing comes back to wait for.
    case endsElsewhere(URL)

    /// The URL to open.
    public var url: URL {
        switch self {
        case .returnsToApp(let url), .endsElsewhere(let url): url
        }
    }

    /// Whether the page sends the browser back to the app.
    public var returnsToApp: Bool {
        if case .returnsToApp = self { return true }
        return false
    }
}

/// What an end-session URL is built from (``AuthProvider/endSession(_:)``).
///
/// It holds the ID token: printing it shows only whether there is one.
public struct EndSessionParameters: Sendable {
    /// The provider's metadata (`end_session_endpoint`).
    public var metadata: ProviderMetadata
    /// The ID token of the session, for `id_token_hint`, when there is one. Secret: never print it.
    public var idToken: String?
    /// Where the page should send the browser afterwards; `nil` when nothing waits for it.
    public var postLogoutRedirectURI: URL?
    /// The `state` the page must send back.
    public var state: String

    /// Creates the parameters (for testing a provider's ``AuthProvider/endSession(_:)``).
    ///
    /// - Parameters:
    ///   - metadata: The provider's metadata.
    ///   - idToken: The ID token, if any.
    ///   - postLogoutRedirectURI: The redirect back to the app, if anything waits for it.
    ///   - state: The state to send back.
    public init(metadata: ProviderMetadata, idToken: String?, postLogoutRedirectURI: URL?, state: String) {
        self.metadata = metadata
        self.idToken = idToken
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.state = state
    }
}

extension EndSessionParameters: CustomStringConvertible, CustomReflectable {
    /// The redirect and whether there is an ID token; never the token or the state.
    public var description: String {
        "EndSessionParameters(post_logout_redirect_uri: \(postLogoutRedirectURI?.absoluteString ?? "none"),"
            + " ID token: \(idToken == nil ? "no" : "yes"))"
    }

    /// Reflection shows the same as the description.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "postLogoutRedirectURI": postLogoutRedirectURI as Any, "idToken": idToken == nil ? "nil" : "<redacted>",
            ],
            displayStyle: .struct
        )
    }
}

/// How the browser sends the end-session request (OpenID Connect RP-Initiated Logout 1.0 §2 allows
/// both).
public enum EndSessionMethod: String, Sendable, CaseIterable {
    /// A form the browser posts: the ID token (`id_token_hint`) stays out of the browser's history
    /// and every URL. The default.
    case post
    /// A redirect to the end-session URL with its parameters in the query, for servers that take
    /// the request only by GET.
    case get
}

/// Whether a sign-in that asks for `offline_access` also asks for consent (`prompt=consent`).
///
/// OpenID Connect Core §11: a server must ignore `offline_access` unless `prompt` contains
/// `consent`; one that enforces it issues a refresh token that dies with the browser session.
public enum OfflineAccessConsent: String, Sendable, CaseIterable {
    /// `prompt` gets `consent` whenever `offline_access` is asked for.
    case on
    /// `prompt` is left as it is.
    case off
}
