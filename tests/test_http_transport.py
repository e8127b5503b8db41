"""The lean HTTP transport under the official SDKs, over the wire (issue 13: harness CPU per call).

Every call still goes through the SDK (its request building, auth, timeout and exceptions); what is checked here
is the part the transport owns: keep-alive connections, each way a response body can be framed, TLS, proxies
from the environment, and every way a server can fail, each ending in the engine's error the default transport
gave.
"""

import asyncio
import contextlib
import gzip
import json
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator

import httpx2
import openai
import pytest
import trustme

from empathybench.models import http_transport
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import ChatRequest, Message, Sampling, TransientBackendError
from empathybench.models.http_transport import LeanTransport, proxy_from_environment, sdk_http_client
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_openai import FakeOpenAIServer

SAMPLING = Sampling(temperature=0.0, max_tokens=20, seed=3)
KEY = "sk-test-transport-5c0e"


def request(index: int = 0) -> ChatRequest:
    return ChatRequest((Message("user", f"Item {index}. Rate: <score>"),), SAMPLING)


def completion_body(text: str = "Joy: 4") -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }
    return json.dumps(body).encode()


def ask(backend: OpenAIBackend, requests: list[ChatRequest]) -> list[str]:
    async def run() -> list[str]:
        try:
            return [(await backend.complete(one)).text for one in requests]
        finally:
            await backend.aclose()

    return asyncio.run(run())


# --- a scripted server: each connection runs a function over the raw socket ------------------------------------

Script = Callable[[socket.socket, "RawServer"], None]


class RawServer:
    """A loopback TCP server whose connections are handled by `script` (one thread each); counts connections."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.connections = 0
        self.request_lines: list[bytes] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with outer._lock:
                    outer.connections += 1
                connection: socket.socket = self.request
                with contextlib.suppress(OSError):  # the client hung up (or refused the certificate): some scripts
                    if tls is not None:
                        connection = tls.wrap_socket(connection, server_side=True)
                    outer.script(connection, outer)

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

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def read_request(self, connection: socket.socket) -> bytes | None:
        """One whole request (head, empty line, Content-Length body) from the connection, its request line noted;
        None when the client closed it. The client sends one request at a time on a connection."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        with self._lock:
            self.request_lines.append(head.split(b"\r\n", 1)[0])
        length = next(
            (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
            0,
        )
        while len(body) < length:
            body += connection.recv(65536)
        return head + b"\r\n\r\n" + body


def answer_each_request(response: Callable[[], bytes]) -> Script:
    def script(connection: socket.socket, server: RawServer) -> None:
        while server.read_request(connection) is not None:
            connection.sendall(response())

    return script


def head(status: str, *headers: str) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode()


# --- keep-alive connections ---------------------------------------------------------------------------------


def open_connections(server: FakeOpenAIServer) -> int:
    with server._lock:
        return len(server._connections)


def wait_for_connections(server: FakeOpenAIServer, at_most: int, timeout_s: float = 5.0) -> int:
    deadline = time.monotonic() + timeout_s
    while open_connections(server) > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return open_connections(server)


def test_many_calls_in_flight_each_get_a_connection_and_closing_closes_them() -> None:
    calls = 64
    with FakeOpenAIServer(latency_s=0.3) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)
        during: list[int] = []

        async def run() -> list[str]:
            try:
                return await asyncio.gather(*((await_text(backend, index)) for index in range(calls)))
            finally:
                during.append(open_connections(server))
                await backend.aclose()

        texts = asyncio.run(run())
        assert len(texts) == calls and all(texts)
        assert server.requests_total == calls
        assert server.max_in_flight == calls  # the transport holds no call back
        assert during[0] <= calls  # idle connections were reused, none opened beyond the calls in flight
        assert wait_for_connections(server, 0) == 0  # closing the backend closed every connection


async def await_text(backend: OpenAIBackend, index: int) -> str:
    return (await backend.complete(request(index))).text


def test_one_call_at_a_time_reuses_one_connection() -> None:
    body = completion_body()
    with RawServer(answer_each_request(lambda: head("200 OK", f"Content-Length: {len(body)}") + body)) as server:
        texts = ask(OpenAIBackend("fake", base_url=server.base_url, api_key=KEY), [request(i) for i in range(5)])
    assert texts == ["Joy: 4"] * 5
    assert server.connections == 1
    assert server.request_lines == [b"POST /v1/chat/completions HTTP/1.1"] * 5


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    body = completion_body()

    def answer_once_then_hang_up(connection: socket.socket, server: RawServer) -> None:
        # Keep-alive announced (HTTP/1.1, no Connection: close), then closed while idle, as servers do after their
        # keep-alive timeout (uvicorn, behind vLLM, waits 5 s).
        if server.read_request(connection) is not None:
            connection.sendall(head("200 OK", f"Content-Length: {len(body)}") + body)
            time.sleep(0.05)

    with RawServer(answer_once_then_hang_up) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)

        async def run() -> list[str]:
            try:
                first = await backend.complete(request(0))
                await asyncio.sleep(0.3)  # the server has hung up by now
                second = await backend.complete(request(1))
                return [first.text, second.text]
            finally:
                await backend.aclose()

        assert asyncio.run(run()) == ["Joy: 4", "Joy: 4"]
    assert server.connections == 2


def test_an_idle_connection_older_than_the_keepalive_expiry_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_transport, "KEEPALIVE_EXPIRY_S", 0.1)
    body = completion_body()
    with RawServer(answer_each_request(lambda: head("200 OK", f"Content-Length: {len(body)}") + body)) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)

        async def run() -> None:
            try:
                await backend.complete(request(0))
                await backend.complete(request(1))  # at once: the same connection
                await asyncio.sleep(0.2)
                await backend.complete(request(2))  # after the expiry: a new one
            finally:
                await backend.aclose()

        asyncio.run(run())
    assert server.connections == 2


# --- how a body can be framed -------------------------------------------------------------------------------


def chunked(body: bytes, size: int) -> bytes:
    parts = [b"%x;ext=1\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\nX-Trailer: done\r\n\r\n"


def framings() -> dict[str, Callable[[bytes], bytes]]:
    return {
        "content-length": lambda b: head("200 OK", f"Content-Length: {len(b)}") + b,
        "chunked": lambda b: head("200 OK", "Transfer-Encoding: chunked") + chunked(b, 7),
        "interim 100 first": lambda b: head("100 Continue") + head("200 OK", f"Content-Length: {len(b)}") + b,
        "gzip": lambda b: (
            head("200 OK", "Content-Encoding: gzip", f"Content-Length: {len(gzip.compress(b))}") + gzip.compress(b)
        ),
        "no reason phrase": lambda b: f"HTTP/1.1 200\r\nContent-Length: {len(b)}\r\n\r\n".encode() + b,
    }


@pytest.mark.parametrize("framing", sorted(framings()))
def test_each_framing_of_a_body_gives_the_answer_and_keeps_the_connection(framing: str) -> None:
    text = "Joy: 4\n" + "x" * 200_000  # larger than one read of the transport (64 KiB)
    frame = framings()[framing]
    with RawServer(answer_each_request(lambda: frame(completion_body(text)))) as server:
        texts = ask(OpenAIBackend("fake", base_url=server.base_url, api_key=KEY), [request(0), request(1)])
    assert texts == [text, text]
    assert server.connections == 1


def test_a_body_that_ends_with_the_connection_is_read_and_the_connection_not_reused() -> None:
    def answer_then_close(connection: socket.socket, server: RawServer) -> None:
        if server.read_request(connection) is not None:
            connection.sendall(head("200 OK", "Connection: close") + completion_body())
            connection.shutdown(socket.SHUT_WR)

    with RawServer(answer_then_close) as server:
        texts = ask(OpenAIBackend("fake", base_url=server.base_url, api_key=KEY), [request(0), request(1)])
    assert texts == ["Joy: 4", "Joy: 4"]
    assert server.connections == 2


# --- every way a server can fail ----------------------------------------------------------------------------


GOOD_BODY = completion_body()
GOOD_ANSWER = head("200 OK", f"Content-Length: {len(GOOD_BODY)}") + GOOD_BODY


def failing(reply: bytes, *, then_close: bool = True, wait_s: float = 0.0, good_first: int = 0) -> Script:
    """Answer the server's first `good_first` requests well, then fail every later one with `reply`."""

    def script(connection: socket.socket, server: RawServer) -> None:
        while server.read_request(connection) is not None:
            if len(server.request_lines) <= good_first:
                connection.sendall(GOOD_ANSWER)
                continue
            connection.sendall(reply)
            time.sleep(wait_s)
            if then_close:
                connection.shutdown(socket.SHUT_RDWR)
            return

    return script


# name -> (reply, failure keywords, engine error kind, words in its message)
FAILURES: dict[str, tuple[bytes, dict[str, object], str, str]] = {
    "closed before answering": (b"", {}, "connection", "closed the connection"),
    "closed inside the head": (b"HTTP/1.1 200 OK\r\nContent-Le", {}, "connection", "complete response"),
    "closed inside the body": (head("200 OK", "Content-Length: 500") + b'{"choices": [', {}, "connection", "body"),
    "not HTTP": (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", {}, "connection", "not an HTTP/1.x response"),
    "bad header line": (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", {}, "connection", "malformed header"),
    "bad content length": (head("200 OK", "Content-Length: ten"), {}, "connection", "Content-Length"),
    "bad chunk size": (
        head("200 OK", "Transfer-Encoding: chunked") + b"zz\r\n{}\r\n0\r\n\r\n",
        {},
        "connection",
        "body",
    ),
    "endless head": (
        b"HTTP/1.1 200 OK\r\nX-Filler: " + b"a" * 100_000,
        {"then_close": False, "wait_s": 1},
        "connection",
        "too large",
    ),
    "silent": (b"", {"then_close": False, "wait_s": 3}, "timeout", "timed out"),
    "body too slow": (
        head("200 OK", "Content-Length: 50") + b"{",
        {"then_close": False, "wait_s": 3},
        "timeout",
        "timed out",
    ),
    "garbage body": (head("200 OK", "Content-Length: 9") + b"not json!", {}, "malformed", "malformed"),
}


@pytest.mark.parametrize("call", ["first (through the SDK)", "later (replayed)"])
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_each_server_failure_is_the_engines_transient_error(failure: str, call: str) -> None:
    reply, options, kind, words = FAILURES[failure]
    good_first = 0 if call.startswith("first") else 2
    with RawServer(failing(reply, good_first=good_first, **options)) as server:  # type: ignore[arg-type]
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)
        backend.set_request_timeout(0.5)
        started = time.monotonic()
        with pytest.raises(TransientBackendError) as caught:
            ask(backend, [request(i) for i in range(good_first + 1)])
    assert caught.value.kind == kind
    assert words in str(caught.value) or kind == "timeout"
    assert time.monotonic() - started < 5
    assert len(server.request_lines) == good_first + 1  # the failed call was sent once, never again on its own


def error_answer(status: str, message: str, *headers: str) -> bytes:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}).encode()
    return head(status, "Content-Type: application/json", f"Content-Length: {len(body)}", *headers) + body


STATUS_FAILURES = {
    "429": error_answer("429 Too Many Requests", "Rate limit reached", "Retry-After: 7"),
    "503": error_answer("503 Service Unavailable", "overloaded", "Retry-After: 2"),
    "400": error_answer("400 Bad Request", "This model's maximum context length is 8192 tokens"),
    "401": error_answer("401 Unauthorized", "Incorrect API key provided"),
    "404": error_answer("404 Not Found", "The model `fake` does not exist"),
}


def engine_error_of(reply: bytes, good_first: int) -> tuple[type[Exception], str, object, object]:
    with RawServer(failing(reply, then_close=False, good_first=good_first)) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)
        with pytest.raises(Exception) as caught:
            ask(backend, [request(i) for i in range(good_first + 1)])
    error = caught.value
    message = str(error).replace(server.base_url, "BASE_URL")
    return type(error), message, getattr(error, "kind", None), getattr(error, "retry_after", None)


@pytest.mark.parametrize("status", sorted(STATUS_FAILURES))
def test_an_http_error_on_a_replayed_call_is_the_same_error_as_through_the_sdk(status: str) -> None:
    through_sdk = engine_error_of(STATUS_FAILURES[status], good_first=0)
    replayed = engine_error_of(STATUS_FAILURES[status], good_first=2)
    assert replayed == through_sdk
    if status == "429":
        assert through_sdk[2:] == ("rate_limited", 7.0) and "Rate limit reached" in through_sdk[1]
    if status == "400":
        assert "maximum context length" in through_sdk[1]


def test_a_replayed_call_sends_what_the_sdk_sends() -> None:
    received: list[bytes] = []

    def record(connection: socket.socket, server: RawServer) -> None:
        while (whole := server.read_request(connection)) is not None:
            received.append(whole)
            connection.sendall(GOOD_ANSWER)

    same = request(0)
    with RawServer(record) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=KEY)

        async def run() -> bool:
            try:
                await backend.complete(same)
                learned = backend._replay is not None
                await backend.complete(same)
                await backend.complete(same)
                return learned
            finally:
                await backend.aclose()

        assert asyncio.run(run())
    assert len(received) == 3
    assert received[1] == received[0] and received[2] == received[0]  # head (every header) and body, byte for byte
    assert b"\r\nauthorization: bearer " + KEY.lower().encode() in received[0].lower()


def test_a_redirect_on_a_replayed_call_is_followed_by_the_sdk() -> None:
    moved = head("307 Temporary Redirect", "Location: /v2/chat/completions", "Content-Length: 0")

    def script(connection: socket.socket, server: RawServer) -> None:
        while server.read_request(connection) is not None:
            first_line = server.request_lines[-1]
            connection.sendall(GOOD_ANSWER if len(server.request_lines) == 1 or b"/v2/" in first_line else moved)

    with RawServer(script) as server:
        texts = ask(OpenAIBackend("fake", base_url=server.base_url, api_key=KEY), [request(0), request(1)])
    assert texts == ["Joy: 4", "Joy: 4"]
    assert server.request_lines == [
        b"POST /v1/chat/completions HTTP/1.1",
        b"POST /v1/chat/completions HTTP/1.1",  # replayed: answered 307
        b"POST /v1/chat/completions HTTP/1.1",  # the SDK's own call, which follows the redirect
        b"POST /v2/chat/completions HTTP/1.1",
    ]


def test_a_refused_connection_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens on it once closed
    backend = OpenAIBackend("fake", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY)
    with pytest.raises(TransientBackendError) as caught:
        ask(backend, [request()])
    assert caught.value.kind == "connection" and "cannot connect" in str(caught.value)


# --- TLS and proxies ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def https_server(authority: trustme.CA) -> RawServer:
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    body = completion_body("over TLS")
    return RawServer(answer_each_request(lambda: head("200 OK", f"Content-Length: {len(body)}") + body), server_context)


def sdk_client(base_url: str, context: ssl.SSLContext) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=KEY,
        max_retries=0,
        http_client=sdk_http_client(openai.DefaultAsyncHttpxClient, base_url, context)[0],
    )


def post_twice(client: openai.AsyncOpenAI) -> list[str]:
    async def run() -> list[str]:
        try:
            texts = []
            for _ in range(2):
                raw = await client.post("/chat/completions", cast_to=bytes, body={"model": "fake", "messages": []})
                texts.append(json.loads(raw)["choices"][0]["message"]["content"])
            return texts
        finally:
            await client.close()

    return asyncio.run(run())


def test_https_with_a_trusted_certificate_keeps_one_tls_connection(authority: trustme.CA) -> None:
    client_context = httpx2.create_ssl_context()
    authority.configure_trust(client_context)
    with https_server(authority) as server:
        url = f"https://127.0.0.1:{server.port}/v1"
        assert post_twice(sdk_client(url, client_context)) == ["over TLS", "over TLS"]
    assert server.connections == 1


def test_https_with_an_unknown_certificate_is_refused(authority: trustme.CA) -> None:
    with https_server(authority) as server:
        url = f"https://127.0.0.1:{server.port}/v1"
        with pytest.raises(openai.APIConnectionError) as caught:
            post_twice(sdk_client(url, httpx2.create_ssl_context()))  # the CA is not trusted
    assert "CERTIFICATE_VERIFY_FAILED" in repr(caught.value.__cause__)


@pytest.fixture
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    yield monkeypatch


def test_a_proxy_in_the_environment_is_used_through_the_sdks_default_transport(
    no_proxy_environment: pytest.MonkeyPatch,
) -> None:
    body = completion_body("via the proxy")
    with RawServer(answer_each_request(lambda: head("200 OK", f"Content-Length: {len(body)}") + body)) as proxy:
        no_proxy_environment.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        target = "http://api.example.invalid/v1"  # never resolved: the proxy answers
        assert proxy_from_environment(target)
        client = sdk_client(target, httpx2.create_ssl_context())
        assert not isinstance(client._client._transport, LeanTransport)
        assert post_twice(client) == ["via the proxy", "via the proxy"]
    # The proxy got the absolute URL, as an HTTP proxy must.
    assert proxy.request_lines == [b"POST http://api.example.invalid/v1/chat/completions HTTP/1.1"] * 2


def test_no_proxy_and_no_environment_use_the_lean_transport(no_proxy_environment: pytest.MonkeyPatch) -> None:
    assert not proxy_from_environment("http://127.0.0.1:8000/v1")
    no_proxy_environment.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    assert proxy_from_environment("https://api.openai.com/v1")
    assert not proxy_from_environment("http://127.0.0.1:8000/v1")  # only https goes through it
    no_proxy_environment.setenv("NO_PROXY", "api.openai.com")
    assert not proxy_from_environment("https://api.openai.com/v1")
    client = sdk_client("https://api.openai.com/v1", httpx2.create_ssl_context())
    assert isinstance(client._client._transport, LeanTransport)


def test_both_backends_use_the_lean_transport(no_proxy_environment: pytest.MonkeyPatch) -> None:
    openai_backend = OpenAIBackend("fake", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    anthropic_backend = AnthropicBackend("claude-fake", base_url="http://127.0.0.1:9", api_key=KEY)
    for backend in (openai_backend, anthropic_backend):
        assert isinstance(backend._get_client()._client._transport, LeanTransport)
