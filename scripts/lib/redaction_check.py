#!/usr/bin/env python3
"""Searches everything a test run printed for every secret the test servers handed out.

scripts/test.sh runs the test suite with NATIVEAUTH_LOG_LEVEL=debug and:
  - NATIVEAUTH_TEST_SECRETS_FILE: the sandbox, the stand-in servers and the tests append every
    client secret, authorization code, device code and access, refresh and ID token to it;
  - the real server (scripts/test-server) appends its own to .test-server/issued-secrets;
  - NATIVEAUTH_TEST_OUTPUT_DIR: every sample command a test runs leaves its arguments, stdout and
    stderr there;
  - the suite's own output (the library logging in the test process) goes to a log file.

None of those secrets may appear in any of that output. One exception: the stdout of a credential
command (`token` in each --format, `git-credential`, `docker-credential`) holds, by design, one
issued token in the place its format gives it (the whole line, `Bearer …` or `DPoP …`, a JSON `access_token`,
`Secret` or `status.token`, google-executable's `id_token`, a `password=` or `credential=` line; and
aws-credential-process's `SecretAccessKey` and `SessionToken`); those values are taken out and the
rest is searched like everything else.

A finding names the file, the line and the first characters of the secret, never the secret.
The run also fails when there was too little to check (a broken recording is not a pass).

    redaction_check.py --secrets FILE... --outputs DIR --log FILE...
    redaction_check.py --self-test
"""

import argparse
import json
import contextlib
import io
import sys
import tempfile
from pathlib import Path

# Shorter strings (a user name, a scope) are not secrets and would match by chance.
MINIMUM_LENGTH = 12


def load_secrets(files):
    """The recorded secrets, and those too short to search for (a test should use a longer one)."""
    secrets, short = set(), set()
    for file in files:
        for line in Path(file).read_text(errors="replace").splitlines():
            (secrets if len(line) >= MINIMUM_LENGTH else short).add(line)
    return secrets, short


class Finder:
    """Finds any of many secrets in text, exactly, in time linear in the text.

    A secret never holds a character that no secret holds, so each occurrence lies inside one run
    of "secret characters"; inside a run, a dictionary keyed by the first MINIMUM_LENGTH
    characters finds the candidates that start at each position.
    """

    def __init__(self, secrets):
        self.by_prefix = {}
        for secret in secrets:
            self.by_prefix.setdefault(secret[:MINIMUM_LENGTH], []).append(secret)
        self.alphabet = frozenset("".join(secrets))

    def runs(self, line):
        start = None
        for index, character in enumerate(line):
            if character in self.alphabet:
                if start is None:
                    start = index
            elif start is not None:
                yield line[start:index]
                start = None
        if start is not None:
            yield line[start:]

    def find(self, line):
        found = []
        for run in self.runs(line):
            for position in range(len(run) - MINIMUM_LENGTH + 1):
                for secret in self.by_prefix.get(run[position:position + MINIMUM_LENGTH], ()):
                    if run.startswith(secret, position):
                        found.append(secret)
        return found


# The commands whose stdout is, by design, one credential for another program (`token` in each
# --format, git's and Docker's credential helpers), and the helper scripts `setup-docker` writes.
CREDENTIAL_COMMANDS = {"token", "git-credential", "docker-credential"}


def is_credential_command(path):
    if path.suffix != ".stdout":
        return False
    arguments = path.with_suffix(".args")
    if not arguments.exists():
        return False
    words = arguments.read_text().splitlines()
    return bool(CREDENTIAL_COMMANDS.intersection(words)) or bool(words and words[0].startswith("docker-credential-"))


def credential_of(text):
    """The credentials in a credential command's output, where its format puts them (one issued
    token; the AWS secret key and session token of `aws-credential-process`), and the text without
    them; ([], text) when the output has no such place."""
    for scheme in ("Bearer ", "DPoP "):
        if text.startswith(scheme) and text.count("\n") == 1:
            return [text[len(scheme):-1]], ""  # header
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        if value.get("Version") == 1 and isinstance(value.get("SecretAccessKey"), str):
            taken = [value.pop("SecretAccessKey"), value.pop("SessionToken", "")]
            return [secret for secret in taken if secret], json.dumps(value)  # aws-credential-process
        if value.get("version") == 1 and isinstance(value.get("id_token"), str):
            credential = value.pop("id_token")
            return [credential], json.dumps(value)  # google-executable
        for path in (("access_token",), ("Secret",), ("status", "token")):
            holder = value
            for key in path[:-1]:
                holder = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and isinstance(holder.get(path[-1]), str):
                credential = holder[path[-1]]
                holder[path[-1]] = ""
                return [credential], json.dumps(value)
        return [], text
    lines = text.splitlines()
    found = [line for line in lines if line.startswith(("password=", "credential="))]
    if len(found) == 1:
        rest = "\n".join(line for line in lines if line is not found[0])
        return [found[0].partition("=")[2]], rest
    if text.endswith("\n") and text.count("\n") == 1 and " " not in text:
        return [text[:-1]], ""  # raw
    return [], text


def without_credential(path, text, secrets):
    """A credential command's stdout without the issued credentials its format puts in their place
    (everything else in it is still searched), and whether any were taken out."""
    if not is_credential_command(path):
        return text, False
    credentials, rest = credential_of(text)
    if not credentials or any(credential not in secrets for credential in credentials):
        return text, False
    return rest, True


def check(secret_files, output_dir, logs, minimum_secrets, minimum_outputs, minimum_debug_lines, minimum_per_file=1):
    secrets, short = load_secrets(secret_files)
    # Each source must have recorded something: a server that stopped recording is not a pass.
    empty = [file for file in secret_files if sum(1 for _ in open(file)) < minimum_per_file]
    finder = Finder(secrets)
    # Command outputs, and the argv and environment of every test browser a command started.
    files = sorted(p for p in Path(output_dir).iterdir() if p.suffix in (".stdout", ".stderr", ".json"))
    browsers = sum(1 for p in files if p.suffix == ".json")
    findings = []
    debug_lines = 0
    exempt = 0
    for path in files + [Path(log) for log in logs]:
        text, taken = without_credential(path, path.read_text(errors="replace"), secrets)
        exempt += taken
        for number, line in enumerate(text.splitlines(), start=1):
            if " debug " in line or " trace " in line:
                debug_lines += 1
            for secret in finder.find(line):
                findings.append(f"{path}:{number}: a secret starting {secret[:6]!r} ({len(secret)} characters)")
    print(
        f"redaction check: {len(secrets)} secrets, {len(files) - browsers} command outputs, "
        f"{browsers} browser command lines and environments "
        f"({exempt} of them a credential command's own credential, taken out), {len(logs)} logs, {debug_lines} debug lines"
    )
    problems = [
        f"a recorded secret of {len(secret)} characters is too short to search for: use one of at least "
        f"{MINIMUM_LENGTH} in the test"
        for secret in sorted(short)
    ]
    problems += [f"{file} holds fewer than {minimum_per_file} secrets: did that server record them?" for file in empty]
    if len(secrets) < minimum_secrets:
        problems.append(f"only {len(secrets)} secrets were recorded (expected at least {minimum_secrets})")
    if len(files) - browsers < minimum_outputs:
        problems.append(f"only {len(files) - browsers} command outputs were recorded (expected at least {minimum_outputs})")
    if debug_lines < minimum_debug_lines:
        problems.append(f"only {debug_lines} debug lines (expected at least {minimum_debug_lines}): was debug logging on?")
    for problem in problems + findings:
        print("redaction check: " + problem, file=sys.stderr)
    return 1 if problems or findings else 0


def self_test():
    """The check fails on a planted secret, a token printed beside other text, and too little input;
    it passes clean output and `token`'s own."""
    secret = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz"
    access = "access-0F6D2C1E-8B7A-4C3D-9E1F-2A3B4C5D6E7F"
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "secrets").write_text(f"{secret}\n{access}\n")
        outputs = root / "outputs"
        outputs.mkdir()
        (outputs / "a.args").write_text("token\n--store\n/tmp/x")
        (outputs / "a.stdout").write_text(access + "\n")
        (outputs / "a.stderr").write_text("2026-11-24T06:16:09+0000 debug cli: path=/token [NativeAuth] HTTP exchange\n")
        log = root / "log"
        log.write_text("short is not a secret\n2026-11-24T06:16:09+0000 debug x: y\n")

        def quietly(*arguments, **options):
            # The planted findings are expected: they stay off the screen, where they would read
            # like real ones.
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return check(*arguments, **options)

        def run(**minimums):
            limits = dict(minimum_secrets=2, minimum_outputs=2, minimum_debug_lines=2) | minimums
            return quietly([root / "secrets"], outputs, [log], **limits)

        results = {"clean": run()}
        (outputs / "b.args").write_text("logout")
        (outputs / "b.stdout").write_text(f"open https://example.test/logout?id_token_hint={secret}&state=x\n")
        results["an ID token in a URL"] = run()
        (outputs / "b.stdout").write_text("signed out\n")
        log.write_text(log.read_text() + f"Authorization: Bearer {access}\n")
        results["a token in the log"] = run()
        log.write_text("2026-11-24T06:16:09+0000 debug x: y\n")
        (outputs / "a.args").write_text("status")
        results["a token printed by a command other than token"] = run()
        (outputs / "a.args").write_text("token")
        (outputs / "browser-1.json").write_text(json.dumps({"argv": ["xdg-open", f"https://x.test/?id_token_hint={secret}"]}))
        results["an ID token in a browser's argv"] = run()
        (outputs / "browser-1.json").write_text(json.dumps({"argv": ["xdg-open", "http://127.0.0.1:1/start/x"]}))
        (outputs / "browser-1.json").unlink()
        (outputs / "c.args").write_text("oidc-login\ngit-credential\nget")
        (outputs / "c.stdout").write_text(f"protocol=https\nhost=x\nusername=oauth2\npassword={access}\n")
        results["clean"] = run() if results["clean"] == 0 else 1
        (outputs / "c.stdout").write_text(f"protocol=https\nhost=x\nusername={secret}\npassword={access}\n")
        results["a second secret beside a credential helper's password"] = run()
        (outputs / "c.args").write_text("oidc-login\ntoken\n--format\njson")
        (outputs / "c.stdout").write_text(json.dumps({"access_token": access, "id_token": secret}) + "\n")
        results["an ID token beside token --format json's access token"] = run()
        (outputs / "c.stdout").write_text(json.dumps({"access_token": access, "scope": []}) + "\n")
        results["clean"] = run() if results["clean"] == 0 else 1
        (outputs / "c.args").write_text("oidc-login\ntoken\n--format\naws-credential-process")
        (outputs / "c.stdout").write_text(
            json.dumps({"Version": 1, "AccessKeyId": "ASIA1", "SecretAccessKey": secret, "SessionToken": access}) + "\n")
        results["clean"] = run() if results["clean"] == 0 else 1
        (outputs / "c.args").write_text("oidc-login\ntoken\n--format\ngoogle-executable")
        (outputs / "c.stdout").write_text(json.dumps({"version": 1, "success": True, "id_token": secret}) + "\n")
        results["clean"] = run() if results["clean"] == 0 else 1
        (outputs / "c.stdout").write_text(
            json.dumps({"version": 1, "success": True, "id_token": secret, "message": access}) + "\n")
        results["a second secret beside google-executable's token"] = run()
        (outputs / "c.args").write_text("oidc-login\nstatus")
        results["a token in the JSON of a command that is not a credential command"] = run()
        (outputs / "c.args").unlink()
        (outputs / "c.stdout").unlink()
        results["too few secrets"] = run(minimum_secrets=3)
        results["too few debug lines"] = run(minimum_debug_lines=9)
        (root / "secrets").write_text(f"{secret}\n{access}\nshort\n")
        results["a secret too short to search for"] = run()
        (root / "secrets").write_text(f"{secret}\n{access}\n")
        (root / "nothing").write_text("")
        results["a source that recorded nothing"] = quietly([root / "secrets", root / "nothing"], outputs, [log], 2, 2, 2)
    expected = {name: 0 if name == "clean" else 1 for name in results}
    if results != expected:
        print(f"redaction check self-test failed: {results} != {expected}", file=sys.stderr)
        return 1
    print(f"redaction check self-test: passed (a clean run passes; {len(results) - 1} planted faults fail)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--secrets", nargs="+", default=[])
    parser.add_argument("--outputs")
    parser.add_argument("--log", nargs="+", default=[])
    parser.add_argument("--minimum-secrets", type=int, default=200)
    parser.add_argument("--minimum-outputs", type=int, default=100)
    parser.add_argument("--minimum-debug-lines", type=int, default=500)
    parser.add_argument("--minimum-per-file", type=int, default=10)
    parser.add_argument("--self-test", action="store_true")
    arguments = parser.parse_args()
    if arguments.self_test:
        return self_test()
    if not arguments.outputs or not arguments.secrets:
        parser.error("--secrets and --outputs are required")
    return check(
        arguments.secrets, arguments.outputs, arguments.log,
        arguments.minimum_secrets, arguments.minimum_outputs, arguments.minimum_debug_lines,
        arguments.minimum_per_file,
    )


if __name__ == "__main__":
    sys.exit(main())
