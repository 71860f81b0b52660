#!/usr/bin/env python3
"""The MCP client-authorization scenarios of the 2026-07-28 specification, served on 127.0.0.1, and
a run of one client through each of them.

    .venv/bin/python scripts/mcp-conformance/fixture.py --client nativeauth --cli PATH [--scenario NAME]...
    .venv/bin/python scripts/mcp-conformance/fixture.py --client sdk [--scenario NAME]...

The upstream suite (modelcontextprotocol/conformance, `requirements/2026-07-28.yaml`, the `auth/`
scenarios of its `client` list) is a Node program, which this machine cannot install; this is the
project's own fixture, written from its scenario sources: the same names, the same check ids, the
same servers' behaviour (an authorization server per scenario with the options each sets, and an
MCP server behind a bearer check with protected resource metadata). The MCP endpoint itself is the
official MCP Python SDK's (PyPI `mcp`), stateless, so that each of NativeAuth's processes (one per
request) and the SDK's own client are answered as that SDK answers.

Each scenario starts its servers on fresh 127.0.0.1 ports, named `http://localhost:PORT` as the
upstream suite names them, runs the client (`--client nativeauth`: `api URL` three times, for
initialize, tools/list and tools/call, in a store of its own, with a browser that approves at once
and `--step-up`; `--client sdk`: the SDK's `Client` with its `OAuthClientProvider`), and judges the
checks as the suite does: a FAILURE fails the scenario, a WARNING is reported, a missing expected
check is a FAILURE. One line per scenario on standard output, `SCENARIO pass|fail CHECK=STATUS ...`;
the exit status is 1 when any scenario failed.
"""

import argparse
import logging
import asyncio
import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# -- The servers -------------------------------------------------------------------------------


class Checks:
    def __init__(self):
        self.items = []
        self.lock = threading.Lock()

    def add(self, id, status, **details):
        with self.lock:
            self.items.append({"id": id, "status": status, "details": details})

    def ids(self):
        with self.lock:
            return [item["id"] for item in self.items]


class Tokens:
    """The mock token verifier: the tokens the authorization servers issued, with their scopes."""

    def __init__(self):
        self.scopes = {}

    def register(self, token, scopes):
        self.scopes[token] = list(scopes)


def listener():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


class Running:
    """An ASGI app served by uvicorn in a thread of its own, on a socket bound already."""

    def __init__(self, app, sock):
        self.sock = sock
        self.port = sock.getsockname()[1]
        self.url = f"http://localhost:{self.port}"
        config = uvicorn.Config(app, log_level="error", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)

    def start(self):
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                return
            time.sleep(0.02)
        raise RuntimeError("a fixture server did not start")

    def stop(self):
        self.server.should_exit = True
        self.thread.join(5)


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorization_server(checks, tokens, base, options):
    """createAuthServer: metadata, /authorize, /token, /register under the route prefix."""
    prefix = options.get("prefix", "")
    metadata_path = options.get("metadata_path", "/.well-known/oauth-authorization-server")
    state = {"scopes": [], "challenge": None}
    hooks = options.get("hooks", {})

    async def metadata(request):
        checks.add("authorization-server-metadata", "SUCCESS", path=request.url.path)
        issuer = base() + prefix
        document = {
            "issuer": options.get("issuer_override", issuer),
            "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": options.get("auth_methods", ["none"]),
        }
        if not options.get("no_registration"):
            document["registration_endpoint"] = issuer + "/register"
        if options.get("pkce", ["S256"]) is not None:
            document["code_challenge_methods_supported"] = options.get("pkce", ["S256"])
        if options.get("iss_supported", True) is not None:
            document["authorization_response_iss_parameter_supported"] = options.get("iss_supported", True)
        if "scopes_supported" in options:
            document["scopes_supported"] = options["scopes_supported"]
        if options.get("cimd"):
            document["client_id_metadata_document_supported"] = True
        if "openid-configuration" in metadata_path:
            document["jwks_uri"] = base() + "/.well-known/jwks.json"
            document["subject_types_supported"] = ["public"]
            document["id_token_signing_alg_values_supported"] = ["RS256"]
        return JSONResponse(document)

    async def authorize(request):
        query = dict(request.query_params)
        checks.add("authorization-request", "SUCCESS")
        challenge, method = query.get("code_challenge"), query.get("code_challenge_method")
        state["challenge"] = challenge
        checks.add("pkce-code-challenge-sent", "SUCCESS" if challenge else "FAILURE")
        checks.add("pkce-s256-method-used", "SUCCESS" if method == "S256" else "FAILURE")
        scope = query.get("scope")
        state["scopes"] = scope.split(" ") if scope else []
        if "authorize" in hooks:
            hooks["authorize"](query)
        redirect = urllib.parse.urlsplit(query["redirect_uri"])
        parameters = urllib.parse.parse_qsl(redirect.query) + [("code", "test-auth-code")]
        if "state" in query:
            parameters.append(("state", query["state"]))
        iss = options.get("iss_in_redirect", "correct")
        issuer = options.get("issuer_override", base() + prefix)
        if iss == "correct":
            parameters.append(("iss", issuer))
        elif iss == "wrong":
            parameters.append(("iss", "https://evil.example.com"))
        elif iss == "normalized":
            parameters.append(("iss", issuer + "/"))
        location = urllib.parse.urlunsplit(redirect._replace(query=urllib.parse.urlencode(parameters)))
        return RedirectResponse(location, status_code=302)

    async def token(request):
        form = dict(await request.form())
        grant = form.get("grant_type")
        checks.add("token-request", "SUCCESS", grant_type=grant)
        if grant == "authorization_code":
            verifier = form.get("code_verifier")
            checks.add("pkce-code-verifier-sent", "SUCCESS" if verifier else "FAILURE")
            matches = bool(verifier and state["challenge"] and s256(verifier) == state["challenge"])
            checks.add("pkce-verifier-matches-challenge", "SUCCESS" if matches else "FAILURE")
        issued = f"test-token-{time.time_ns()}"
        scopes = state["scopes"]
        if "token" in hooks:
            answer = hooks["token"](form, request.headers.get("authorization"))
            if "error" in answer:
                return JSONResponse({"error": answer["error"]}, status_code=answer.get("status", 400))
            issued, scopes = answer.get("token", issued), answer.get("scopes", scopes)
        tokens.register(issued, scopes)
        body = {"access_token": issued, "token_type": "Bearer", "expires_in": 3600}
        if scopes:
            body["scope"] = " ".join(scopes)
        return JSONResponse(body)

    async def register(request):
        body = await request.json()
        client = {"client_id": "test-client-id", "client_secret": "test-client-secret"}
        if "register" in hooks:
            client = hooks["register"](body)
        checks.add("client-registration", "SUCCESS", client_name=body.get("client_name"))
        answer = {
            "client_id": client["client_id"],
            "client_name": body.get("client_name", "test-client"),
            "redirect_uris": body.get("redirect_uris", []),
        }
        if client.get("client_secret"):
            answer["client_secret"] = client["client_secret"]
        if client.get("method"):
            answer["token_endpoint_auth_method"] = client["method"]
        return JSONResponse(answer, status_code=201)

    routes = [
        Route(metadata_path, metadata),
        Route(prefix + "/authorize", authorize),
        Route(prefix + "/token", token, methods=["POST"]),
        Route(prefix + "/register", register, methods=["POST"]),
    ]
    if prefix:

        async def wrong_path(request):
            checks.add("authorization-server-metadata-wrong-path", "FAILURE", path=request.url.path)
            return Response(status_code=404)

        routes.append(Route("/.well-known/oauth-authorization-server", wrong_path))
    return Starlette(routes=routes)


def mcp_app():
    """The official SDK's MCP server, stateless, answering JSON: one tool."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("auth-prm-pathbased-server")

    @server.tool(name="test-tool")
    def test_tool() -> str:
        """The scenarios' tool."""
        return "test"

    return server.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")


class ResourceServer:
    """createServer: protected resource metadata and /mcp behind a bearer check (or a scenario's)."""

    def __init__(self, checks, tokens, base, authorization_server, options):
        self.checks, self.tokens, self.base, self.options = checks, tokens, base, options
        self.authorization_server = authorization_server
        self.inner = mcp_app()
        self.prm_path = options.get("prm_path", "/.well-known/oauth-protected-resource/mcp")

    def resource(self):
        if "resource_override" in self.options:
            return self.options["resource_override"]
        return self.base() if self.prm_path == "/.well-known/oauth-protected-resource" else self.base() + "/mcp"

    def challenge(self, status, error, scope=None):
        parts = [f'error="{error}"']
        if scope:
            parts.append(f'scope="{scope}"')
        if self.options.get("prm_in_challenge", True):
            parts.append(f'resource_metadata="{self.base()}{self.prm_path}"')
        return JSONResponse(
            {"error": error}, status_code=status, headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        path = scope["path"]
        if path == self.prm_path and scope["method"] == "GET":
            resource = self.resource()
            self.checks.add("prm-pathbased-requested", "SUCCESS", path=path)
            document = {"resource": resource, "authorization_servers": [self.authorization_server()]}
            if "prm_scopes" in self.options:
                document["scopes_supported"] = self.options["prm_scopes"]
            return await JSONResponse(document)(scope, receive, send)
        if path == "/.well-known/oauth-protected-resource" and self.options.get("trap_root_prm"):
            self.checks.add("prm-priority-order", "FAILURE", path=path)
            return await JSONResponse({"error": "not_found"}, status_code=404)(scope, receive, send)
        if path != "/mcp":
            return await Response(status_code=404)(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            method = json.loads(body or b"{}").get("method") if scope["method"] == "POST" else None
        except (ValueError, AttributeError):
            method = None
        request = Request(scope)
        authorization = request.headers.get("authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        refusal = self.options.get("gate", default_gate)(self, method, token)
        if refusal is not None:
            return await refusal(scope, receive, send)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.inner(scope, replay, send)


def default_gate(rs, method, token):
    """requireBearerAuth: every request needs a known token with the required scopes."""
    required = rs.options.get("required_scopes", [])
    in_challenge = " ".join(required) if rs.options.get("scope_in_challenge") else None
    if token is None or token not in rs.tokens.scopes:
        return rs.challenge(401, "invalid_token", in_challenge)
    if not all(scope in rs.tokens.scopes[token] for scope in required):
        return rs.challenge(403, "insufficient_scope", " ".join(required))
    return None


# -- The scenarios -----------------------------------------------------------------------------


PRE_ID, PRE_SECRET = "pre-registered-client", "pre-registered-secret"
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def basic_auth_id(header):
    if not header or not header.startswith("Basic "):
        return None
    try:
        return base64.b64decode(header[6:]).decode().split(":", 1)[0]
    except ValueError:
        return None


class Scenario:
    """One scenario's servers and the checks it makes; `expected` ids must appear."""

    def __init__(self, name, as_options=None, rs_options=None, expected=(), allow_error=False, context=None):
        self.name, self.as_options, self.rs_options = name, as_options or {}, rs_options or {}
        self.expected, self.allow_error, self.context = list(expected), allow_error, context
        self.checks, self.tokens = Checks(), Tokens()
        self.state = {}

    def setup(self):
        """Scenario-specific hooks, before the servers start."""

    def finish(self):
        """Checks judged after the client ran."""

    def start(self):
        self.setup()
        as_socket, rs_socket = listener(), listener()
        as_base = f"http://localhost:{as_socket.getsockname()[1]}"
        rs_base = f"http://localhost:{rs_socket.getsockname()[1]}"
        self.as_base, self.rs_base = as_base, rs_base
        prefix = self.as_options.get("prefix", "")
        self.servers = [
            Running(authorization_server(self.checks, self.tokens, lambda: as_base, self.as_options), as_socket)
        ]
        self.servers.append(
            Running(
                ResourceServer(
                    self.checks, self.tokens, lambda: rs_base, self.authorization_server_url(as_base + prefix),
                    self.rs_options),
                rs_socket))
        for server in self.servers:
            server.start()
        return rs_base + "/mcp"

    def authorization_server_url(self, url):
        return lambda: url

    def stop(self):
        for server in self.servers:
            server.stop()

    def verdict(self, client_failed):
        self.finish()
        items = list(self.checks.items)
        ids = {item["id"] for item in items}
        for expected in self.expected:
            if expected not in ids:
                items.append({"id": expected, "status": "FAILURE", "details": {"missing": True}})
        failed = any(item["status"] == "FAILURE" for item in items)
        if client_failed and not self.allow_error:
            failed = True
        return not failed, items


def metadata_scenario(name, prm_path, in_challenge, metadata_path, prefix="", trap=False):
    expected = (["prm-pathbased-requested"] if prm_path.endswith("/mcp") else []) + [
        "authorization-server-metadata", "client-registration", "authorization-request", "token-request"]
    return Scenario(
        name, {"metadata_path": metadata_path, "prefix": prefix},
        {"prm_path": prm_path, "prm_in_challenge": in_challenge, "trap_root_prm": trap}, expected)


class ScopeCheck(Scenario):
    """Checks the first authorization request's scope with `judge`."""

    def __init__(self, name, check, judge, rs_options, as_options=None):
        super().__init__(name, as_options, rs_options, [check])
        self.check, self.judge = check, judge

    def setup(self):
        def authorize(query):
            if self.state.get("judged"):
                return
            self.state["judged"] = True
            asked = query.get("scope", "").split()
            self.checks.add(self.check, "SUCCESS" if self.judge(asked) else "WARNING", requested=query.get("scope"))

        self.as_options.setdefault("hooks", {})["authorize"] = authorize


class StepUp(Scenario):
    def __init__(self):
        super().__init__("auth/scope-step-up", {}, {}, ["scope-step-up-initial", "scope-step-up-escalation"])

    def setup(self):
        count = {"n": 0}

        def authorize(query):
            count["n"] += 1
            asked = query.get("scope", "").split()
            if count["n"] == 1:
                self.checks.add("scope-step-up-initial", "SUCCESS" if "mcp:basic" in asked else "WARNING")
            elif count["n"] == 2:
                wanted = all(scope in asked for scope in ["mcp:basic", "mcp:write"])
                self.checks.add("scope-step-up-escalation", "SUCCESS" if wanted else "WARNING")

        def gate(rs, method, token):
            if method == "initialize" or (method or "").startswith("notifications/"):
                return None
            if token is None or token not in rs.tokens.scopes:
                return rs.challenge(401, "invalid_token", "mcp:basic")
            needed = ["mcp:basic", "mcp:write"] if method == "tools/call" else ["mcp:basic"]
            if not all(scope in rs.tokens.scopes[token] for scope in needed):
                return rs.challenge(403, "insufficient_scope", " ".join(needed))
            return None

        self.as_options["hooks"] = {"authorize": authorize}
        self.rs_options.update({"gate": gate, "prm_scopes": ["mcp:basic", "mcp:write"]})


class RetryLimit(Scenario):
    def __init__(self):
        super().__init__("auth/scope-retry-limit", {}, {}, [], allow_error=True)

    def setup(self):
        def gate(rs, method, token):
            if token is None or token not in rs.tokens.scopes:
                return rs.challenge(401, "invalid_token", "mcp:basic")
            return rs.challenge(403, "insufficient_scope", "mcp:basic mcp:never")

        self.as_options["hooks"] = {"authorize": lambda query: self.checks.add("scope-retry-auth-attempt", "INFO")}
        self.rs_options.update({"gate": gate, "prm_scopes": ["mcp:basic"]})

    def finish(self):
        attempts = self.checks.ids().count("scope-retry-auth-attempt")
        status = "FAILURE" if attempts == 0 or attempts > 3 else "SUCCESS"
        self.checks.add("scope-retry-limit", status, attempts=attempts)


class TokenEndpointAuth(Scenario):
    def __init__(self, method, short):
        super().__init__(
            f"auth/token-endpoint-auth-{short}", {"auth_methods": [method]}, {}, ["token-endpoint-auth-method"])
        self.method = method

    def setup(self):
        def token(form, header):
            actual = (
                "client_secret_basic" if (header or "").startswith("Basic ")
                else "client_secret_post" if form.get("client_secret") else "none")
            basic_ok = actual != "client_secret_basic" or basic_auth_id(header) is not None
            good = actual == self.method and basic_ok
            self.checks.add("token-endpoint-auth-method", "SUCCESS" if good else "FAILURE", actual=actual)
            return {"scopes": []}

        def register(body):
            client = {"client_id": f"test-client-{time.time_ns()}", "method": self.method}
            if self.method != "none":
                client["client_secret"] = f"test-secret-{time.time_ns()}"
            return client

        self.as_options["hooks"] = {"token": token, "register": register}


class PreRegistration(Scenario):
    def __init__(self):
        super().__init__(
            "auth/pre-registration", {"no_registration": True, "auth_methods": ["client_secret_basic"]}, {},
            ["pre-registration-auth"], context={"client_id": PRE_ID, "client_secret": PRE_SECRET})

    def setup(self):
        def token(form, header):
            if not (header or "").startswith("Basic "):
                self.checks.add("pre-registration-auth", "FAILURE", reason="no Basic authentication")
                return {"error": "invalid_client", "status": 401}
            decoded = base64.b64decode(header[6:]).decode()
            client_id, _, secret = decoded.partition(":")
            if (urllib.parse.unquote_plus(client_id), urllib.parse.unquote_plus(secret)) != (PRE_ID, PRE_SECRET):
                self.checks.add("pre-registration-auth", "FAILURE", client_id=client_id)
                return {"error": "invalid_client", "status": 401}
            self.checks.add("pre-registration-auth", "SUCCESS")
            return {"scopes": []}

        self.as_options["hooks"] = {"token": token}


class Rejection(Scenario):
    """The client must stop before (or at) a step: `reached` says whether it went past it."""

    def __init__(self, name, check, as_options, rs_options, gate_on):
        super().__init__(name, as_options, rs_options, [], allow_error=True)
        self.check, self.gate_on = check, gate_on

    def setup(self):
        hooks = self.as_options.setdefault("hooks", {})
        hooks["authorize"] = lambda query: self.state.__setitem__("authorized", True)

        def token(form, header):
            self.state["token"] = True
            return {"scopes": []}

        hooks["token"] = token

    def finish(self):
        if self.gate_on == "authorize":
            good = not self.state.get("authorized")
        else:
            good = bool(self.state.get("authorized")) and not self.state.get("token")
        self.checks.add(self.check, "SUCCESS" if good else "FAILURE", state=dict(self.state))


class Proceeds(Scenario):
    """The client must get through to the token endpoint."""

    def __init__(self, name, check, as_options):
        super().__init__(name, as_options, {}, [])
        self.check = check

    def setup(self):
        def token(form, header):
            self.state["token"] = True
            return {"scopes": []}

        self.as_options["hooks"] = {"token": token}

    def finish(self):
        self.checks.add(self.check, "SUCCESS" if self.state.get("token") else "FAILURE")


class OfflineAccess(Scenario):
    def __init__(self, supported):
        name = "auth/offline-access-scope" if supported else "auth/offline-access-not-supported"
        scopes = ["mcp:basic", "offline_access"] if supported else ["mcp:basic", "mcp:read"]
        rs_scopes = ["mcp:basic"] if supported else ["mcp:basic", "mcp:read"]
        check = "sep-2207-offline-access-requested" if supported else "sep-2207-offline-access-not-requested"
        super().__init__(
            name, {"scopes_supported": scopes, "cimd": supported},
            {"prm_scopes": rs_scopes, "required_scopes": rs_scopes}, [check])
        self.supported, self.check = supported, check

    def setup(self):
        def authorize(query):
            asked = query.get("scope", "").split()
            if self.supported:
                self.checks.add(self.check, "SUCCESS" if "offline_access" in asked else "INFO")
            else:
                self.checks.add(self.check, "FAILURE" if "offline_access" in asked else "SUCCESS")

        def register(body):
            if self.supported:
                granted = "refresh_token" in (body.get("grant_types") or [])
                self.checks.add("sep-2207-client-metadata-grant-types", "SUCCESS" if granted else "WARNING")
            return {"client_id": f"test-client-{time.time_ns()}", "method": "none"}

        self.as_options["hooks"] = {"authorize": authorize, "register": register}


class Migration(Scenario):
    """SEP-2352: after one accepted call the metadata names a second authorization server."""

    AS1_ID = "as1-client-id-LEAKED-IF-SEEN-AT-AS2"

    def __init__(self):
        super().__init__("auth/authorization-server-migration", {}, {}, [], allow_error=True)

    def start(self):
        self.state.update(migrated=False, registered=False, reused=False)
        as2_socket = listener()
        as2_base = f"http://localhost:{as2_socket.getsockname()[1]}"

        def as2_register(body):
            self.state["registered"] = True
            return {"client_id": "as2-client-id", "client_secret": "as2-client-secret"}

        def as2_authorize(query):
            if query.get("client_id") == self.AS1_ID:
                self.state["reused"] = True

        def as2_token(form, header):
            if form.get("client_id") == self.AS1_ID or basic_auth_id(header) == self.AS1_ID:
                self.state["reused"] = True
            token = f"test-token-as2-{time.time_ns()}"
            scopes = form.get("scope", "mcp:basic").split() or ["mcp:basic"]
            return {"token": token, "scopes": scopes}

        as2 = Running(
            authorization_server(
                self.checks, self.tokens, lambda: as2_base,
                {"hooks": {"register": as2_register, "authorize": as2_authorize, "token": as2_token}}),
            as2_socket)
        self.as_options["hooks"] = {"register": lambda body: {"client_id": self.AS1_ID, "client_secret": "as1-secret"}}

        def gate(rs, method, token):
            if method == "initialize" or (method or "").startswith("notifications/"):
                return None
            if token is None or token not in rs.tokens.scopes:
                return rs.challenge(401, "invalid_token", "mcp:basic")
            if not self.state["migrated"]:
                self.state["migrated"] = True
                return None
            if not token.startswith("test-token-as2-"):
                return rs.challenge(401, "invalid_token", "mcp:basic")
            return None

        self.rs_options.update({"gate": gate, "scope_in_challenge": True, "required_scopes": ["mcp:basic"]})
        self.as2_base = as2_base
        url = super().start()
        as2.start()
        self.servers.append(as2)
        return url

    def authorization_server_url(self, url):
        return lambda: self.as2_base if self.state["migrated"] else url

    def finish(self):
        self.checks.add("sep-2352-reregister-on-as-change", "SUCCESS" if self.state["registered"] else "FAILURE")
        reused = "FAILURE" if self.state["reused"] else "SUCCESS"
        self.checks.add("sep-2352-no-reuse-on-as-change", reused)
        self.checks.add("sep-2352-no-cross-as-credential-reuse", reused)


class BasicCIMD(Scenario):
    def __init__(self):
        super().__init__("auth/basic-cimd", {"cimd": True}, {}, ["cimd-client-id-used"])

    def setup(self):
        def authorize(query):
            used = query.get("client_id") == CIMD_URL
            self.checks.add("cimd-client-id-used", "SUCCESS" if used else "WARNING", client_id=query.get("client_id"))

        self.as_options["hooks"] = {"authorize": authorize}


def scenarios():
    wellknown = "/.well-known/oauth-protected-resource"
    return [
        metadata_scenario("auth/metadata-default", wellknown + "/mcp", True,
                          "/.well-known/oauth-authorization-server", trap=True),
        metadata_scenario("auth/metadata-var1", wellknown + "/mcp", False, "/.well-known/openid-configuration"),
        metadata_scenario("auth/metadata-var2", wellknown, False,
                          "/.well-known/oauth-authorization-server/tenant1", prefix="/tenant1"),
        metadata_scenario("auth/metadata-var3", "/custom/metadata/location.json", True,
                          "/tenant1/.well-known/openid-configuration", prefix="/tenant1"),
        BasicCIMD(),
        ScopeCheck("auth/scope-from-www-authenticate", "scope-from-www-authenticate",
                   lambda asked: "mcp:basic" in asked,
                   {"required_scopes": ["mcp:basic"], "scope_in_challenge": True}),
        ScopeCheck("auth/scope-from-scopes-supported", "scope-from-scopes-supported",
                   lambda asked: all(s in asked for s in ["mcp:basic", "mcp:read", "mcp:write"]),
                   {"required_scopes": ["mcp:basic", "mcp:read", "mcp:write"],
                    "prm_scopes": ["mcp:basic", "mcp:read", "mcp:write"]}),
        ScopeCheck("auth/scope-omitted-when-undefined", "scope-omitted-when-undefined",
                   lambda asked: not asked, {"required_scopes": []}),
        StepUp(),
        RetryLimit(),
        TokenEndpointAuth("client_secret_basic", "basic"),
        TokenEndpointAuth("client_secret_post", "post"),
        TokenEndpointAuth("none", "none"),
        PreRegistration(),
        Rejection("auth/resource-mismatch", "resource-mismatch-rejected", {},
                  {"resource_override": "https://evil.example.com/mcp"}, "authorize"),
        OfflineAccess(True),
        OfflineAccess(False),
        Migration(),
        Proceeds("auth/iss-supported", "sep-2468-client-compare-iss-supported",
                 {"iss_supported": True, "iss_in_redirect": "correct"}),
        Proceeds("auth/iss-not-advertised", "sep-2468-client-proceed-no-iss",
                 {"iss_supported": None, "iss_in_redirect": "omit"}),
        Rejection("auth/iss-supported-missing", "sep-2468-client-reject-missing-iss",
                  {"iss_supported": True, "iss_in_redirect": "omit"}, {}, "token"),
        Rejection("auth/iss-wrong-issuer", "sep-2468-client-compare-iss-supported",
                  {"iss_supported": True, "iss_in_redirect": "wrong"}, {}, "token"),
        Rejection("auth/iss-unexpected", "sep-2468-client-compare-iss-unadvertised",
                  {"iss_supported": None, "iss_in_redirect": "wrong"}, {}, "token"),
        Rejection("auth/iss-normalized", "sep-2468-client-compare-iss-normalized",
                  {"iss_supported": True, "iss_in_redirect": "normalized"}, {}, "token"),
        Rejection("auth/metadata-issuer-mismatch", "issuer-mismatch-rejected",
                  {"issuer_override": "https://evil.example.com"}, {}, "authorize"),
    ]


# -- The clients -------------------------------------------------------------------------------


CALLS = [
    ("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "nativeauth-conformance", "version": "1"}}),
    ("tools/list", {}),
    ("tools/call", {"name": "test-tool", "arguments": {}}),
]


def run_nativeauth(cli, url, scenario, directory):
    """`api URL` once per call, as a script would, in one store; a browser that approves at once."""
    browser = f"/usr/bin/python3 '{ROOT}/scripts/lib/following_browser.py' %s"
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": directory, "BROWSER": browser}
    extra = []
    if scenario.context:
        secret = os.path.join(directory, "client-secret")
        with open(secret, "w") as file:
            file.write(scenario.context["client_secret"])
        os.chmod(secret, 0o600)
        extra = ["--discover", "--issuer", scenario.as_base, "--client-id", scenario.context["client_id"],
                 "--client-secret-file", secret]
    failed, output = False, []
    for index, (method, params) in enumerate(CALLS, start=1):
        body = json.dumps({"jsonrpc": "2.0", "id": index, "method": method, "params": params})
        arguments = [cli, "api", url, "-X", "POST", "-H", "Accept: application/json, text/event-stream",
                     "-d", body, "--step-up", "--store", os.path.join(directory, "store")] + extra
        result = subprocess.run(arguments, env=environment, capture_output=True, text=True, timeout=120)
        output.append(f"$ api {method}: exit {result.returncode}\n{result.stdout}{result.stderr}")
        if result.returncode != 0:
            failed = True
            break
    return failed, "\n".join(output)


def run_sdk(url, scenario, directory):
    """The official SDK's client: its OAuthClientProvider through a browser that approves at once."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

    class Storage:
        def __init__(self):
            self.tokens, self.client = None, None
            if scenario.context:
                self.client = OAuthClientInformationFull(
                    client_id=scenario.context["client_id"], client_secret=scenario.context["client_secret"],
                    token_endpoint_auth_method="client_secret_basic",
                    redirect_uris=["http://127.0.0.1:3030/callback"])

        async def get_tokens(self):
            return self.tokens

        async def set_tokens(self, tokens):
            self.tokens = tokens

        async def get_client_info(self):
            return self.client

        async def set_client_info(self, client):
            self.client = client

    redirect = {}

    async def redirect_handler(authorization_url):
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url)
        location = urllib.parse.urlsplit(answer.headers["location"])
        redirect.update(urllib.parse.parse_qs(location.query))

    async def callback_handler():
        return AuthorizationCodeResult(
            code=redirect["code"][0], state=redirect.get("state", [None])[0], iss=redirect.get("iss", [None])[0])

    async def main():
        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="sdk-conformance", redirect_uris=["http://127.0.0.1:3030/callback"],
                grant_types=["authorization_code", "refresh_token"]),
            storage=Storage(), redirect_handler=redirect_handler, callback_handler=callback_handler,
            client_metadata_url=CIMD_URL)
        async with httpx2.AsyncClient(auth=provider) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.list_tools()
                await client.call_tool("test-tool", {})

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
        return False, ""
    except BaseException as error:  # noqa: BLE001 - a client's failure is a result here
        return True, f"{type(error).__name__}: {error}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", choices=["nativeauth", "sdk"], required=True)
    parser.add_argument("--cli")
    parser.add_argument("--scenario", action="append", default=[])
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    # The SDK's HTTP client and session manager log each request at INFO: only the verdicts here.
    logging.basicConfig(level=logging.WARNING)
    # The SDK logs a refused flow (the scenarios that must be refused) with its traceback: the
    # verdict says it, and a failing scenario prints the client's error.
    for name in ("httpx", "httpx2", "mcp", "uvicorn"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    chosen = [s for s in scenarios() if not arguments.scenario or s.name in arguments.scenario]
    failures = 0
    for scenario in chosen:
        url = scenario.start()
        with tempfile.TemporaryDirectory() as directory:
            try:
                if arguments.client == "nativeauth":
                    client_failed, output = run_nativeauth(arguments.cli, url, scenario, directory)
                else:
                    client_failed, output = run_sdk(url, scenario, directory)
            finally:
                scenario.stop()
        passed, items = scenario.verdict(client_failed)
        failures += 0 if passed else 1
        shown = sorted({f"{item['id']}={item['status']}" for item in items if item["status"] != "INFO"})
        print(f"{scenario.name} {'pass' if passed else 'fail'} {' '.join(shown)}", flush=True)
        if (arguments.verbose or not passed) and output:
            print("    " + output.replace("\n", "\n    "), file=sys.stderr, flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
