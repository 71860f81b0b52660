#!/usr/bin/env python3
"""MCP servers that take their tokens from another authorization server, built from the official
MCP Python SDK (PyPI `mcp`): each is the SDK's MCPServer in its resource-server mode (its
streamable HTTP transport, its protected resource metadata naming --issuer, its 401 challenges,
its check that a token was issued for this server: `validate_token_resource`). The glue the SDK
asks for is a TokenVerifier; this one asks the authorization server's introspection endpoint
(RFC 7662) as the SDK's own example (examples/servers/simple-auth) does, and reads the token's
RFC 8707 audience from the answer's `aud`.

    .venv/bin/python scripts/mcp-server/resource_servers.py --issuer URL --introspection URL \\
        --client ID --secret-file PATH [--count N] [--scope S]

The first line on stderr is `ports: A B …`; the MCP endpoints are http://127.0.0.1:PORT/mcp.
Then one line per event on stderr: `verify PORT aud=…` for every token checked, `tool echo PORT`.
No token is printed.
"""

import argparse
import base64
import json
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request

import anyio
import uvicorn

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


def note(line):
    print(line, file=sys.stderr, flush=True)


class IntrospectingVerifier(TokenVerifier):
    """Asks the authorization server about each token (RFC 7662), as a confidential client."""

    def __init__(self, endpoint, client, secret, port):
        self.endpoint, self.client, self.secret, self.port = endpoint, client, secret, port

    def introspect(self, token):
        credentials = base64.b64encode(f"{self.client}:{self.secret}".encode()).decode()
        request = urllib.request.Request(
            self.endpoint, data=urllib.parse.urlencode({"token": token}).encode(),
            headers={"Authorization": "Basic " + credentials})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as error:
            note(f"verify {self.port} introspection answered {error.code}")
            return None

    async def verify_token(self, token):
        facts = await anyio.to_thread.run_sync(self.introspect, token)
        if facts is None:
            return None
        if not facts.get("active"):
            note(f"verify {self.port} inactive")
            return None
        audience = facts.get("aud") or []
        if isinstance(audience, str):
            audience = [audience]
        note(f"verify {self.port} aud={' '.join(audience)}")
        return AccessToken(
            token=token, client_id=facts.get("client_id", ""), scopes=(facts.get("scope") or "").split(),
            expires_at=facts.get("exp"), resource=audience[0] if len(audience) == 1 else None,
            subject=facts.get("username"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--introspection", required=True)
    parser.add_argument("--client", required=True)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--scope", default="read")
    arguments = parser.parse_args()
    secret = open(arguments.secret_file).read().strip()
    listeners, apps = [], []
    for _ in range(arguments.count):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        # Listening before the port is printed: a client that connects at once is queued, not refused.
        listener.listen(128)
        port = listener.getsockname()[1]
        server = MCPServer(
            f"nativeauth-resource-{port}",
            token_verifier=IntrospectingVerifier(arguments.introspection, arguments.client, secret, port),
            auth=AuthSettings(
                issuer_url=arguments.issuer,
                resource_server_url=f"http://127.0.0.1:{port}/mcp",
                validate_token_resource=True,
                required_scopes=[arguments.scope],
            ),
        )

        def tool(port=port):
            def echo(text: str) -> str:
                """Says the text back."""
                note(f"tool echo {port}")
                return text

            return echo

        server.tool(name="echo")(tool())
        listeners.append(listener)
        apps.append(server.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1"))
    note("ports: " + " ".join(str(listener.getsockname()[1]) for listener in listeners))

    async def serve():
        async with anyio.create_task_group() as group:
            for listener, app in zip(listeners, apps):
                # As server.py: idle connections stay open while a loaded test machine stalls.
                config = uvicorn.Config(app, log_level="warning", timeout_keep_alive=300)
                group.start_soon(uvicorn.Server(config).serve, [listener])

    anyio.run(serve)


if __name__ == "__main__":
    main()
