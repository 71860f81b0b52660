#!/usr/bin/env python3
"""An MCP server that requires OAuth, built from the official MCP Python SDK (PyPI `mcp`): the
SDK's own MCPServer, its streamable HTTP transport, its authorization server routes (RFC 8414
metadata, /authorize, /token, /register, /revoke) and its protected resource metadata (RFC 9728)
with 401 challenges. Only the glue the SDK asks an application to write is here: an in-memory
provider that approves every authorization at once (no consent page), and one tool.

    .venv/bin/python scripts/mcp-server/server.py [--access-token-seconds N] [--scopes "A B"] [--grants "A"] [--sse]
        [--tool-scope TOOL=SCOPE] [--introspection-secret-file PATH] [--stateful]

--scopes: the scopes every MCP request needs (default `mcp:tools`); the SDK answers a token that
lacks one with 403 `insufficient_scope` naming no scope, and its metadata lists them all.
--grants: the only scopes the authorization server grants, whatever is asked (RFC 6749 §3.3
lets it grant less); default: all that are asked.
--sse: answer each request with a server-sent event stream (the SDK's default) instead of JSON.
--stateful: keep sessions (the SDK's default): `initialize` answers an Mcp-Session-Id that every
later request must send back.
--tool-scope TOOL=SCOPE: the tool TOOL also needs SCOPE. The SDK checks scopes per server only, so
the glue below does what the MCP spec (2025-11-25, "Scope challenge handling") describes: a
`tools/call` of TOOL with a token that lacks SCOPE is answered 403 `insufficient_scope` naming the
scopes it needs. SCOPE is one the authorization server registers (`valid_scopes`) but the
metadata does not list (the SDK lists the scopes every request needs).
--introspection-secret-file PATH: serve RFC 7662 introspection at /introspect for the client
`introspector` with the secret in PATH (HTTP Basic), as the SDK's own example authorization server
(examples/servers/simple-auth) adds it, so that resource servers (resource_servers.py) take its
tokens. The SDK's token endpoint reads `resource` on a refresh but does not pass it on: a refreshed
token keeps the resource its sign-in was for.

The first line on stderr is `port: N`; the MCP endpoint is http://127.0.0.1:N/mcp and the
issuer http://127.0.0.1:N. Then one line per event on stderr: `register CLIENT_ID`,
`authorize CLIENT_ID scope=… resource=…`, `token authorization_code|refresh_token CLIENT_ID`,
`revoke CLIENT_ID`, `refuse TOOL`, `introspect aud=…`, `tool echo`. Every token it issues is appended to NATIVEAUTH_TEST_SECRETS_FILE when set (the
redaction check); none is printed.
"""

import argparse
import base64
import json
import os
import secrets
import socket
import sys
import time

import anyio
import uvicorn

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken



def note(line):
    print(line, file=sys.stderr, flush=True)


def record(*values):
    path = os.environ.get("NATIVEAUTH_TEST_SECRETS_FILE")
    if path:
        with open(path, "a") as file:
            file.write("".join(value + "\n" for value in values if value))


class ApprovingProvider:
    """The application's side of the SDK's authorization server, in memory, approving at once."""

    def __init__(self, lifetime, grants=None):
        self.lifetime, self.grants = lifetime, grants
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info
        record(client_info.client_secret)
        note(
            f"register {client_info.client_id} redirect_uris={','.join(map(str, client_info.redirect_uris or []))}"
            f" scope={client_info.scope}")

    async def authorize(self, client, params: AuthorizationParams):
        code = "code-" + secrets.token_urlsafe(32)
        record(code)
        granted = [scope for scope in params.scopes or [] if self.grants is None or scope in self.grants]
        self.codes[code] = AuthorizationCode(
            code=code, scopes=granted, expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
            subject="mcp-user-alice")
        note(f"authorize {client.client_id} scope={' '.join(params.scopes or [])} resource={params.resource}")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def issue(self, client_id, scopes, resource, subject):
        access = "mcp-at-" + secrets.token_urlsafe(32)
        refresh = "mcp-rt-" + secrets.token_urlsafe(32)
        record(access, refresh)
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource, subject=subject)
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject)
        return OAuthToken(
            access_token=access, token_type="Bearer", expires_in=self.lifetime, refresh_token=refresh,
            scope=" ".join(scopes))

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        note(f"token authorization_code {client.client_id}")
        return self.issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, authorization_code.subject)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)  # rotated: a spent refresh token is refused
        note(f"token refresh_token {client.client_id}")
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource, refresh_token.subject)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        note(f"revoke {token.client_id}")
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class ToolScopes:
    """ASGI glue around the SDK's app: a `tools/call` of a tool that needs a scope the token lacks
    is answered 403 `insufficient_scope` with the scopes it needs (see --tool-scope)."""

    def __init__(self, app, provider, needs, required, metadata_url):
        self.app, self.provider, self.needs = app, provider, needs
        self.required, self.metadata_url = required, metadata_url

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not self.needs:
            return await self.app(scope, receive, send)
        messages, more = [], True
        while more:
            message = await receive()
            messages.append(message)
            more = message.get("more_body", False)
        replay = iter(messages)

        async def replayed():
            return next(replay, None) or await receive()

        try:
            call = json.loads(b"".join(message.get("body", b"") for message in messages))
        except ValueError:
            call = None
        name = (call.get("params") or {}).get("name") if isinstance(call, dict) else None
        needed = self.needs.get(name) if call and call.get("method") == "tools/call" else None
        headers = dict(scope["headers"])
        token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        access = await self.provider.load_access_token(token) if needed and token else None
        if access is not None and needed not in access.scopes:
            note(f"refuse {name}")
            asked = " ".join(self.required + [needed])
            challenge = (
                f'Bearer error="insufficient_scope", scope="{asked}", resource_metadata="{self.metadata_url}",'
                f' error_description="the tool {name} needs the scope {needed}"')
            body = json.dumps({"error": "insufficient_scope"}).encode()
            await send({"type": "http.response.start", "status": 403, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge.encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, replayed, send)


def introspection(provider, secret):
    """The /introspect route (RFC 7662): a known, unexpired access token's client, scope, expiry and
    audience (its RFC 8707 resource), for the client `introspector` alone."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def introspect(request):
        expected = "Basic " + base64.b64encode(f"introspector:{secret}".encode()).decode()
        if not secrets.compare_digest(request.headers.get("authorization", ""), expected):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = (await request.form()).get("token", "")
        found = await provider.load_access_token(token)
        if found is None:
            return JSONResponse({"active": False})
        note(f"introspect aud={found.resource}")
        return JSONResponse({
            "active": True, "client_id": found.client_id, "scope": " ".join(found.scopes), "exp": found.expires_at,
            "aud": found.resource, "username": found.subject})

    return Route("/introspect", introspect, methods=["POST"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--access-token-seconds", type=int, default=3600)
    parser.add_argument("--scopes", default="mcp:tools")
    parser.add_argument("--grants")
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--tool-scope", action="append", default=[])
    parser.add_argument("--introspection-secret-file")
    parser.add_argument("--stateful", action="store_true")
    arguments = parser.parse_args()
    scopes = arguments.scopes.split()
    needs = dict(pair.split("=", 1) for pair in arguments.tool_scope)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    # Listening before the port is printed: a client that connects at once is queued, not refused.
    listener.listen(128)
    port = listener.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = ApprovingProvider(
        arguments.access_token_seconds, arguments.grants.split() if arguments.grants is not None else None)
    server = MCPServer(
        "nativeauth-test",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            required_scopes=scopes,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=scopes + sorted(set(needs.values())), default_scopes=scopes),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Says the text back."""
        note("tool echo")
        return text

    @server.tool()
    async def wait_for(path: str, ctx: Context) -> str:
        """Reports progress at once, then answers when a file exists at the path."""
        await ctx.report_progress(0, 1, "waiting for " + path)
        note("tool wait_for waiting")
        while not os.path.exists(path):
            await anyio.sleep(0.05)
        return "done waiting"

    @server.tool()
    def admin_echo(text: str) -> str:
        """Says the text back, for a token with the scope --tool-scope names."""
        note("tool admin_echo")
        return text

    # Stateless by default: every request stands alone, so that separate processes may call it (no
    # session id). --stateful: the SDK's sessions, whose id `initialize` answers in Mcp-Session-Id
    # and every later request must send back.
    sdk_app = server.streamable_http_app(
        json_response=not arguments.sse, stateless_http=not arguments.stateful, host="127.0.0.1")
    if arguments.introspection_secret_file:
        with open(arguments.introspection_secret_file) as file:
            sdk_app.router.routes.append(introspection(provider, file.read().strip()))
    app = ToolScopes(sdk_app, provider, needs, scopes, f"{base}/.well-known/oauth-protected-resource/mcp")
    # uvicorn closes an idle connection after 5 s by default. Under the full suite a test can stall
    # longer than that between two requests, and the client's pool may then send on a connection
    # uvicorn is closing (a ChannelError, or a browser redirect that never arrives): a race of the
    # test machine's load, not what the tests are about. Idle connections stay open for the test.
    config = uvicorn.Config(app, log_level="warning", timeout_keep_alive=300)
    note(f"port: {port}")
    anyio.run(uvicorn.Server(config).serve, [listener])


if __name__ == "__main__":
    main()
