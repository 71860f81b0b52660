/// The environment NativeAuth gives the programs it starts (a browser, a workload's subject-token
/// command, git): only the variables it names, never the rest of the program's.
///
/// A program's environment holds what its children must not see: a database URL with its
/// password, a sealing key, a CI job's credentials. ``standard`` lets through what a browser, a
/// shell tool or a cloud CLI needs to find the person's session, files, language and proxy; a
/// child that needs more is given the names with ``adding(_:)``. `NATIVEAUTH_` variables are
/// never passed on, even when named.
///
/// ```swift
/// let source = SubjectTokenSource.command(
///     ["vault", "read", "-field=token", "identity/oidc/token/ci"],
///     environment: .standard.adding(["VAULT_ADDR", "VAULT_TOKEN"]))
/// ```
public struct ChildEnvironment: Sendable, Hashable {
    /// The names passed on; a name ending in `*` passes every variable that starts with the rest.
    public private(set) var names: [String]

    /// An environment that passes the variables `names` name (a name ending in `*` is a prefix).
    public init(names: [String]) {
        self.names = names
    }

    /// `PATH`, `HOME`, the user and shell, the terminal, the display (`DISPLAY`,
    /// `WAYLAND_DISPLAY`, `XDG_*`, `DBUS_SESSION_BUS_ADDRESS`), the language (`LANG`, `LANGUAGE`,
    /// `LC_*`, `TZ`), `TMPDIR`, `BROWSER`, and the proxy variables (`http_proxy`, `https_proxy`,
    /// `no_proxy`, `all_proxy`, in either case).
    public static let standard = ChildEnvironment(names: [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "DISPLAY", "WAYLAND_DISPLAY", "XDG_*",
        "DBUS_SESSION_BUS_ADDRESS", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "BROWSER", "http_proxy",
        "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
    ])

    /// This environment with `names` passed on too (a name ending in `*` is a prefix).
    public func adding(_ names: [String]) -> ChildEnvironment {
        ChildEnvironment(names: self.names + names.filter { !self.names.contains($0) })
    }

    /// Whether the variable `name` is passed on.
    public func passes(_ name: String) -> Bool {
        guard !name.hasPrefix("NATIVEAUTH_"), !name.isEmpty else { return false }
        return names.contains { pattern in
            pattern.hasSuffix("*") ? name.hasPrefix(pattern.dropLast()) : name == pattern
        }
    }

    /// The variables of `environment` this passes on.
    public func filtered(_ environment: [String: String]) -> [String: String] {
        environment.filter { passes($0.key) }
    }
}
