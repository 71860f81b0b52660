#!/usr/bin/env bash
# Proves the scaffold-provider command plugin where people run it:
#
#   1. in a scratch copy of this repository: clear errors for a bad name, clashing flags, an existing
#      file and an existing target; then `--name Acme --issuer URL` and `--name Beta --static
#      --output DIR`, the printed Package.swift lines appended exactly as printed, the generated code
#      linted (`swift format lint --strict`) and its two test targets built;
#   2. in a scratch package that depends on NativeAuth by path (as people use it): the plugin runs
#      there too, names NativeAuth's products by that package's identity, and what it writes for both
#      kinds of provider (`--issuer` and `--static`) builds and passes its tests.
#
# Both builds reuse this checkout's build directory (--scratch-path), so SwiftPM dependencies are not
# compiled again. Step 1 builds only the scaffolded test targets and what they import (NativeAuth and
# NativeAuthTesting, from the copy), not the whole package with every test target; step 2 runs the
# tests, in a package whose test bundle holds them alone. scripts/test.sh runs this after every other
# build in that directory.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/nativeauth-scaffold.XXXXXX")
trap 'rm -rf "$work"' EXIT

log() { printf '\n--> %s\n' "$*"; }
fail() { echo "check-scaffold: $*" >&2; exit 1; }

# A copy of the repository's files (tracked and new, not ignored), without its build directory.
copy_repo() {
    mkdir -p "$1"
    git ls-files -co --exclude-standard -z | tar --null -cf - -T - | tar -xf - -C "$1"
    [[ -f Package.resolved ]] && cp Package.resolved "$1/"
    return 0
}

# Runs the plugin in $PWD; its output (stdout and stderr) goes to $work/out. Returns its status.
scaffold() {
    swift package --allow-writing-to-package-directory scaffold-provider "$@" >"$work/out" 2>&1
}

# Expects the plugin to fail, saying $1.
refuses() {
    local expected=$1
    shift
    if scaffold "$@"; then fail "scaffold-provider $* succeeded; expected: $expected"; fi
    grep -qF -- "$expected" "$work/out" || { cat "$work/out" >&2; fail "scaffold-provider $* did not say: $expected"; }
}

# Appends the `package.targets += [...]` block the plugin printed (in file $1) to Package.swift.
add_printed_lines() {
    local lines
    lines=$(sed -n '/^package\.targets += \[$/,/^]$/p' "$1")
    [[ -n $lines ]] || { cat "$1" >&2; fail "the plugin printed no Package.swift lines"; }
    printf '\n%s\n' "$lines" >>Package.swift
}

# NativeAuthPostgres and NativeAuthMCP (with postgres-nio and the MCP SDK) are left out with their
# traits off, as in the sanitizer builds: a scaffolded provider needs neither, and compiling them
# again from the copy cost CI minutes. (The samples are a package of their own: not built here.)

# Builds the test targets named ($@) and what they import, in the copy (step 1).
build_targets() {
    rm -f "$repo/.build/debug/description.json"
    local target
    for target in "$@"; do
        swift build --scratch-path "$repo/.build" --disable-default-traits --target "$target" >"$work/build" 2>&1 \
            || { grep -E 'error|warning:' "$work/build" >&2; fail "$target did not build"; }
        grep -E 'warning:|Build complete' "$work/build" || true
    done
}

# Builds the package in $PWD with its tests and runs them, expecting $1 to pass (step 2). Its
# manifest turns NativeAuth's traits off (a root package that declares no traits cannot be built
# with --disable-default-traits).
build_and_test() {
    rm -f "$repo/.build/debug/description.json"
    swift build --scratch-path "$repo/.build" --build-tests 2>&1 | grep -E 'error|warning:|Build complete' || true
    swift test --scratch-path "$repo/.build" --skip-build >"$work/test" 2>&1 || {
        cat "$work/test" >&2
        fail "the generated tests failed"
    }
    grep -q "Test run with $1 tests.* passed" "$work/test" || { cat "$work/test" >&2; fail "expected $1 tests to pass"; }
}

# --- 1. a scratch copy of this repository ---------------------------------------------------------
log "scaffold-provider in a scratch copy of the repository"
copy_repo "$work/NativeAuth"
cd "$work/NativeAuth"
refuses "not a valid Swift type name" --name 9lives
refuses "not a valid Swift type name" --name "Acme-Corp"
refuses "should start with a capital letter" --name acme
refuses "exclude each other" --name Acme --issuer https://id.acme.example --static
refuses "--name is missing"
refuses "unknown argument" --name Acme --isuer https://id.acme.example

scaffold --name Acme --issuer https://id.acme.example || { cat "$work/out" >&2; fail "scaffold-provider --name Acme failed"; }
grep -q "^Created Sources/AcmeProvider/AcmeProvider.swift$" "$work/out" || fail "no AcmeProvider.swift"
grep -q "^Created Tests/AcmeProviderTests/AcmeProviderTests.swift$" "$work/out" || fail "no AcmeProviderTests.swift"
cp "$work/out" "$work/acme"
echo "// edited by hand" >>Sources/AcmeProvider/AcmeProvider.swift
before=$(sha256sum Sources/AcmeProvider/AcmeProvider.swift)
refuses "already exists; nothing was written" --name Acme
[[ $(sha256sum Sources/AcmeProvider/AcmeProvider.swift) == "$before" ]] || fail "an existing file was overwritten"
add_printed_lines "$work/acme"

refuses "already has a target named AcmeProvider" --name Acme
scaffold --name Beta --static --output Sources/Custom/Beta || { cat "$work/out" >&2; fail "scaffold-provider --name Beta failed"; }
grep -q 'path: "Sources/Custom/Beta"' "$work/out" || fail "the printed lines miss the --output path"
add_printed_lines "$work/out"

swift format lint --strict Sources/AcmeProvider/*.swift Sources/Custom/Beta/*.swift \
    Tests/AcmeProviderTests/*.swift Tests/BetaProviderTests/*.swift
build_targets AcmeProviderTests BetaProviderTests

# --- 2. a package that depends on NativeAuth by path ----------------------------------------------
log "scaffold-provider in a package that depends on NativeAuth by path"
# It depends on the copy above (with its two scaffolded targets), whose NativeAuth and
# NativeAuthTesting were just built from those same paths (as a dependency SwiftPM may compile them
# again: the root's debug modules are built for @testable import).
cd "$repo"
mkdir -p "$work/app/Sources/app"
cat >"$work/app/Package.swift" <<'MANIFEST'
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../NativeAuth", traits: [])],
    targets: [
        .executableTarget(name: "app", dependencies: [.product(name: "NativeAuth", package: "nativeauth")])
    ]
)
MANIFEST
echo 'import NativeAuth
print(NativeAuthVersion.current)' >"$work/app/Sources/app/main.swift"
[[ -f Package.resolved ]] && cp Package.resolved "$work/app/"
cd "$work/app"
scaffold --name Gamma --issuer https://id.gamma.example || { cat "$work/out" >&2; fail "the plugin did not run"; }
grep -qF '.product(name: "NativeAuthTesting", package: "nativeauth")' "$work/out" \
    || { cat "$work/out" >&2; fail "the printed lines do not name NativeAuth's products by its identity"; }
add_printed_lines "$work/out"
scaffold --name Delta --static || { cat "$work/out" >&2; fail "scaffold-provider --name Delta --static failed"; }
add_printed_lines "$work/out"
build_and_test 4
echo "scaffold-provider: checked in a scratch copy and in a package that depends on NativeAuth"
