"""An MCP client that signs in to an OAuth tenant with the official Python SDK (docs/clients.md).

A loopback redirect (RFC 8252), the client registration and tokens kept in a JSON file, the
sign-in URL printed (and opened with $BROWSER when set), then the tenant's tools listed. The next
run reuses the saved tokens, refreshing them when needed.

    pip install mcp
    python docs/examples/oauth_client.py http://localhost:8080/mcp/acme [tokens.json]
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

SERVER_URL = sys.argv[1]
STORE = Path(sys.argv[2] if len(sys.argv) > 2 else Path.home() / ".config" / "mcp-example" / "tokens.json")


class FileStorage:
    """The SDK's TokenStorage in a JSON file: the registration and tokens, per server URL."""

    def _load(self) -> dict:
        return json.loads(STORE.read_text()) if STORE.exists() else {}

    def _save(self, key: str, value: dict) -> None:
        saved = self._load()
        saved.setdefault(SERVER_URL, {})[key] = value
        STORE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        STORE.touch(mode=0o600)
        STORE.write_text(json.dumps(saved, indent=2))

    async def get_tokens(self) -> OAuthToken | None:
        saved = self._load().get(SERVER_URL, {}).get("tokens")
        return OAuthToken.model_validate(saved) if saved else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._save("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        saved = self._load().get(SERVER_URL, {}).get("client")
        return OAuthClientInformationFull.model_validate(saved) if saved else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._save("client", client_info.model_dump(mode="json", exclude_none=True))


async def main() -> None:
    # The redirect URI: this process on 127.0.0.1, any free port; the browser brings the code here.
    answer: asyncio.Future[dict[str, list[str]]] = asyncio.get_running_loop().create_future()

    async def on_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = (await reader.readline()).split()[1].decode()
        found = urlsplit(target).path == "/callback"
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nSigned in. You can close this tab."
                     if found else b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()
        if found and not answer.done():
            answer.set_result(parse_qs(urlsplit(target).query))

    callback = await asyncio.start_server(on_request, "127.0.0.1", 0)
    redirect_uri = f"http://127.0.0.1:{callback.sockets[0].getsockname()[1]}/callback"

    async def open_browser(url: str) -> None:
        print(f"Sign in in your browser: {url}", file=sys.stderr)
        if os.environ.get("BROWSER"):
            subprocess.Popen([os.environ["BROWSER"], url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def wait_for_code() -> AuthorizationCodeResult:
        params = {name: values[0] for name, values in (await answer).items()}
        if "code" not in params:
            raise RuntimeError(f"sign-in failed: {params.get('error', 'no code')}")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    oauth = OAuthClientProvider(
        server_url=SERVER_URL,
        client_metadata=OAuthClientMetadata(
            client_name="MCP OAuth example",
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=FileStorage(),
        redirect_handler=open_browser,
        callback_handler=wait_for_code,
    )
    async with httpx2.AsyncClient(auth=oauth, timeout=30) as http:
        async with Client(streamable_http_client(SERVER_URL, http_client=http)) as client:
            for tool in (await client.list_tools()).tools:
                print(tool.name)
    callback.close()


if __name__ == "__main__":
    asyncio.run(main())
