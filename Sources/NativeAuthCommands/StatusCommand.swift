public import ArgumentParser
internal import Foundation
internal import LenientJSON
internal import NativeAuth
internal import NativeAuthKeyring

/// `status`: what is stored, without a network request and without ever printing a token.
///
/// For the selected account (`--account`, `NATIVEAUTH_ACCOUNT`, a `.nativeauth.json`, else the
/// active one), and where that choice came from; `--all` lists every account of the provider and
/// client, with the active one marked.
///
/// `--json` prints one object: `signed_in`, `account`, `account_source`, `profile` (name and
/// source, or null), `subject`, `expires_at` (ISO 8601 or null), `refresh_expires_at`, `scope`
/// (array), `has_refresh_token` and `storage` (`backend`: keyring, file or memory; `location`).
/// With `--all`: `accounts` (each `name`, `active`, `subject`, `display_name`, `expires_at`,
/// `refresh_expires_at`, `has_refresh_token`, `scope`) and `storage`.
/// An empty or missing store is a success (`signed_in: false`).
///
/// With `NATIVEAUTH_ACCESS_TOKEN` set, no store is read: `status` says that token is in use
/// (`--json`: `signed_in: true`, `source: "NATIVEAUTH_ACCESS_TOKEN"`, `storage: null`, nothing known
/// of its subject, expiry or scope), with or without `--all`.
public struct StatusCommand<Tool: NativeAuthTool>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "status", abstract: "Show what is stored (never a token).",
            discussion: CommandSupport.exitStatusHelp)
    }

    @OptionGroup var options: CommandOptions<Tool, AccountSettings>

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    @Flag(name: .long, help: "List every account of this provider and client.")
    var all = false

    /// Creates the command (argument-parser fills in the options).
    public init() {}

    public func run() async throws {
        try await CommandSupport.run(Tool.self) {
            if try AccessTokenOverride.token() != nil {
                try reportOverride()
                return
            }
            if all {
                try await runAll()
                return
            }
            let records = try await options.knownResourceStore().knownResources()
            if !records.isEmpty, options.configuredIssuer() == nil {
                // Nothing configured, but APIs found by their metadata (`api URL`): those.
                try await reportResources(records)
                return
            }
            let prepared = try await options.prepare(use: .describe)
            let tokens = try await prepared.authenticator.currentTokens()
            let storage = prepared.storage
            let resourceTokens = try await KnownResourceStatus.tokens(of: records, in: storage.store)
            if json {
                var object = Self.object(tokens)
                object["resources"] = KnownResourceStatus.json(records, tokens: resourceTokens)
                object["account"] = .string(prepared.account)
                object["account_source"] = .string(prepared.accountSource)
                object["profile"] =
                    prepared.profile.map { .object(["name": .string($0.name), "source": .string($0.source)]) } ?? .null
                object["storage"] = Self.storageObject(storage, location: await storage.describedLocation())
                CommandSupport.printLine(try JSONValue.object(object).encodedString())
            } else {
                for line in Self.lines(tokens, now: Date()) { CommandSupport.printLine(line) }
                if tokens != nil || prepared.named != nil {
                    let source = prepared.named.map { "from \($0.source)" } ?? prepared.accountSource
                    CommandSupport.printLine("Account: \(prepared.account) (\(source))")
                }
                if let profile = prepared.profile {
                    CommandSupport.printLine("Profile: \(profile.name) (from \(profile.source))")
                }
                for line in KnownResourceStatus.lines(records, tokens: resourceTokens, now: Date()) {
                    CommandSupport.printLine(line)
                }
                CommandSupport.printLine(await CommandStorage.line(for: storage))
            }
        }
    }

    /// The APIs found by their metadata, with no server configured.
    private func reportResources(_ records: [KnownResource]) async throws {
        let storage = try await options.openStorage()
        let tokens = try await KnownResourceStatus.tokens(of: records, in: storage.store)
        if json {
            let object: JSONObject = [
                "signed_in": .bool(false), "resources": KnownResourceStatus.json(records, tokens: tokens),
                "storage": Self.storageObject(storage, location: await storage.describedLocation()),
            ]
            CommandSupport.printLine(try JSONValue.object(object).encodedString())
            return
        }
        CommandSupport.printLine("No server configured.")
        for line in KnownResourceStatus.lines(records, tokens: tokens, now: Date()) { CommandSupport.printLine(line) }
        CommandSupport.printLine(await CommandStorage.line(for: storage))
    }

    private func runAll() async throws {
        let prepared = try await options.prepare(use: .none)
        let accounts = try await prepared.accounts.list()
        let storage = prepared.storage
        if json {
            let list = accounts.map { account -> JSONValue in
                var object = JSONObject()
                object["name"] = .string(account.name)
                object["active"] = .bool(account.isActive)
                object["subject"] = account.subject.map(JSONValue.string) ?? .null
                object["display_name"] = account.displayName.map(JSONValue.string) ?? .null
                object["expires_at"] = Self.date(account.expiresAt)
                object["refresh_expires_at"] = Self.date(account.refreshExpiresAt)
                object["has_refresh_token"] = .bool(account.hasRefreshToken)
                object["scope"] = .array(account.scopes.map(JSONValue.string))
                return .object(object)
            }
            let object: JSONObject = [
                "accounts": .array(list),
                "storage": Self.storageObject(storage, location: await storage.describedLocation()),
            ]
            CommandSupport.printLine(try JSONValue.object(object).encodedString())
            return
        }
        if accounts.isEmpty { CommandSupport.printLine("Not signed in.") }
        let now = Date()
        for account in accounts {
            var line = (account.isActive ? "* " : "  ") + account.name
            if let name = account.displayName, name != account.name { line += " (\(name))" }
            var facts = [Self.expiry(account.expiresAt, now: now).map { "access token expires \($0)" }]
            facts.append(
                account.refreshExpiresAt.map { "signed in until \($0.formatted(.iso8601))" }
                    ?? (account.hasRefreshToken ? "refresh token" : "no refresh token"))
            line += ": " + facts.compactMap { $0 }.joined(separator: "; ")
            CommandSupport.printLine(line)
        }
        CommandSupport.printLine(await CommandStorage.line(for: storage))
    }

    private func reportOverride() throws {
        let variable = AccessTokenOverride.variable
        if json {
            var object = Self.object(nil)
            object["signed_in"] = .bool(true)
            object["source"] = .string(variable)
            object["storage"] = .null
            CommandSupport.printLine(try JSONValue.object(object).encodedString())
        } else {
            CommandSupport.printLine("Using the access token in \(variable): `token` and `api` send it as it is.")
            CommandSupport.printLine(
                "No store is read, and the token is never refreshed; unset \(variable) to use stored sign-ins.")
        }
    }

    static func storageObject(_ storage: TokenStorage, location: String) -> JSONValue {
        .object(["backend": .string(storage.backend.rawValue), "location": .string(location)])
    }

    static func date(_ date: Date?) -> JSONValue {
        date.map { .string($0.formatted(.iso8601)) } ?? .null
    }

    /// The fields of one sign-in (or of none) in `status --json`.
    static func object(_ tokens: TokenSet?) -> JSONObject {
        var object = JSONObject()
        object["signed_in"] = .bool(tokens != nil)
        object["subject"] = tokens?.subject.map(JSONValue.string) ?? .null
        object["expires_at"] = date(tokens?.expiresAt)
        object["refresh_expires_at"] = date(tokens?.refreshExpiresAt)
        object["scope"] = .array((tokens?.scopes ?? []).map(JSONValue.string))
        object["has_refresh_token"] = .bool(tokens?.refreshToken != nil)
        object["resource_tokens"] = .array(
            (tokens?.resourceTokens ?? []).map { token in
                .object([
                    "resource": .string(token.resource.absoluteString),
                    "scope": .array(token.scopes.map(JSONValue.string)), "expires_at": date(token.expiresAt),
                ])
            })
        object["derived_credentials"] = .array(
            (tokens?.derivedCredentials ?? []).map { credential in
                .object(["name": .string(credential.name), "expires_at": date(credential.expiresAt)])
            })
        return object
    }

    static func json(_ tokens: TokenSet?) throws -> String {
        try JSONValue.object(object(tokens)).encodedString()
    }

    /// `2026-11-25T10:00:00Z (in 59 min)`, or `nil` without a date.
    static func expiry(_ date: Date?, now: Date) -> String? {
        guard let date else { return nil }
        let minutes = Int(date.timeIntervalSince(now) / 60)
        let when = minutes >= 0 ? "in \(minutes) min" : "\(-minutes) min ago"
        return "\(date.formatted(.iso8601)) (\(when))"
    }

    static func lines(_ tokens: TokenSet?, now: Date) -> [String] {
        guard let tokens else { return ["Not signed in."] }
        var lines = ["Signed in as \(tokens.displayName ?? tokens.subject ?? "an unnamed account")"]
        if let subject = tokens.subject { lines.append("Subject: \(subject)") }
        lines.append("Access token expires: " + (expiry(tokens.expiresAt, now: now) ?? "not stated"))
        lines.append("Scope: \(tokens.scopes.joined(separator: " "))")
        lines.append("Refresh token: \(tokens.refreshToken == nil ? "no" : "yes")")
        if let until = expiry(tokens.refreshExpiresAt, now: now) {
            lines.append("Signed in until: \(until) (when the refresh token expires)")
        }
        for token in tokens.resourceTokens {
            let scope = token.requestedScopes.isEmpty ? "" : " (scope \(token.requestedScopes.joined(separator: " ")))"
            lines.append(
                "Token for \(token.resource.absoluteString)\(scope) expires: "
                    + (expiry(token.expiresAt, now: now) ?? "not stated"))
        }
        for credential in tokens.derivedCredentials {
            lines.append("Credentials \(credential.name) expire: " + (expiry(credential.expiresAt, now: now) ?? ""))
        }
        return lines
    }
}
