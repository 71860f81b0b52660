#!/usr/bin/env python3
"""The Notes API of Samples/NotesClient/openapi.yaml on 127.0.0.1, as a resource server of the
project's real authorization server (django-oauth-toolkit, scripts/test-server): written from
RFC 6750 (bearer tokens and their `WWW-Authenticate` challenges) and RFC 7662 (introspection).

    notes_api.py ENVIRONMENT_JSON

ENVIRONMENT_JSON is the file `scripts/test-server env` names: every request's bearer token is
introspected at the server's `/o/introspect/`, the service client authenticating with HTTP Basic
(the way django-oauth-toolkit lets a resource server ask), and only an `active` answer is taken.

    GET  /profile  200 {"sub": the token's user, "scope": its scopes}
    POST /notes    201 {"id", "text", "owner"} for a JSON body {"text": …}; the token needs the
                   scope `notes:write`, else 403 `insufficient_scope` naming it (RFC 6750 §3.1)

No token is printed or logged. The first line on stderr is `port: N`; then one line per request:
`METHOD PATH STATUS token=T body=B`, T and B the first 12 hex digits of the SHA-256 of the token
and of the body (so tests can count tokens and compare bodies without seeing either).
"""

import base64
import hashlib
import http.server
import json
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

with open(sys.argv[1]) as f:
    ENVIRONMENT = json.load(f)
INTROSPECTION = ENVIRONMENT["issuer"].rstrip("/") + "/introspect/"
BASIC = base64.b64encode(
    f"{ENVIRONMENT['service_client_id']}:{ENVIRONMENT['service_client_secret']}".encode()
).decode()
NOTES = []
LOCK = threading.Lock()


def digest(data):
    return hashlib.sha256(data).hexdigest()[:12] if data else "-"


def introspected(token):
    """The introspection answer for `token` when it is active, else None."""
    request = urllib.request.Request(
        INTROSPECTION,
        data=urllib.parse.urlencode({"token": token}).encode(),
        headers={"Authorization": "Basic " + BASIC, "Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        document = json.load(answer)
    return document if document.get("active") is True else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def answer(self, status, document=None, challenge=None, token=b"", body=b""):
        print(
            f"{self.command} {self.path.split('?')[0]} {status} token={digest(token)} body={digest(body)}",
            file=sys.stderr,
            flush=True,
        )
        data = json.dumps(document).encode() if document is not None else b""
        self.send_response(status)
        if challenge:
            self.send_header("WWW-Authenticate", challenge)
        if document is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        route = {("GET", "/profile"), ("POST", "/notes")}
        if (self.command, path) not in route:
            return self.answer(404, {"error": "not_found"}, body=body)
        scheme, _, value = (self.headers.get("Authorization") or "").partition(" ")
        token = value.strip().encode()
        if scheme.lower() != "bearer" or not token:
            return self.answer(401, challenge='Bearer realm="notes"', body=body)
        try:
            grant = introspected(token.decode())
        except (urllib.error.URLError, ValueError) as error:
            print(f"introspection failed: {type(error).__name__}", file=sys.stderr, flush=True)
            return self.answer(503, {"error": "introspection_failed"}, token=token, body=body)
        if grant is None:
            return self.answer(
                401,
                {"error": "invalid_token"},
                challenge='Bearer realm="notes", error="invalid_token", error_description="the token is not active"',
                token=token,
                body=body,
            )
        scopes = (grant.get("scope") or "").split()
        owner = grant.get("username") or grant.get("sub") or ""
        if path == "/profile":
            return self.answer(200, {"sub": owner, "scope": " ".join(scopes)}, token=token, body=body)
        if "notes:write" not in scopes:
            return self.answer(
                403,
                {"error": "insufficient_scope"},
                challenge='Bearer realm="notes", error="insufficient_scope", scope="notes:write"',
                token=token,
                body=body,
            )
        try:
            text = json.loads(body)["text"]
            assert isinstance(text, str)
        except Exception:
            return self.answer(400, {"error": "invalid_request"}, token=token, body=body)
        with LOCK:
            NOTES.append(text)
            number = len(NOTES)
        return self.answer(201, {"id": number, "text": text, "owner": owner}, token=token, body=body)

    do_GET = do_POST = handle_any


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"port: {server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
