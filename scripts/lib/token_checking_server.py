#!/usr/bin/env python3
"""Servers on 127.0.0.1 that accept only the tokens their real counterpart would, for the adapter
tests (kubectl's exec credential plugin, git's credential helper).

    token_checking_server.py kube ISSUER CLIENT_ID CERTIFICATE KEY [USERNAME_CLAIM]
        a tiny Kubernetes API server over HTTPS (kubectl sends no credentials over plain HTTP):
        GET /api answers an APIVersions object to a bearer token that its OIDC authenticator takes,
        401 otherwise. Written from the Kubernetes documentation ("Authenticating", OpenID Connect
        Tokens; the flags --oidc-issuer-url, --oidc-client-id, --oidc-username-claim): the token is
        a JWT signed with a key of the issuer's JWKS (found through its discovery document, with
        RS256/384/512, PS256/384/512 or ES256/384/512), its `iss` is the issuer URL exactly, its
        `aud` holds the client id, it has not expired, and it has the username claim (default
        `sub`; a claim other than `email` is prefixed with the issuer URL and `#`, and `email`
        needs `email_verified` true). Nothing else is trusted.
    token_checking_server.py git RESOURCE_URL REPOSITORIES
        git's smart HTTP (git http-backend, as CGI) for the bare repositories under REPOSITORIES;
        401 with a Basic challenge unless RESOURCE_URL (the sandbox's protected resource) answers
        the token (the password) with 200.
    token_checking_server.py aws-sts ISSUER CLIENT_ID
        (with the project's .venv python, which holds moto) a logging proxy in front of moto's STS,
        started in this process on 127.0.0.1 (moto does not verify web identity tokens): an AssumeRoleWithWebIdentity's WebIdentityToken must pass the
        checks above (as an IAM OIDC identity provider for ISSUER with CLIENT_ID as its audience
        would do them), else STS's own InvalidIdentityToken error comes back; everything else is
        passed on as it is. A request with Accept: application/json gets STS's JSON answer (moto
        5.2.5 gives JSON for the Query protocol's ContentType=JSON parameter, not for the header,
        so the proxy adds the parameter). The credentials moto issues are recorded as secrets.
    token_checking_server.py google-sts ISSUER CLIENT_ID
        an RFC 8693 token endpoint as Google's Security Token Service answers it (POST /v1/token):
        the subject token must be an OIDC token passing the checks above, of the subject token type
        the request names; the answer is an access token (recorded as a secret).

No token is ever printed or logged. The first line on stderr is `port: N`; then one line per
request on stderr: `METHOD PATH STATUS SCHEME`, and for kube `user=NAME` or `refused=WHY`; for
aws-sts and google-sts `ACTION STATUS user=NAME` or `refused=WHY`.
"""

import base64
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

MODE = sys.argv[1]
UPSTREAM = None
if MODE == "kube":
    ISSUER, CLIENT_ID = sys.argv[2], sys.argv[3]
    CERTIFICATE = sys.argv[4:6]
    USERNAME_CLAIM = sys.argv[6] if len(sys.argv) > 6 else "sub"
    RESOURCE = REPOSITORIES = None
elif MODE in ("aws-sts", "google-sts"):
    ISSUER, CLIENT_ID = sys.argv[2], sys.argv[3]
    if MODE == "aws-sts":
        from moto.server import ThreadedMotoServer

        MOTO = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        MOTO.start()
        UPSTREAM = "http://%s:%d" % MOTO.get_host_and_port()
    USERNAME_CLAIM, CERTIFICATE, RESOURCE, REPOSITORIES = "sub", None, None, None
else:
    RESOURCE, REPOSITORIES, CERTIFICATE = sys.argv[2], sys.argv[3], None


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


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class OIDCAuthenticator:
    """The API server's OIDC authenticator: the issuer's keys, fetched through its discovery
    document, refetched once for an unknown key id."""

    def __init__(self):
        self.keys = {}
        self.lock = threading.Lock()

    def fetch(self):
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        with urllib.request.urlopen(ISSUER.rstrip("/") + "/.well-known/openid-configuration", timeout=10) as r:
            jwks_uri = json.load(r)["jwks_uri"]
        with urllib.request.urlopen(jwks_uri, timeout=10) as r:
            document = json.load(r)
        keys = {}
        for jwk in document.get("keys", []):
            number = lambda name: int.from_bytes(b64decode(jwk[name]), "big")
            if jwk.get("kty") == "RSA":
                keys[jwk.get("kid")] = rsa.RSAPublicNumbers(number("e"), number("n")).public_key()
            elif jwk.get("kty") == "EC":
                curve = {"P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1()}[jwk["crv"]]
                keys[jwk.get("kid")] = ec.EllipticCurvePublicNumbers(number("x"), number("y"), curve).public_key()
        with self.lock:
            self.keys = keys

    def key(self, kid):
        with self.lock:
            found = self.keys.get(kid)
        if found is None:
            self.fetch()
            with self.lock:
                found = self.keys.get(kid)
        return found

    def username(self, token):
        """The user the token names, or raises ValueError saying why it is refused."""
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

        parts = token.split(".")
        if len(parts) != 3:
            raise ValueError("not-a-jwt")
        try:
            header, claims = json.loads(b64decode(parts[0])), json.loads(b64decode(parts[1]))
            signature = b64decode(parts[2])
        except Exception:
            raise ValueError("not-a-jwt")
        algorithm = header.get("alg", "")
        digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}.get(algorithm[2:])
        if algorithm[:2] not in ("RS", "PS", "ES") or digest is None:
            raise ValueError("algorithm")
        key = self.key(header.get("kid"))
        if key is None:
            raise ValueError("unknown-key")
        signed = (parts[0] + "." + parts[1]).encode()
        try:
            if algorithm.startswith("ES"):
                half = len(signature) // 2
                der = encode_dss_signature(
                    int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big"))
                key.verify(der, signed, ec.ECDSA(digest))
            elif algorithm.startswith("PS"):
                key.verify(signature, signed, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
            else:
                key.verify(signature, signed, padding.PKCS1v15(), digest)
        except (InvalidSignature, AttributeError, TypeError, ValueError):
            raise ValueError("signature")
        if claims.get("iss") != ISSUER:
            raise ValueError("issuer")
        audience = claims.get("aud")
        if CLIENT_ID not in (audience if isinstance(audience, list) else [audience]):
            raise ValueError("audience")
        if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] <= time.time():
            raise ValueError("expired")
        name = claims.get(USERNAME_CLAIM)
        if not isinstance(name, str) or not name:
            raise ValueError("no-username-claim")
        if USERNAME_CLAIM == "email":
            if claims.get("email_verified") is not True:
                raise ValueError("email-not-verified")
            return name
        return ISSUER + "#" + name


AUTHENTICATOR = OIDCAuthenticator() if MODE in ("kube", "aws-sts", "google-sts") else None


def record_secrets(*values):
    """Appends what this server handed out to the redaction check's list (NATIVEAUTH_TEST_SECRETS_FILE)."""
    path = os.environ.get("NATIVEAUTH_TEST_SECRETS_FILE")
    if path:
        with open(path, "a") as file:
            file.write("".join(value + "\n" for value in values if value))


def sts_error(code, message, status=400, wants_json=False):
    """STS's error document (the Query protocol's), as AWS answers it: JSON when the request asked
    for JSON (Accept: application/json), else XML."""
    from xml.sax.saxutils import escape

    if wants_json:
        document = {"Error": {"Type": "Sender", "Code": code, "Message": message},
                    "RequestId": "c6104cbe-af31-11e0-8154-cbc7ccf896c7"}
        return status, json.dumps(document).encode(), "application/json"
    return status, (
        '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
        f"<Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
        "<RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ErrorResponse>"
    ).encode(), "text/xml"


def checked_user(token):
    """The user a token names, and the refusal (None when it passes)."""
    try:
        return AUTHENTICATOR.username(token or ""), None
    except ValueError as why:
        return None, str(why)
    except Exception:
        return None, "keys-unavailable"


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

    def handle(self):
        # A client that hangs up mid-answer (kubectl ends a check it no longer needs) is not an error.
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass

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
        if MODE == "aws-sts":
            return self.answer(*self.aws(body))
        if MODE == "google-sts":
            return self.answer(*self.google(body))
        if MODE == "kube":
            if scheme != "bearer" or not token:
                return self.refuse(scheme)
            try:
                user = AUTHENTICATOR.username(token)
            except ValueError as why:
                return self.refuse(f"{scheme} refused={why}")
            except Exception:
                return self.refuse(f"{scheme} refused=keys-unavailable")
            return self.kube(f"{scheme} user={user}")
        if not valid(token):
            return self.refuse(scheme)
        return self.git(body, scheme)

    do_GET = handle_any
    do_POST = handle_any

    def kube(self, scheme):
        # kubectl may also ask /version (its version-skew check) on its own schedule: answer it as
        # an API server does, so that what it sends there is validated and logged like the rest.
        path = self.path.split("?")[0]
        if path == "/api":
            body = (b'{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":'
                    b'[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}\n')
        elif path == "/version":
            body = b'{"major":"1","minor":"30","gitVersion":"v1.30.0","platform":"linux/amd64"}\n'
        else:
            self.note(404, scheme)
            self.send_error(404)
            return
        self.note(200, scheme)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def answer(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_line(self, action, status, who):
        print(f"{action} {status} {who}", file=sys.stderr, flush=True)

    def aws(self, body):
        import urllib.parse
        import xml.etree.ElementTree as ElementTree

        form = dict(urllib.parse.parse_qsl(body.decode(errors="replace")))
        action = form.get("Action") or "signed-request"
        # STS answers JSON to Accept: application/json; moto keys its JSON answer on the Query
        # protocol's ContentType=JSON parameter instead, which is added for it.
        wants_json = "application/json" in (self.headers.get("Accept") or "")
        if action == "AssumeRoleWithWebIdentity":
            user, refused = checked_user(form.get("WebIdentityToken"))
            if refused:
                self.log_line(action, 400, f"refused={refused}")
                return sts_error("InvalidIdentityToken", f"Couldn't verify the token ({refused}).", wants_json=wants_json)
        if wants_json and "ContentType" not in form:
            body = body + b"&ContentType=JSON"
        request = urllib.request.Request(UPSTREAM + self.path, data=body or None, method=self.command)
        for name in ("Content-Type", "Authorization", "X-Amz-Date", "X-Amz-Security-Token", "User-Agent"):
            if self.headers.get(name):
                request.add_header(name, self.headers[name])
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, answer, kind = response.status, response.read(), response.headers.get("Content-Type", "text/xml")
        except urllib.error.HTTPError as error:
            status, answer, kind = error.code, error.read(), error.headers.get("Content-Type", "text/xml")
        if action == "AssumeRoleWithWebIdentity" and status == 200:
            if wants_json:
                issued = json.loads(answer)["AssumeRoleWithWebIdentityResponse"]["AssumeRoleWithWebIdentityResult"]
                secrets = [issued["Credentials"].get(name) for name in ("SecretAccessKey", "SessionToken")]
            else:
                root = ElementTree.fromstring(answer)
                secrets = [e.text for e in root.iter() if e.tag.split("}")[-1] in ("SecretAccessKey", "SessionToken")]
            record_secrets(*secrets)
            self.log_line(action, status, f"user={user} role={form.get('RoleArn')} duration={form.get('DurationSeconds')}")
        else:
            self.log_line(action, status, "passed-on")
        return status, answer, kind

    def google(self, body):
        import urllib.parse
        import secrets as random

        form = dict(urllib.parse.parse_qsl(body.decode(errors="replace")))
        def refuse(error, description, why):
            self.log_line("token-exchange", 400, f"refused={why}")
            return 400, json.dumps({"error": error, "error_description": description}).encode(), "application/json"
        if self.command != "POST" or self.path.split("?")[0] != "/v1/token":
            return refuse("invalid_request", "POST /v1/token only", "path")
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
            return refuse("unsupported_grant_type", "token exchange only", "grant-type")
        kind = form.get("subject_token_type")
        if kind not in ("urn:ietf:params:oauth:token-type:id_token", "urn:ietf:params:oauth:token-type:jwt"):
            return refuse("invalid_request", "an OIDC subject token only", "subject-token-type")
        if form.get("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token":
            return refuse("invalid_request", "requested_token_type must be an access token", "requested-type")
        user, refused = checked_user(form.get("subject_token"))
        if refused:
            return refuse("invalid_grant", f"The subject token could not be verified ({refused}).", refused)
        token = "ya29.sandbox-" + random.token_urlsafe(32)
        record_secrets(token)
        self.log_line("token-exchange", 200, f"user={user} audience={form.get('audience')} scope={form.get('scope')}")
        answer = {
            "access_token": token, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "token_type": "Bearer", "expires_in": 3600,
        }
        return 200, json.dumps(answer).encode(), "application/json"

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
