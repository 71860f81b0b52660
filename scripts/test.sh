#!/usr/bin/env bash
# The README's test command: sets up a fresh Debian machine with Swift, builds, and runs every check.
#
#   1. installs what the build and the checks need (apt-get; sudo when not root; skipped when present)
#   2. builds everything, tests included, and checks from the build graph that the core and the
#      provider modules link neither AsyncHTTPClient, SwiftNIO-SSL nor any swift-nio module
#      (scripts/check-core-dependencies); builds `nativeauth` with the Cognito trait only and checks
#      that it links no GitHub code and names the missing trait when asked for GitHub (package
#      traits, compile-time provider choice); then builds the samples package (Samples/: the sample CLIs,
#      which the process tests run, and the adapter of the public sender with its tests) into the
#      same build directory
#   3. starts the real authorization servers (scripts/test-server: django-oauth-toolkit, and
#      Authlib's server for signed client authentication and the JWT bearer grant, in .venv)
#      and runs the test suite against them and against local test servers, then the keyring tests on
#      their own against a real gnome-keyring-daemon on a private D-Bus bus (scripts/keyring-daemon),
#      with debug logging on,
#      then NativeAuthPostgres's tests against a real PostgreSQL 15 (scripts/postgres),
#      then the token agent forwarded over a real OpenSSH connection (scripts/sshd),
#      and the samples package's own tests (the adapter of the public sender, against the sandbox),
#      and checks that no token or secret any server issued appears in any output (redaction);
#      then the MCP spec's 25 client-authorization scenarios (scripts/mcp-conformance), with
#      `oidc-login api` and with the official MCP Python SDK's client as the client;
#      then the stress tests on their own (loopback abuse, kill -9 of a store writer), then the
#      suite under ThreadSanitizer and AddressSanitizer, then checks the sandbox authorization
#      server (NativeAuthTesting) with Python's Authlib
#   4. runs LenientJSON's parse/encode/error paths under valgrind: a definite leak fails
#   5. lints Sources, Tests, Samples, Plugins, Benchmarks and Fuzz with `swift format lint --strict`, and
#      checks that the core library spells no command-line flag (errors name settings by key)
#   6. builds the DocC documentation with warnings as errors
#   7. builds the Benchmarks package, so that it does not rot (scripts/benchmarks runs it)
#   8. runs the scaffold-provider plugin in a scratch copy of the repository and in a package that
#      depends on that copy by path, and builds and tests what it writes (scripts/check-scaffold.sh)
#   9. builds the libFuzzer targets (Fuzz/) and runs each for 15 s from its seed corpus
#
# Environment: SKIP_DOCS=1 skips step 6 on a developer's machine (CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/samples.sh

# Each step says how long the run has taken so far (minutes:seconds), so a slow step shows in CI's log.
log() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# The issues a failed `swift test` recorded, one line each and cut short, so that the end of the
# output (all a CI excerpt may show) says what failed and why.
failures() {
    log "what failed ($1)"
    grep -a -E 'recorded an issue|error: |Fatal error' "$1" | grep -av -E '^[0-9T:+-]+ (trace|debug) ' \
        | cut -c1-700 | head -20 >&2 || true
}

# Runs a test command with its output on screen and in a log; on failure, ends with `failures`.
logged_test() {
    local output status
    output=$(mktemp)
    set +e
    "$@" 2>&1 | tee "$output"
    status=${PIPESTATUS[0]}
    set -e
    [[ $status == 0 ]] || { failures "$output"; rm -f "$output"; echo "failed (exit $status): $*" >&2; exit 1; }
    rm -f "$output"
}

# Runs the suites FILTER matches on their own, within SECONDS, with debug logging and VAR=VALUE
# settings, their output joining the redaction check's (on screen without debug lines); sets
# `alone_status` to swift test's exit status instead of stopping, so that the caller stops its
# server first. Usage: alone FILTER SECONDS [VAR=VALUE...]
alone() {
    local filter=$1 limit=$2
    shift 2
    set +e
    env "$@" NATIVEAUTH_LOG_LEVEL=debug NATIVEAUTH_TEST_SECRETS_FILE="$redaction/secrets" \
        NATIVEAUTH_TEST_OUTPUT_DIR="$redaction/outputs" \
        timeout --kill-after=30 "$limit" swift test --skip-build --filter "$filter" 2>&1 \
        | tee -a "$redaction/suite.log" | grep -Ev '^[0-9T:+-]+ (trace|debug) '
    alone_status=${PIPESTATUS[0]}
    set -e
}

# Ends the run when the suites `alone` ran failed, saying which (WHAT) and where the log is.
alone_passed() {
    [[ $alone_status == 0 ]] && return 0
    failures "$redaction/suite.log"
    echo "$1 failed (exit $alone_status); the full log: $redaction/suite.log" >&2
    exit 1
}

# --- 1. system packages -------------------------------------------------------------------------
source scripts/lib/packages.sh
mapfile -t needed < <(missing_build_packages; missing_keyring_packages; missing_adapter_packages; missing_transport_packages; missing_postgres_packages; missing_ssh_packages)
command -v valgrind >/dev/null 2>&1 || needed+=(valgrind)
command -v strings >/dev/null 2>&1 || needed+=(binutils)
install_packages "${needed[@]}"
command -v swift >/dev/null 2>&1 || { echo "error: swift is not on PATH; install the Swift toolchain first" >&2; exit 1; }

# --- 2. build -----------------------------------------------------------------------------------
log "building (debug, with tests)"
swift build --build-tests

# The core links none of its edges: SwiftPM's own build graph shows what each module imports.
log "the core and the provider modules depend on neither AsyncHTTPClient, SwiftNIO-SSL nor the loopback server"
for module in NativeAuth NativeAuthGitHub NativeAuthCognito NativeAuthGoogle NativeAuthEntra NativeAuthKeycloak \
    NativeAuthGitLab NativeAuthAuth0 NativeAuthOkta NativeAuthAWS; do
    scripts/check-core-dependencies "$module" >/dev/null
done
scripts/check-core-dependencies NativeAuth

# Package traits (compile-time provider choice): `nativeauth` with the Cognito trait only links no
# GitHub code and names the missing trait when asked for GitHub. First, so that the default build
# after it compiles again only what the traits change.
log "building nativeauth with --traits Cognito only"
build_package --traits Cognito --product nativeauth
providers=$(.build/debug/nativeauth --help | grep 'Providers in this build')
[[ $providers == *"oidc, cognito."* ]] || { echo "unexpected: $providers" >&2; exit 1; }
if strings .build/debug/nativeauth | grep -q GitHubProvider; then
    echo "the Cognito-only nativeauth links GitHub code" >&2
    exit 1
fi
set +e
answer=$(.build/debug/nativeauth login --provider github --client-id x 2>&1)
status=$?
set -e
[[ $status == 1 && $answer == *"without the GitHub trait"* ]] || { echo "unexpected: $status $answer" >&2; exit 1; }
# GitHub's own options are not in this build either: the refused option names the trait too.
set +e
answer=$(.build/debug/nativeauth login --provider github --host https://github.example --client-id x 2>&1)
status=$?
set -e
[[ $status == 1 && $answer == *"without the GitHub trait"* && $answer == *"--host"* ]] || {
    echo "unexpected: $status $answer" >&2
    exit 1
}

# The sample CLIs (the process tests run them) and the samples' own tests, in the same build directory.
log "building the samples package (Samples/), tests included"
build_package --build-tests
# On Linux the tools send with AsyncHTTPClient and link no FoundationNetworking: libcurl and its
# forty libraries would cost every start 7 MB and milliseconds (NativeAuthURLSession is Apple's).
if ldd .build/debug/nativeauth | grep -E 'libcurl|libFoundationNetworking'; then
    echo "nativeauth links FoundationNetworking or libcurl (above)" >&2
    exit 1
fi
# The CLI people ship links no sandbox server: the demo and the sandbox are nativeauth-demo's.
if strings .build/debug/nativeauth | grep -q SandboxAuthorizationServer; then
    echo "nativeauth links the sandbox authorization server (NativeAuthTesting)" >&2
    exit 1
fi

# --- 3. tests -----------------------------------------------------------------------------------
log "starting the real authorization server"
started_server=0
if ! scripts/test-server status >/dev/null 2>&1; then
    scripts/test-server start
    started_server=1
fi
stop_server() { if [[ $started_server == 1 ]]; then scripts/test-server stop; fi; }
trap stop_server EXIT

log "running the tests, with debug logging, recording every secret the servers hand out"
# A missing server fails the integration tests instead of skipping them.
# The outer timeout turns a hung test into a failure instead of a stalled CI run.
# Redaction: the library in the test process and every sample command the tests run log at debug
# level; the sandbox, the stand-ins and the real server record each secret they issue, and every
# command's output is kept (scripts/lib/redaction_check.py: none of the secrets may appear). The
# debug lines go to the log only, not to the screen.
redaction=$(mktemp -d)
mkdir "$redaction/outputs"
set +e
NATIVEAUTH_REQUIRE_TEST_SERVER=1 NATIVEAUTH_LOG_LEVEL=debug NATIVEAUTH_TEST_SECRETS_FILE="$redaction/secrets" \
    NATIVEAUTH_TEST_OUTPUT_DIR="$redaction/outputs" timeout --kill-after=30 1200 swift test --skip-build 2>&1 \
    | tee "$redaction/suite.log" | grep -Ev '^[0-9T:+-]+ (trace|debug) '
status=${PIPESTATUS[0]}
set -e
[[ $status == 0 ]] || {
    failures "$redaction/suite.log"
    echo "the test suite failed (exit $status); the full log: $redaction/suite.log" >&2
    exit 1
}

log "running the samples package's tests (the adapter of the public sender, on public API alone)"
set +e
NATIVEAUTH_LOG_LEVEL=debug NATIVEAUTH_TEST_SECRETS_FILE="$redaction/secrets" \
    NATIVEAUTH_TEST_OUTPUT_DIR="$redaction/outputs" timeout --kill-after=30 300 \
    swift test --package-path Samples --scratch-path "$PWD/.build" --skip-build 2>&1 \
    | tee -a "$redaction/suite.log" | grep -Ev '^[0-9T:+-]+ (trace|debug) '
status=${PIPESTATUS[0]}
set -e
[[ $status == 0 ]] || { failures "$redaction/suite.log"; echo "the samples' tests failed (exit $status)" >&2; exit 1; }

# The keyring tests, on their own (NATIVEAUTH_KEYRING_TESTS=1; not under the sanitizers): a real
# gnome-keyring-daemon on a private bus is this run's session bus, and tests that lock, stop or
# kill a daemon start their own. Nothing touches the keyring of the person running this. On their
# own because a keyring daemon under load answers slowly, and the timing tests beside them must
# not feel it. Their output joins the redaction check's.
log "running the keyring tests against a real gnome-keyring-daemon on a private bus"
keyring=$(mktemp -d)
scripts/keyring-daemon start "$keyring" >/dev/null
trap 'scripts/keyring-daemon stop "$keyring" || true; rm -rf "$keyring"; stop_server' EXIT
alone NativeAuthKeyringTests 600 NATIVEAUTH_KEYRING_TESTS=1 DBUS_SESSION_BUS_ADDRESS="unix:path=$keyring/bus" \
    NATIVEAUTH_KEYRING_TEST_BUS="unix:path=$keyring/bus"
scripts/keyring-daemon stop "$keyring" || true
rm -rf "$keyring"
trap stop_server EXIT
alone_passed "the keyring tests"
# NativeAuthPostgres against a real PostgreSQL 15 (scripts/postgres: a private cluster on 127.0.0.1,
# owned by an unprivileged user), once and unsanitized; each test makes a database of its own.
log "running the PostgreSQL token store tests against a real PostgreSQL"
postgres=$(mktemp -d)
postgres_url=$(scripts/postgres start "$postgres" | sed -n 's/^url: //p')
trap 'scripts/postgres stop "$postgres" || true; rm -rf "$postgres"; stop_server' EXIT
alone NativeAuthPostgresTests 900 NATIVEAUTH_REQUIRE_POSTGRES=1 NATIVEAUTH_POSTGRES_URL="$postgres_url"
scripts/postgres stop "$postgres" || true
rm -rf "$postgres"
trap stop_server EXIT
alone_passed "the PostgreSQL tests"

# The token agent forwarded over a real OpenSSH connection (scripts/sshd: a private sshd on 127.0.0.1
# and a second local user), once and unsanitized; its commands' output joins the redaction check's.
log "running the token agent's forwarding tests through a real sshd"
sshd_state=$(mktemp -d)
scripts/sshd start "$sshd_state" >/dev/null
trap 'scripts/sshd stop "$sshd_state" || true; rm -rf "$sshd_state"; stop_server' EXIT
alone AgentSSHTests 600 NATIVEAUTH_SSHD_DIR="$sshd_state"
scripts/sshd stop "$sshd_state" || true
rm -rf "$sshd_state"
trap stop_server EXIT
alone_passed "the agent's forwarding tests"

log "redaction: no token, code or client secret in anything the suite printed"
python3 scripts/lib/redaction_check.py --self-test
python3 scripts/lib/redaction_check.py --secrets "$redaction/secrets" .test-server/issued-secrets \
    --outputs "$redaction/outputs" --log "$redaction/suite.log"
rm -rf "$redaction"

log "the MCP spec's client-authorization scenarios (2026-07-28): nativeauth api, then the official MCP Python SDK's client"
# scripts/mcp-conformance/fixture.py: the 25 required auth/ scenarios on 127.0.0.1; each client must pass all.
conformance_cli="$(swift build --show-bin-path)/oidc-login"
timeout --kill-after=30 900 .venv/bin/python scripts/mcp-conformance/fixture.py --client nativeauth --cli "$conformance_cli"
timeout --kill-after=30 600 .venv/bin/python scripts/mcp-conformance/fixture.py --client sdk

log "running the stress tests on their own (10,000 hostile requests to the loopback receiver; 1,000 kill -9 of a token store writer)"
NATIVEAUTH_STRESS_TESTS=1 logged_test timeout --kill-after=30 900 swift test --skip-build \
    --filter 'LoopbackAbuseTests|FileTokenStoreCrashTests'

# Each sanitizer builds in a scratch path of its own, so the plain build above stays as it is. The
# integration tests (the sample CLIs against the real server, kubectl, git, a proxy) ran above and
# are skipped here: dozens of sanitized CLI processes beside the in-process tests starved the timing
# of both and added minutes to CI, for no library code the other suites do not already run sanitized.
# The provider modules' sample-CLI suites are skipped for the same reason: their in-memory suites run
# the same provider code sanitized.
# The samples are not built under the sanitizers (they are another package), so the suites that start
# them (or the crash test's writer) are skipped too: they ran above, unsanitized.
# NativeAuthPostgres and NativeAuthMCP (with postgres-nio and the MCP Swift SDK) are left out with
# their traits off (--disable-default-traits: each module compiles to nothing): their suites need the
# real database and the sample CLI, and ran above, once, unsanitized.
unsanitized='NativeAuthIntegrationTests|EntraCLITests|KeycloakCLITests|GitLabCLITests|Auth0CLITests|OktaCLITests'
unsanitized+='|GitHubLoginCLITests|NativeAuthCLIWithGitHubTests|InitechLoginCLITests|CognitoLoginCLITests|DemoCLITests'
unsanitized+='|KeyringCLITests|FileTokenStoreCrashTests|SandboxRefreshTests/fourProcessesShareOneRefresh'
unsanitized+='|GoogleLoginTests/(everyCommandAtTraceLevelPrintsNoTokenAndNoSecret|googleLoginSignsInRefreshesAndRevokesAtLogout)'
sanitized=(--build-tests --disable-default-traits)
log "the test suite under ThreadSanitizer"
swift build "${sanitized[@]}" --sanitize=thread --scratch-path .build-tsan
# One known false positive is suppressed (scripts/lib/tsan-suppressions.txt says which and why).
TSAN_OPTIONS="suppressions=$PWD/scripts/lib/tsan-suppressions.txt" NATIVEAUTH_REQUIRE_TEST_SERVER=1 \
    logged_test timeout --kill-after=30 1200 swift test --skip-build --disable-default-traits --sanitize=thread --scratch-path .build-tsan \
    --skip "$unsanitized"

# LeakSanitizer is off: it reports what libcurl (FoundationNetworking) and swift-crypto's RSA code
# never free, and live Swift values it cannot see, in every process (THREAT_MODEL.md, "Leaks");
# memory errors are all still caught.
log "the test suite under AddressSanitizer"
swift build "${sanitized[@]}" --sanitize=address --scratch-path .build-asan
ASAN_OPTIONS=detect_leaks=0 NATIVEAUTH_REQUIRE_TEST_SERVER=1 logged_test timeout --kill-after=30 1200 \
    swift test --skip-build --disable-default-traits --sanitize=address --scratch-path .build-asan \
    --skip "$unsanitized"

log "checking the sandbox authorization server with Authlib, a client nobody here wrote"
nativeauth="$(swift build --show-bin-path)/nativeauth-demo"
for algorithm in es256 rs256; do
    output=$(mktemp)
    "$nativeauth" sandbox --auto-approve --signing-algorithm "$algorithm" >"$output" 2>&1 &
    sandbox_pid=$!
    for _ in $(seq 200); do grep -q '^issuer: ' "$output" && break; sleep 0.05; done
    issuer=$(sed -n 's/^issuer: //p' "$output")
    [[ -n $issuer ]] || { cat "$output" >&2; echo "the sandbox did not start" >&2; exit 1; }
    .venv/bin/python scripts/check-sandbox-authlib.py "$issuer"
    kill "$sandbox_pid"
    wait "$sandbox_pid" || { cat "$output" >&2; echo "the sandbox did not stop cleanly" >&2; exit 1; }
    rm -f "$output"
done
stop_server
started_server=0

# --- 4. leak check ------------------------------------------------------------------------------
log "checking LenientJSON for leaks under valgrind"
# Built by step 2 (a root product); building it here again would recompile the modules the samples'
# build compiled as a dependency.
valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
    "$(swift build --show-bin-path)/LenientJSONLeakCheck"

# --- 5. format ----------------------------------------------------------------------------------
log "swift format lint --strict"
dirs=()
for dir in Sources Tests Samples Plugins Benchmarks Fuzz; do [[ -d $dir ]] && dirs+=("$dir"); done
swift format lint --strict --recursive --parallel "${dirs[@]}" Package.swift

# The core library speaks of settings by their keys; the command line's words are NativeAuthCommands'.
log "no command-line flag spelled in the core library's strings"
if grep -rnE '"[^"]*(^|[^a-zA-Z-])--[a-z][a-z0-9-]{2,}' Sources/NativeAuth --include='*.swift' | grep -vE '^[^:]+:[0-9]+: *//'; then
    echo "Sources/NativeAuth spells command-line flags (above): name the setting's key in backquotes instead" >&2
    exit 1
fi

# --- 6. documentation ---------------------------------------------------------------------------
if [[ ${SKIP_DOCS:-0} != 1 ]]; then
    log "building the documentation (warnings are errors)"
    # Quiet when it passes; when it fails, the warnings and errors that say why.
    docs_log=$(mktemp)
    swift package generate-documentation --target NativeAuth --target LenientJSON --target NativeAuthCommands \
        --target NativeAuthAsyncHTTPClient --target NativeAuthPresenters --target NativeAuthURLSession \
        --target NativeAuthKeyring --target NativeAuthPostgres --target NativeAuthAWS \
        --target NativeAuthTesting --target NativeAuthMCP --target NativeAuthOpenAPI --target NativeAuthServices \
        --target NativeAuthAgent \
        --warnings-as-errors >"$docs_log" 2>&1 || {
        grep -E 'warning:|error:' "$docs_log" | grep -v -E 'prohibited flag|unhandled; explicitly' >&2
        echo "the documentation did not build; the full log: $docs_log" >&2
        exit 1
    }
    rm -f "$docs_log"
fi

# --- 7. benchmarks ---------------------------------------------------------------------------------
# In this checkout's build directory: what the two packages share (SwiftNIO, AsyncHTTPClient,
# BoringSSL, and NativeAuth's own modules, built from these same sources) is not compiled again.
# Before the scaffold check, which compiles NativeAuth's modules from a copy.
log "building the Benchmarks package (not running it: scripts/benchmarks does)"
build_package --package-path Benchmarks

# --- 8. the scaffold-provider plugin --------------------------------------------------------------
log "scaffold-provider, in a scratch copy and in a package that depends on it"
bash scripts/check-scaffold.sh

# --- 9. fuzzing smoke run -------------------------------------------------------------------------
# Unoptimized, in the AddressSanitizer build directory above (its C modules are reused): a quarter of
# an hour less than an optimized build, and enough runs for a smoke test.
log "fuzzing each parser of untrusted input for 15 s (scripts/fuzz; longer runs: Fuzz/RUNS.md)"
scripts/fuzz --seconds 15 --debug

log "all checks passed"
