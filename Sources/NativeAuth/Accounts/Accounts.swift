public import Foundation
internal import Logging

/// The accounts of one provider and client: sign in as several people, list them, pick the active
/// one, and act on any of them without changing which is active.
///
/// Each account is a token set in the store under its own ``TokenKey/account``; ``ActiveAccountStore``
/// keeps which one is active. An account is named after who signed in (the ID token's
/// `preferred_username`, else `email`, else `sub`; for providers without ID tokens, the same claims
/// of their userinfo, such as GitHub's login) unless the app names it.
///
/// ```swift
/// let accounts = Accounts(authenticator, active: FileActiveAccountStore())
/// let alice = try await accounts.login(presenter: LoopbackPresenter())   // becomes the active one
/// let bob = try await accounts.login(presenter: LoopbackPresenter())     // alice stays active
/// let token = try await accounts.authenticator(for: bob.account).accessToken()
/// try await accounts.switchActive(to: bob.account)
/// ```
///
/// Acting on an account is ``authenticator(for:)``: an ``Authenticator`` for that account alone,
/// whose refreshes are single-flight per account (two accounts refresh side by side; one account
/// refreshes once however many processes need it).
public struct Accounts: Sendable {
    /// The authenticator whose provider, client, store and transport the accounts share.
    public let authenticator: Authenticator
    /// Where the active account is kept.
    public let activeStore: any ActiveAccountStore

    /// One signed-in account, as ``list()`` describes it (never its tokens).
    public struct Account: Sendable, Equatable {
        /// The account's name in the store.
        public var name: String
        /// Whether it is the active account.
        public var isActive: Bool
        /// The signed-in subject (`sub`), when known.
        public var subject: String?
        /// A name to show for the person, when known.
        public var displayName: String?
        /// When the access token expires, when the server said.
        public var expiresAt: Date?
        /// Whether a refresh token is stored.
        public var hasRefreshToken: Bool
        /// When the refresh token expires, when the server said: the sign-in lasts until then.
        public var refreshExpiresAt: Date?
        /// The granted scopes.
        public var scopes: [String]
    }

    /// A sign-in that ``login(presenter:scopes:name:options:)`` kept.
    public struct SignIn: Sendable {
        /// The account the tokens were stored under.
        public var account: String
        /// The tokens.
        public var tokens: TokenSet
        /// Whether the account is the active one (the first account becomes active).
        public var isActive: Bool
    }

    /// The accounts of `authenticator`'s provider and client (its own account does not matter).
    public init(_ authenticator: Authenticator, active: any ActiveAccountStore) {
        self.authenticator = authenticator
        self.activeStore = active
    }

    private var issuer: String { authenticator.key.issuer }
    private var clientID: String { authenticator.key.clientID }

    /// The longest account name.
    static let maximumNameLength = 200

    /// Refuses an account name that is empty, too long or holds control characters.
    public static func validate(name: String) throws(AuthError) {
        // Format characters (bidi overrides and isolates, zero-width ones) and line separators
        // would make one name look like another in `status` and `switch`.
        let refused: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        guard !name.isEmpty, name.count <= maximumNameLength,
            !name.unicodeScalars.contains(where: { refused.contains($0.properties.generalCategory) })
        else {
            throw AuthError(
                .configurationInvalid,
                "the account name \"\(TerminalText.sanitized(String(name.prefix(40))))\" is not usable",
                hint: "an account name is 1 to \(maximumNameLength) characters, without control or format characters"
                    + " (such as bidirectional overrides)",
                field: Setting.account.key)
        }
    }

    // MARK: - Listing and choosing

    /// The names of the stored accounts, sorted.
    public func names() async throws -> [String] {
        try await authenticator.store.keys()
            .filter { $0.issuer == issuer && $0.clientID == clientID }
            .map(\.account).sorted()
    }

    /// The active account: the one chosen last (``switchActive(to:)``, or the first sign-in) while
    /// it is stored, else the only stored account; `nil` when there is none, or several and none
    /// was chosen.
    public func active() async throws -> String? {
        try await active(among: names())
    }

    /// ``active()`` among `names`, the stored accounts the caller already listed.
    package func active(among names: [String]) async throws -> String? {
        if let chosen = try await activeStore.activeAccount(issuer: issuer, clientID: clientID),
            names.contains(chosen)
        {
            return chosen
        }
        return names.count == 1 ? names.first : nil
    }

    /// Every stored account, sorted by name, with which is active; reads the store only.
    public func list() async throws -> [Account] {
        let names = try await names()
        let active = try await active(among: names)
        var accounts: [Account] = []
        for name in names {
            let key = TokenKey(issuer: issuer, clientID: clientID, account: name)
            guard let tokens = try await authenticator.store.load(key) else { continue }
            accounts.append(
                Account(
                    name: name, isActive: name == active, subject: tokens.subject, displayName: tokens.displayName,
                    expiresAt: tokens.expiresAt, hasRefreshToken: tokens.refreshToken != nil,
                    refreshExpiresAt: tokens.refreshExpiresAt, scopes: tokens.scopes))
        }
        return accounts
    }

    /// Makes `name` the active account.
    ///
    /// - Throws: ``AuthError`` (`configuration_invalid`, field `account`) when no such account is
    ///   stored, naming those that are.
    public func switchActive(to name: String) async throws {
        let names = try await names()
        guard names.contains(name) else { throw Self.unknown(name, among: names) }
        try await activeStore.setActiveAccount(name, issuer: issuer, clientID: clientID)
    }

    /// The error for an account that is not stored.
    package static func unknown(_ name: String, among names: [String]) -> AuthError {
        AuthError(
            .configurationInvalid,
            "no account named \"\(TerminalText.sanitized(name))\" is signed in here",
            hint: names.isEmpty
                ? "sign in first" : "signed-in accounts: " + names.map(TerminalText.sanitized).joined(separator: ", "),
            field: Setting.account.key)
    }

    /// An authenticator for the account `name` alone (same provider, client, store and transport).
    public func authenticator(for name: String) -> Authenticator {
        authenticator.forAccount(name)
    }

    // MARK: - Signing in and out

    /// Signs in with `method` (see ``Authenticator/login(_:scopes:)``) and keeps the tokens as the
    /// account `name`, or, without one, as the account named after who signed in (for a client or
    /// a workload, the client id). Signing in as a stored account replaces its tokens; so does
    /// signing in as the person of the `default` account (a sign-in stored before accounts had
    /// names), which this account replaces. The first account becomes the active one; later ones
    /// leave the active one as it is.
    ///
    /// - Throws: ``AuthError``; nothing is stored unless every step succeeded.
    @discardableResult
    public func login(_ method: SignInMethod, scopes: [String]? = nil, name: String? = nil) async throws -> SignIn {
        if let name { try Self.validate(name: name) }
        return try await keep(try await authenticator.newSignIn(method, scopes: scopes), name: name)
    }

    /// Signs in through `presenter` and keeps the tokens as ``login(_:scopes:name:)`` does.
    @available(*, deprecated, message: "use login(.browser(presenter, options:), scopes:name:)")
    public func login(
        presenter: any UserAgentPresenter, scopes: [String]? = nil, name: String? = nil,
        options: LoginOptions = LoginOptions()
    ) async throws -> SignIn {
        try await login(.browser(presenter, options: options), scopes: scopes, name: name)
    }

    /// Signs in with the device authorization grant and keeps the tokens as ``login(_:scopes:name:)`` does.
    @available(*, deprecated, message: "use login(.device(display), scopes:name:)")
    public func loginWithDevice(
        display: any DeviceCodeDisplay = TerminalDeviceCodeDisplay(),
        scopes: [String]? = nil,
        name: String? = nil
    ) async throws -> SignIn {
        try await login(.device(display), scopes: scopes, name: name)
    }

    /// Gets tokens for the client itself and keeps them as ``login(_:scopes:name:)`` does.
    @available(*, deprecated, message: "use login(.clientCredentials, scopes:name:)")
    public func loginWithClientCredentials(scopes: [String]? = nil, name: String? = nil) async throws -> SignIn {
        try await login(.clientCredentials, scopes: scopes, name: name)
    }

    /// Gets tokens with the configuration's workload grant and keeps them as ``login(_:scopes:name:)`` does.
    @available(*, deprecated, message: "use login(.workload, scopes:name:)")
    public func loginAsWorkload(scopes: [String]? = nil, name: String? = nil) async throws -> SignIn {
        try await login(.workload, scopes: scopes, name: name)
    }

    private func keep(_ signIn: NewSignIn, name: String?) async throws -> SignIn {
        let (tokens, suggested) = try await authenticator.identified(signIn)
        var account = name ?? suggested ?? TokenKey.defaultAccount
        if (try? Self.validate(name: account)) == nil { account = tokens.subject ?? TokenKey.defaultAccount }
        try Self.validate(name: account)
        // The active account stays what it was (chosen, or the only one); the first account, or
        // one signed in while none is active, becomes active. The choice is written down, so that
        // a later sign-in of a second account does not leave two candidates.
        var active = try await active() ?? account
        let kept = try await authenticator.forAccount(account).adopt(tokens, "signed in")
        // The same person's sign-in from before accounts had names ("default") is this one's older
        // copy: it goes, and this account takes its place.
        if account != TokenKey.defaultAccount, let subject = kept.subject {
            let legacy = authenticator.forAccount(TokenKey.defaultAccount)
            if try await authenticator.store.load(legacy.key)?.subject == subject {
                _ = try await legacy.holder.owner().remove()
                if active == TokenKey.defaultAccount { active = account }
            }
        }
        if try await activeStore.activeAccount(issuer: issuer, clientID: clientID) != active {
            try await activeStore.setActiveAccount(active, issuer: issuer, clientID: clientID)
        }
        return SignIn(account: account, tokens: kept, isActive: active == account)
    }

    /// Signs the account `name` out (``Authenticator/logout(presenter:endingSessionWhenSignedOut:)``); when it was the active
    /// one, no account is active afterwards (a single remaining account is, implicitly).
    ///
    /// - Throws: ``AuthError``, `configuration_invalid` when no such account is stored.
    @discardableResult
    public func logout(_ name: String, presenter: (any UserAgentPresenter)? = nil) async throws -> LogoutResult {
        let names = try await names()
        guard names.contains(name) else { throw Self.unknown(name, among: names) }
        return try await signOut(name, presenter: presenter)
    }

    /// ``logout(_:presenter:)`` without asking the store whether `name` is listed first: for a
    /// caller that already knows (a command line that checked, or acts on a sign-in stored
    /// before accounts were listed, or kept in another backend).
    package func signOut(
        _ name: String,
        presenter: (any UserAgentPresenter)?,
        endingSessionWhenSignedOut: Bool = false
    ) async throws -> LogoutResult {
        let result = try await authenticator.forAccount(name).logout(
            presenter: presenter, endingSessionWhenSignedOut: endingSessionWhenSignedOut)
        if try await activeStore.activeAccount(issuer: issuer, clientID: clientID) == name {
            try await activeStore.setActiveAccount(nil, issuer: issuer, clientID: clientID)
        }
        return result
    }
}
