#!/usr/bin/env python3
"""A second real authorization server for the tests: Authlib's OAuth 2.0 server (PyPI, nobody here
wrote it) on Python's own WSGI server, on 127.0.0.1.

It serves RFC 8414 metadata and a token endpoint with:
  - client credentials (RFC 6749 §4.4) for a client that authenticates with `client_secret_jwt`
    and one with `private_key_jwt` (RFC 7523 §2.2: Authlib's JWTBearerClientAssertion, which
    checks the signature, `aud` = the token endpoint, `exp`, and refuses a replayed `jti`);
  - the JWT bearer grant (RFC 7523 §2.1: Authlib's JWTBearerGrant) for assertions signed by a
    trusted issuer's key;
  - dynamic client registration (RFC 7591: Authlib's ClientRegistrationEndpoint, which validates
    the client metadata against this metadata) for callers with the initial access token; a client
    named "short-lived" gets a secret that expires in 10 minutes (`client_secret_expires_at`).

Usage: server.py STATE_DIR PORT. Writes STATE_DIR/authlib.json (issuer, client ids, secrets and
the paths of the private keys, which it writes 0600), records each token it issues in
STATE_DIR/issued-secrets (for the redaction check), and serves until killed.
"""
import json
import os
import secrets
import sys
import threading
from socketserver import ThreadingMixIn
from urllib.parse import parse_qsl
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

# Plain HTTP is for loopback only: the server binds 127.0.0.1.
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

from authlib.jose import JsonWebKey  # noqa: E402
from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, grants  # noqa: E402
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload, JsonPayload, JsonRequest, OAuth2Request  # noqa: E402
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # noqa: E402
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion, JWTBearerGrant  # noqa: E402
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

state_dir, port = sys.argv[1], int(sys.argv[2])
issuer = f"http://127.0.0.1:{port}"
token_endpoint = issuer + "/token"
lock = threading.Lock()


def write_private(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def key_pair(name):
    """A new P-256 key: its private PEM written to STATE_DIR/NAME.pem (0600), its public JWK returned."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path = os.path.join(state_dir, name + ".pem")
    write_private(path, pem)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return path, JsonWebKey.import_key(public, {"kty": "EC"})


class Client(ClientMixin):
    def __init__(self, client_id, method, grant_types, secret=None, key=None):
        self.client_id, self.method, self.grant_types = client_id, method, grant_types
        self.client_secret, self.key = secret, key

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return scope

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return self.client_secret is not None and secrets.compare_digest(self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        # Authlib names both signed methods "client_assertion_jwt"; which key verifies says which.
        return method == "client_assertion_jwt" and self.method in ("client_secret_jwt", "private_key_jwt") \
            or method == self.method

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


secret_jwt_secret = secrets.token_urlsafe(48)
key_path, key_jwk = key_pair("private-key-jwt-client")
issuer_key_path, issuer_jwk = key_pair("assertion-issuer")
clients = {
    "secret-jwt-client": Client("secret-jwt-client", "client_secret_jwt", ["client_credentials"], secret=secret_jwt_secret),
    "private-key-jwt-client": Client("private-key-jwt-client", "private_key_jwt", ["client_credentials"], key=key_jwk),
    # The issuer of JWT bearer assertions (RFC 7523 §2.1: Authlib resolves the client from `iss`).
    "assertion-issuer": Client("assertion-issuer", "none", [JWTBearerGrant.GRANT_TYPE], key=issuer_jwk),
}
used_jtis = set()
issued = open(os.path.join(state_dir, "issued-secrets"), "a", buffering=1)


class ClientCredentials(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_assertion_jwt"]


class Assertion(JWTBearerClientAssertion):
    def validate_jti(self, claims, jti):
        with lock:
            key = f"{claims['sub']} {jti}"
            if key in used_jtis:
                return False
            used_jtis.add(key)
            return True

    def resolve_client_public_key(self, client, headers):
        # HS256 with the secret (client_secret_jwt) or the registered public key (private_key_jwt).
        return client.client_secret if headers.get("alg", "").startswith("HS") else client.key


class Bearer(JWTBearerGrant):
    def resolve_issuer_client(self, issuer_):
        return clients.get(issuer_)

    def resolve_client_key(self, client, headers, payload):
        return client.key

    def authenticate_user(self, subject):
        return {"sub": subject}

    def has_granted_permission(self, client, user):
        return True


registration_token = secrets.token_urlsafe(32)


class Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, request):
        header = request.headers.get("Authorization", "")
        given = header[7:] if header.lower().startswith("bearer ") else ""
        return given if given and secrets.compare_digest(given, registration_token) else None

    def generate_client_info(self, request):
        info = super().generate_client_info(request)
        if request.payload.data.get("client_name") == "short-lived":
            info["client_secret_expires_at"] = info["client_id_issued_at"] + 600
        return info

    def get_server_metadata(self):
        return metadata

    def save_client(self, client_info, client_metadata, request):
        client = Client(
            client_info["client_id"], client_metadata.get("token_endpoint_auth_method", "client_secret_basic"),
            client_metadata.get("grant_types", []), secret=client_info["client_secret"])
        with lock:
            clients[client.client_id] = client
            registrations.append(client_metadata.get("client_name", ""))
        issued.write(client_info["client_secret"] + "\n")
        return client


registrations = []


class Json(JsonPayload):
    def __init__(self, data):
        self._data = data

    @property
    def data(self):
        return self._data


class Server(AuthorizationServer):
    def query_client(self, client_id):
        return clients.get(client_id)

    def save_token(self, token, request):
        issued.write(token["access_token"] + "\n")

    def send_signal(self, name, *args, **kwargs):
        pass

    def create_oauth2_request(self, request):
        environ = request
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length).decode() if length else ""
        headers = {key[5:].replace("_", "-").title(): value for key, value in environ.items() if key.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        oauth = OAuth2Request(environ["REQUEST_METHOD"], issuer + environ.get("PATH_INFO", ""), headers=headers)
        oauth.payload = BasicOAuth2Payload(dict(parse_qsl(body)))
        oauth.form = oauth.payload.data
        return oauth

    def create_json_request(self, request):
        environ = request
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length).decode() if length else ""
        headers = {key[5:].replace("_", "-").title(): value for key, value in environ.items() if key.startswith("HTTP_")}
        json_request = JsonRequest(environ["REQUEST_METHOD"], issuer + environ.get("PATH_INFO", ""), headers=headers)
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            data = {}
        json_request.payload = Json(data if isinstance(data, dict) else {})
        return json_request

    def handle_response(self, status, body, headers):
        return status, body, headers


OAuth2Request.form = None  # settable: the framework-free request keeps its form here
server = Server(scopes_supported=["api", "read"])
server.register_token_generator("default", BearerTokenGenerator(lambda **_: secrets.token_urlsafe(32)))
server.register_client_auth_method(Assertion.CLIENT_AUTH_METHOD, Assertion(token_endpoint))
server.register_grant(ClientCredentials)
server.register_grant(Bearer)
server.register_endpoint(Registration)

metadata = {
    "issuer": issuer,
    "authorization_endpoint": issuer + "/authorize",
    "token_endpoint": token_endpoint,
    "registration_endpoint": issuer + "/register",
    "grant_types_supported": ["client_credentials", JWTBearerGrant.GRANT_TYPE],
    "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_jwt", "private_key_jwt"],
    "token_endpoint_auth_signing_alg_values_supported": ["HS256", "ES256"],
    "response_types_supported": ["code"],
    "scopes_supported": ["api", "read"],
}


def app(environ, start_response):
    path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
    if method == "GET" and path == "/.well-known/oauth-authorization-server":
        status, body, headers = 200, metadata, [("Content-Type", "application/json")]
    elif method == "POST" and path == "/token":
        status, body, headers = server.create_token_response(environ)
        headers = list(headers)
    elif method == "POST" and path == "/register":
        status, body, headers = server.create_endpoint_response("client_registration", environ)
        headers = list(headers)
    elif method == "GET" and path == "/registrations":
        # For the tests: the names of the clients registered so far (no id, no secret).
        with lock:
            status, body, headers = 200, {"client_names": registrations}, [("Content-Type", "application/json")]
    else:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]
    data = json.dumps(body).encode()
    reason = {200: "OK", 201: "Created"}.get(status, "Error")
    start_response(f"{status} {reason}", headers + [("Content-Length", str(len(data)))])
    return [data]


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write("authlib-server: " + (format % args) + "\n")


httpd = make_server("127.0.0.1", port, app, server_class=ThreadingServer, handler_class=QuietHandler)
with open(os.path.join(state_dir, "authlib.json.tmp"), "w") as handle:
    json.dump({
        "issuer": issuer,
        "secret_jwt_client_id": "secret-jwt-client", "secret_jwt_client_secret": secret_jwt_secret,
        "private_key_jwt_client_id": "private-key-jwt-client", "private_key_jwt_key": key_path,
        "assertion_issuer": "assertion-issuer", "assertion_issuer_key": issuer_key_path,
        "token_endpoint": token_endpoint, "registration_token": registration_token,
    }, handle)
os.chmod(os.path.join(state_dir, "authlib.json.tmp"), 0o600)
os.replace(os.path.join(state_dir, "authlib.json.tmp"), os.path.join(state_dir, "authlib.json"))
issued.write(secret_jwt_secret + "\n")
issued.write(registration_token + "\n")
httpd.serve_forever()
