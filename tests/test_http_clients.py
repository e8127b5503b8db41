"""The SDKs' own HTTP clients under both backends, over the wire: TLS verified against the system's or
`SSL_CERT_FILE`'s authorities, proxies from the environment, every request built by the SDK, and no socket opened by
EmpathyBench's own code.
"""

import asyncio
import contextlib
import json
import re
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from empathybench.errors import ModelConfigError
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import ChatRequest, Message, Sampling, TransientBackendError
from empathybench.models.http_clients import (
    CONNECTIONS_PER_CLIENT,
    HTTP_CLIENT_VARIABLE,
    HTTP_CLIENTS,
    SdkClients,
)
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

SAMPLING = Sampling(temperature=0.0, max_tokens=20, seed=3)
KEY = "sk-test-http-clients-5c0e"
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "empathybench"


def completion_body(text: str) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }
    return json.dumps(body).encode()


class RawServer:
    """A loopback HTTP/1.1 server (TLS optional) answering every request with one body; keeps each request's head."""

    def __init__(self, body: bytes, tls: ssl.SSLContext | None = None) -> None:
        self.heads: list[bytes] = []
        self._lock = threading.Lock()
        outer = self
        reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                connection: socket.socket = self.request
                with contextlib.suppress(OSError):  # e.g. the client refused the certificate
                    if tls is not None:
                        connection = tls.wrap_socket(connection, server_side=True)
                    while (head := outer._read_request(connection)) is not None:
                        with outer._lock:
                            outer.heads.append(head)
                        connection.sendall(reply)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "RawServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @staticmethod
    def _read_request(connection: socket.socket) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(v)
                for k, _, v in (line.partition(b":") for line in head.split(b"\r\n"))
                if k.lower() == b"content-length"
            ),
            0,
        )
        while len(body) < length:
            body += connection.recv(65536)
        return head


def ask_twice(backend: OpenAIBackend | AnthropicBackend) -> list[str]:
    async def run() -> list[str]:
        try:
            request = ChatRequest((Message("user", "Rate: <score>"),), SAMPLING)
            return [(await backend.complete(request)).text for _ in range(2)]
        finally:
            await backend.aclose()

    return asyncio.run(run())


@pytest.fixture(params=HTTP_CLIENTS)
def http_client(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each of the SDKs' HTTP clients in turn, with no proxy or CA bundle from the machine's environment."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ssl_cert_file", "ssl_cert_dir"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, request.param)
    yield request.param


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def https_server(authority: trustme.CA, body: bytes) -> RawServer:
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    return RawServer(body, server_context)


def test_https_with_a_ca_bundle_from_ssl_cert_file_is_trusted(
    http_client: str, authority: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    with https_server(authority, completion_body("over TLS")) as server:
        backend = OpenAIBackend("fake", base_url=f"https://127.0.0.1:{server.port}/v1", api_key=KEY)
        assert ask_twice(backend) == ["over TLS", "over TLS"]


def test_https_with_an_unknown_certificate_is_refused(http_client: str, authority: trustme.CA) -> None:
    with https_server(authority, completion_body("never read")) as server:
        backend = OpenAIBackend("fake", base_url=f"https://127.0.0.1:{server.port}/v1", api_key=KEY)
        with pytest.raises(TransientBackendError) as caught:
            ask_twice(backend)
    # Retried as a failure to connect (the aiohttp client reports it as a connect timeout), the cause kept.
    assert caught.value.kind in ("connection", "timeout")
    chain, cause = [], caught.value.__cause__
    while cause is not None:
        chain.append(repr(cause))
        cause = cause.__cause__ or cause.__context__
    assert any("CERTIFICATE_VERIFY_FAILED" in link for link in chain), chain


def test_a_proxy_in_the_environment_carries_the_requests(http_client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with RawServer(completion_body("via the proxy")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        target = "http://api.example.invalid/v1"  # never resolved: the proxy answers
        assert ask_twice(OpenAIBackend("fake", base_url=target, api_key=KEY)) == ["via the proxy"] * 2
    # The proxy got the absolute URL, as an HTTP proxy must.
    lines = [head.split(b"\r\n", 1)[0] for head in proxy.heads]
    assert lines == [b"POST http://api.example.invalid/v1/chat/completions HTTP/1.1"] * 2


def anthropic_body(text: str) -> bytes:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 7, "output_tokens": 3},
    }
    return json.dumps(body).encode()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_sdk_builds_every_request(http_client: str, provider: str) -> None:
    """Each request carries what the SDK puts on it per request (its headers, auth, retry counter), not a copy of
    an earlier request."""
    body = completion_body("ok") if provider == "openai" else anthropic_body("ok")
    with RawServer(body) as server:
        base = f"http://127.0.0.1:{server.port}"
        backend: OpenAIBackend | AnthropicBackend = (
            OpenAIBackend("fake", base_url=f"{base}/v1", api_key=KEY)
            if provider == "openai"
            else AnthropicBackend("claude-fake", base_url=base, api_key=KEY)
        )
        assert ask_twice(backend) == ["ok", "ok"]
    assert len(server.heads) == 2
    for head in server.heads:
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
        }
        assert headers[b"x-stainless-retry-count"] == b"0"
        assert headers[b"x-stainless-lang"] == b"python"
        assert KEY.encode() in headers.get(b"authorization", b"") + headers.get(b"x-api-key", b"")


def test_an_unknown_http_client_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, "curl")
    with pytest.raises(ModelConfigError, match="choose one of httpx, aiohttp"):
        OpenAIBackend("fake", base_url="http://127.0.0.1:9/v1", api_key=KEY)._get_client()


def test_no_module_opens_sockets_itself() -> None:
    """Sockets are the SDKs' (and the test fakes' servers): no client-side socket code in the package."""
    pattern = re.compile(r"asyncio\.open_connection|socket\.create_connection|wrap_socket|start_tls|socket\.socket\(")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        if "testing" not in path.relative_to(PACKAGE).parts
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found


def test_calls_are_lent_the_least_busy_client_and_a_new_one_past_the_per_client_bound() -> None:
    made: list[object] = []
    clients = SdkClients(lambda: made.append(object()) or made[-1])
    with contextlib.ExitStack() as held:
        lent = [held.enter_context(clients.lease()) for _ in range(2 * CONNECTIONS_PER_CLIENT + 1)]
        assert len(made) == 3
        assert [lent.count(client) for client in made] == [CONNECTIONS_PER_CLIENT, CONNECTIONS_PER_CLIENT, 1]
    with clients.lease() as again:  # all given back: the first client again, nothing new made
        assert again is made[0] and len(made) == 3
    assert clients.first() is made[0]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_many_calls_at_once_each_get_their_own_answer(
    http_client: str, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More calls at once than one client is lent: all of them in flight together, each answered with its own
    reply (never another call's), and the system's authorities loaded at most once for all the clients."""
    import httpcore2

    loaded: list[int] = []
    default_context = httpcore2.default_ssl_context

    def counted(**kwargs: Any) -> ssl.SSLContext:
        loaded.append(1)
        return default_context(**kwargs)

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    calls = 2 * CONNECTIONS_PER_CLIENT + 8
    arrived, in_flight, peak = threading.Condition(), [0], [0]

    def answer(request: dict[str, Any]) -> str:
        # Each answer waits until every call is in flight (at most 10 s): a cap on connections keeps the rest out,
        # and the peak falls short; a loaded machine only makes them arrive later (a fixed wait made that a failure).
        with arrived:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            arrived.notify_all()
            arrived.wait_for(lambda: peak[0] >= calls, timeout=10)
            in_flight[0] -= 1
        content = request["messages"][-1]["content"]
        return f"echo {content if isinstance(content, str) else content[0]['text']}"

    server = FakeOpenAIServer(answer=answer) if provider == "openai" else FakeAnthropicServer(answer=answer)

    async def run(backend: OpenAIBackend | AnthropicBackend) -> list[str]:
        try:
            requests = [ChatRequest((Message("user", f"call {i}"),), SAMPLING) for i in range(calls)]
            return [r.text for r in await asyncio.gather(*(backend.complete(q) for q in requests))]
        finally:
            await backend.aclose()

    with server:
        backend: OpenAIBackend | AnthropicBackend = (
            OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)
            if provider == "openai"
            else AnthropicBackend("claude-fake", base_url=server.base_url, api_key=KEY)
        )
        texts = asyncio.run(run(backend))
    assert texts == [f"echo call {i}" for i in range(calls)]
    assert peak[0] == calls
    if http_client == "httpx":
        assert len(loaded) <= 1
