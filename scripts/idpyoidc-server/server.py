"""An OpenID provider built from idpyoidc (PyPI, IdentityPython), with its DPoP (RFC 9449) and
pushed authorization request (RFC 9126) add-ons, on 127.0.0.1: a server nobody here wrote, for
the integration tests of DPoP and PAR (Tests/NativeAuthIntegrationTests/IdpyOIDCServerTests.swift).

    server.py STATE_DIR [--without-dpop]
        listens on a free port on 127.0.0.1 and prints `issuer: URL` on stderr; --without-dpop
        leaves DPoP out (idpyoidc 5.0.0 checks a proof's `ath` at its userinfo endpoint as a hex
        digest, not RFC 9449 §4.2's base64url, so a DPoP-bound token cannot reach userinfo)

One public client, `nativeauth-cli`, and one confidential client, `nativeauth-confidential`
(secret CONFIDENTIAL_SECRET), registered for ID tokens signed HS256 with its secret (OIDC Core
§10.1) and userinfo signed RS256 (OIDC Core §5.3.2); both with loopback redirect URIs on any port
(RFC 8252 §7.3); one user, signed in without a page (idpyoidc's NoAuthn). DPoP is checked at the token endpoint, which
then issues `DPoP` tokens whose `cnf.jkt` is the proof's key. Every request is logged to
STATE_DIR/requests.log: its method, path, the names of its query parameters, and whether it came
with a DPoP header; idpyoidc's refusals follow, with the exception's text.
"""

import json
import os
import sys
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

from idpyoidc.server import Server
from idpyoidc.server.configure import OPConfiguration
from idpyoidc.server.user_authn.authn_context import INTERNETPROTOCOLPASSWORD

CLIENT_ID = "nativeauth-cli"
CONFIDENTIAL_ID = "nativeauth-confidential"
# As long as HS256's hash (RFC 7518 §3.2); a test server's, known to the test.
CONFIDENTIAL_SECRET = "idpyoidc-confidential-client-secret-of-the-tests"


def configuration(issuer, state, dpop=True):
    crypt = {"kwargs": {"keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "password"},
                                              {"type": "OCT", "use": ["enc"], "kid": "salt"}]}, "iterations": 1}}
    authn = ["client_secret_post", "client_secret_basic", "none"]
    return {
        "issuer": issuer,
        "httpc_params": {"verify": True, "timeout": 5},
        "keys": {"uri_path": "jwks.json", "private_path": os.path.join(state, "jwks.json"), "read_only": False,
                 "key_defs": [{"type": "RSA", "use": ["sig"]}, {"type": "EC", "crv": "P-256", "use": ["sig"]}]},
        "add_on": {
            "pkce": {"function": "idpyoidc.server.oauth2.add_on.pkce.add_support",
                     "kwargs": {"essential": True, "code_challenge_method": "S256"}},
        } | ({"dpop": {"function": "idpyoidc.server.oauth2.add_on.dpop.add_support",
                       "kwargs": {"dpop_signing_alg_values_supported": ["ES256"], "dpop_endpoints": ["token"]}}}
             if dpop else {}),
        "token_handler_args": {
            "jwks_def": {"private_path": os.path.join(state, "token_jwks.json"), "read_only": False,
                         "key_defs": [{"type": "oct", "bytes": 24, "use": ["enc"], "kid": "code"}]},
            "code": {"lifetime": 600, "kwargs": {"crypt_conf": crypt}},
            "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken", "kwargs": {"lifetime": 3600}},
            "refresh": {"class": "idpyoidc.server.token.jwt_token.JWTToken", "kwargs": {"lifetime": 86400}},
            "id_token": {"class": "idpyoidc.server.token.id_token.IDToken", "kwargs": {}},
        },
        "endpoint": {
            "provider_config": {"path": ".well-known/openid-configuration",
                                "class": "idpyoidc.server.oidc.provider_config.ProviderConfiguration", "kwargs": {}},
            "authorization": {"path": "authorization", "class": "idpyoidc.server.oidc.authorization.Authorization",
                              "kwargs": {}},
            "pushed_authorization": {"path": "par",
                                     "class": "idpyoidc.server.oauth2.pushed_authorization.PushedAuthorization",
                                     "kwargs": {"client_authn_method": authn}},
            "token": {"path": "token", "class": "idpyoidc.server.oidc.token.Token",
                      "kwargs": {"client_authn_method": authn}},
            "userinfo": {"path": "userinfo", "class": "idpyoidc.server.oidc.userinfo.UserInfo",
                         "kwargs": {"client_authn_method": ["bearer_header"]}},
        },
        "authentication": {"anon": {"acr": INTERNETPROTOCOLPASSWORD,
                                    "class": "idpyoidc.server.user_authn.user.NoAuthn", "kwargs": {"user": "diana"}}},
        "userinfo": {"class": "idpyoidc.server.user_info.UserInfo",
                     "kwargs": {"db": {"diana": {"sub": "diana", "name": "Diana Prince",
                                                 "preferred_username": "diana"}}}},
        "session_params": {"encrypter": crypt},
        "template_dir": "template",
    }


def main():
    state = sys.argv[1]
    dpop = "--without-dpop" not in sys.argv[2:]
    os.makedirs(state, mode=0o700, exist_ok=True)
    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    issuer = "http://127.0.0.1:%d" % httpd.server_address[1]
    server = Server(OPConfiguration(configuration(issuer, state, dpop), base_path=state), cwd=state)
    context = server.context
    # The add-on records the algorithms in the context; the discovery document is built before it.
    if dpop:
        context.provider_info["dpop_signing_alg_values_supported"] = ["ES256"]
    context.cdb[CLIENT_ID] = {
        "client_id": CLIENT_ID,
        "token_endpoint_auth_method": "none",
        "redirect_uris": [],
        "response_types": ["code"],
        "grant_types": ["authorization_code", "refresh_token"],
        "allowed_scopes": ["openid", "profile", "offline_access"],
    }
    context.cdb[CONFIDENTIAL_ID] = {
        "client_id": CONFIDENTIAL_ID,
        "client_secret": CONFIDENTIAL_SECRET,
        "token_endpoint_auth_method": "client_secret_basic",
        "redirect_uris": [],
        "response_types": ["code"],
        "grant_types": ["authorization_code", "refresh_token"],
        "allowed_scopes": ["openid", "profile", "offline_access"],
        "id_token_signed_response_alg": "HS256",
        "userinfo_signed_response_alg": "RS256",
    }
    # idpyoidc signs HS256 with the symmetric keys it holds as the issuer: the client's secret.
    server.keyjar.add_symmetric(issuer, CONFIDENTIAL_SECRET)
    Handler.server_ = server
    Handler.log_path = os.path.join(state, "requests.log")
    print("issuer: " + issuer, file=sys.stderr, flush=True)
    httpd.serve_forever()


class Handler(BaseHTTPRequestHandler):
    server_ = None
    log_path = ""

    def log_message(self, format, *args):
        pass

    def record(self, line):
        with open(self.log_path, "a") as handle:
            handle.write(line + "\n")

    def send(self, status, body, headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.handle_request("GET")

    def do_POST(self):
        self.handle_request("POST")

    def handle_request(self, method):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        server = Handler.server_
        issuer = server.context.issuer
        headers = {name.lower(): value for name, value in self.headers.items()}
        parameters = ",".join(sorted(urllib.parse.parse_qs(url.query).keys()))
        self.record("%s %s query=%s dpop=%s" % (method, url.path, parameters, "dpop" in headers))
        http_info = {"headers": headers, "url": issuer + url.path, "method": method}
        if url.path == "/jwks.json":
            return self.send(200, json.dumps(server.keyjar.export_jwks()), [("Content-Type", "application/json")])
        names = {"/.well-known/openid-configuration": "provider_config", "/authorization": "authorization",
                 "/par": "pushed_authorization", "/token": "token", "/userinfo": "userinfo"}
        name = names.get(url.path)
        if name is None:
            return self.send(404, "not found")
        endpoint = server.get_endpoint(name)
        request = url.query if method == "GET" else body
        if name == "userinfo":
            request = {}
        if name in ("authorization", "pushed_authorization"):
            self.allow_loopback_redirect(urllib.parse.parse_qs(request))
        try:
            parsed = endpoint.parse_request(request, http_info=http_info)
            if hasattr(parsed, "to_dict") and "error" in parsed:
                self.record("refused %s" % parsed.to_dict())
                return self.send(400, json.dumps(parsed.to_dict()), [("Content-Type", "application/json")])
            args = endpoint.process_request(parsed, http_info=http_info)
            self.answer(endpoint, args, parsed)
        except Exception as error:  # idpyoidc raises for refusals (a bad DPoP proof among them)
            self.record("error %s: %s" % (type(error).__name__, error))
            traceback.print_exc(file=sys.stderr)
            self.send(400, json.dumps({"error": "invalid_request", "error_description": str(error)}),
                      [("Content-Type", "application/json")])

    def allow_loopback_redirect(self, query):
        """RFC 8252 §7.3: a loopback redirect URI on any port; idpyoidc matches exactly, so the one
        asked for is registered when it is a loopback /callback."""
        for uri in query.get("redirect_uri", []):
            parts = urllib.parse.urlsplit(uri)
            if parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/callback":
                entry = (uri, {})
                for client_id in (CLIENT_ID, CONFIDENTIAL_ID):
                    registered = Handler.server_.context.cdb[client_id]["redirect_uris"]
                    if entry not in registered:
                        registered.append(entry)

    def answer(self, endpoint, args, request):
        if "http_response" in args:
            # The pushed request's answer (RFC 9126 §2.2).
            return self.send(201, json.dumps(args["http_response"]), [("Content-Type", "application/json")])
        if "error" in args:
            return self.send(400, json.dumps({"error": args["error"], "error_description": args.get(
                "error_description", "")}), [("Content-Type", "application/json")])
        response = endpoint.do_response(request=request, **args)
        headers = list(response.get("http_headers", []))
        if response.get("response_placement") == "url" or endpoint.name == "authorization":
            location = response["response"]
            return self.send(303, "", [("Location", location)])
        status = 400 if "error" in str(response.get("response", ""))[:40] else 200
        self.send(status, response["response"], headers)


if __name__ == "__main__":
    main()
