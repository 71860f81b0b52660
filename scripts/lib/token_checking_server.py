#!/usr/bin/env python3
"""Servers on 127.0.0.1 that accept only access tokens an authorization server vouches for, for
the adapter tests (kubectl's exec credential plugin, git's credential helper).

Each request's token (`Authorization: Bearer T`, or Basic with T as the password) is checked by
asking RESOURCE_URL (the sandbox's protected resource) with it: 200 means valid. Nothing else is
trusted, and no token is ever printed or logged.

    token_checking_server.py kube RESOURCE_URL CERTIFICATE KEY
        a tiny Kubernetes API server over HTTPS (kubectl sends no credentials over plain HTTP): GET /api
        answers an APIVersions object; 401 without a valid token.
    token_checking_server.py git RESOURCE_URL REPOSITORIES
        git's smart HTTP (git http-backend, as CGI) for the bare repositories under REPOSITORIES;
        401 with a Basic challenge without a valid token.

The first line on stderr is `port: N`; then one line per request on stderr:
`METHOD PATH STATUS SCHEME` (SCHEME: basic, bearer or none).
"""

import base64
import http.server
import os
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

MODE, RESOURCE = sys.argv[1], sys.argv[2]
REPOSITORIES = sys.argv[3] if MODE == "git" else None
CERTIFICATE = sys.argv[3:5] if MODE == "kube" else None


def token_of(header):
    """The token in an Authorization value, and its scheme."""
    if not header:
        return None, "none"
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip(), "bearer"
    if scheme.lower() == "basic":
        try:
            _, _, password = base64.b64decode(value.strip()).decode().partition(":")
        except Exception:
            return None, "basic"
        return password, "basic"
    return None, scheme.lower()


def valid(token):
    if not token:
        return False
    request = urllib.request.Request(RESOURCE, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *arguments):
        pass  # one line per request, below, without headers

    def note(self, status, scheme):
        print(f"{self.command} {self.path.split('?')[0]} {status} {scheme}", file=sys.stderr, flush=True)

    def refuse(self, scheme):
        self.note(401, scheme)
        body = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}\n'
        self.send_response(401)
        if MODE == "git":
            self.send_header("WWW-Authenticate", 'Basic realm="nativeauth test git"')
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        token, scheme = token_of(self.headers.get("Authorization"))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if not valid(token):
            return self.refuse(scheme)
        if MODE == "kube":
            return self.kube(scheme)
        return self.git(body, scheme)

    do_GET = handle_any
    do_POST = handle_any

    def kube(self, scheme):
        if self.path.split("?")[0] != "/api":
            self.note(404, scheme)
            self.send_error(404)
            return
        body = (b'{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":'
                b'[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}\n')
        self.note(200, scheme)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def git(self, body, scheme):
        path, _, query = self.path.partition("?")
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": REPOSITORIES,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "tester",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        result = subprocess.run(
            ["git", "http-backend"], input=body, env=environment, capture_output=True, check=False)
        head, _, content = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, content = result.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode(errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.note(status, scheme)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


# A test runner may start this with SIGTERM ignored (an inherited disposition): stopping must work.
signal.signal(signal.SIGTERM, signal.SIG_DFL)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if CERTIFICATE:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*CERTIFICATE)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"port: {server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
