# Debian packages for the build and the checks; sourced by scripts/demo, scripts/demo-real-server,
# scripts/test.sh and scripts/test-server.

# Prints the packages the Swift build needs that are missing: jansson (through pkg-config).
missing_build_packages() {
    pkg-config --exists jansson 2>/dev/null || echo libjansson-dev
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
