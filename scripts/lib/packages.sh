# Debian packages for the build and the checks; sourced by scripts/demo, scripts/demo-real-server,
# scripts/test.sh and scripts/test-server.

# Prints the packages the Swift build needs that are missing: jansson and libsecret (through pkg-config).
missing_build_packages() {
    pkg-config --exists jansson 2>/dev/null || echo libjansson-dev
    pkg-config --exists libsecret-1 2>/dev/null || echo libsecret-1-dev
    command -v pkg-config >/dev/null 2>&1 || echo pkg-config
    return 0
}

# install_packages PACKAGE...: installs with apt-get, as root or through sudo; nothing without arguments.
install_packages() {
    (($# > 0)) || return 0
    printf '\n==> installing %s\n' "$*" >&2
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { echo "error: need root or sudo to install $*" >&2; exit 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# Prints the packages the keyring tests need that are missing: a Secret Service (gnome-keyring) on a
# private bus (dbus-daemon, dbus-send) and secret-tool (scripts/keyring-daemon).
missing_keyring_packages() {
    command -v gnome-keyring-daemon >/dev/null 2>&1 || echo gnome-keyring
    command -v dbus-daemon >/dev/null 2>&1 || echo dbus-daemon
    command -v dbus-send >/dev/null 2>&1 || echo dbus-bin
    command -v secret-tool >/dev/null 2>&1 || echo libsecret-tools
    return 0
}

# Prints the packages the adapter tests need that are missing: the real kubectl (Debian's is
# kubernetes-client), git with git-http-backend, openssl for the API server's certificate, and
# Python's cryptography for the API server's signature checks.
missing_adapter_packages() {
    command -v kubectl >/dev/null 2>&1 || echo kubernetes-client
    [[ -x /usr/lib/git-core/git-http-backend ]] || echo git
    command -v openssl >/dev/null 2>&1 || echo openssl
    command -v python3 >/dev/null 2>&1 || echo python3
    # The API server stand-in verifies ID token signatures (scripts/lib/token_checking_server.py).
    /usr/bin/python3 -c 'import cryptography' >/dev/null 2>&1 || echo python3-cryptography
    return 0
}

# Prints the packages the transport tests need that are missing: a real HTTP proxy (tinyproxy, started
# by scripts/tinyproxy) and openssl for the throwaway CA and certificates (scripts/test-certificates).
missing_transport_packages() {
    command -v tinyproxy >/dev/null 2>&1 || echo tinyproxy-bin
    command -v openssl >/dev/null 2>&1 || echo openssl
    return 0
}

# Prints the packages NativeAuthPostgres's tests, the fleet sample and its benchmarks need when
# missing: PostgreSQL itself (scripts/postgres runs initdb and pg_ctl from it) and psql.
missing_postgres_packages() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || echo postgresql
    command -v psql >/dev/null 2>&1 || echo postgresql-client
    return 0
}

# Prints the packages the token agent's forwarding tests need when missing: OpenSSH's server and
# client (scripts/sshd starts a private sshd on 127.0.0.1) and git (`git credential fill` on the
# remote side).
missing_ssh_packages() {
    [[ -x /usr/sbin/sshd ]] || echo openssh-server
    command -v ssh >/dev/null 2>&1 || echo openssh-client
    command -v ssh-keygen >/dev/null 2>&1 || echo openssh-client
    command -v git >/dev/null 2>&1 || echo git
    return 0
}
