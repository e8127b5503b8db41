"""The HTTP client under the official SDKs: one of the SDKs' own, never a hand-made one.

`httpx` (the default) is the SDKs' own default client (httpx2 with their timeouts, connection limits, proxies from
the environment, TLS verification against the system's authorities or `SSL_CERT_FILE`). `aiohttp` is their
`DefaultAioHttpClient` (the extra `aiohttp`): less CPU per call (bench/results/http_clients.md), but it reports
refused and dropped connections as timeouts (read back by `connection_failure`) and it is the less travelled path,
so it is a choice, not the default. Either way the SDK builds every request itself: headers, auth, idempotency
keys, retry counters. The choice is `EMPATHYBENCH_HTTP_CLIENT`.

Either client is the SDK's own class with one thing added (`_BoundedReplies`): a reply the SDK reads whole is read
here first, as the client decodes it, and refused past the limit of the call being made (models/reply_bounds.py),
so a runaway reply or a compression bomb never reaches the SDK's parser, the cache or the memory whole. Streamed
replies (batch result files) are handed over unread: their reader bounds each line (reply_bounds.bounded_lines).

A backend's chat calls go through `SdkClients`: SDK clients of at most about CONNECTIONS_PER_CLIENT calls in flight
each, all sharing one TLS context.
"""

import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from empathybench.errors import ModelConfigError
from empathybench.models.reply_bounds import ReplyTooLargeError, current_reply_limit, exception_chain, read_bounded

HTTP_CLIENTS = ("httpx", "aiohttp")
DEFAULT_HTTP_CLIENT = "httpx"
HTTP_CLIENT_VARIABLE = "EMPATHYBENCH_HTTP_CLIENT"


def http_client_name() -> str:
    """The HTTP client asked for by the environment (DEFAULT_HTTP_CLIENT when unset)."""
    name = os.environ.get(HTTP_CLIENT_VARIABLE, "").strip().lower() or DEFAULT_HTTP_CLIENT
    if name not in HTTP_CLIENTS:
        raise ModelConfigError(f"{HTTP_CLIENT_VARIABLE}={name[:40]!r}: choose one of {', '.join(HTTP_CLIENTS)}")
    return name


def sdk_http_client(sdk: Any) -> Any:
    """The `http_client` for an SDK client (the `openai` or `anthropic` module): the SDK's own default client of the
    chosen kind, with its replies bounded."""
    if http_client_name() == "httpx":
        return _bounded(sdk.DefaultAsyncHttpxClient)(verify=_tls_context(*_tls_variables()))
    try:
        import aiohttp  # noqa: F401  # the SDKs' aiohttp client needs it installed
    except ImportError:
        raise ModelConfigError(
            f"{HTTP_CLIENT_VARIABLE}=aiohttp needs the aiohttp extra: pip install 'empathybench[aiohttp]'"
        ) from None
    return _bounded(sdk.DefaultAioHttpClient)()


def _tls_variables() -> tuple[str | None, str | None]:
    return os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")


@functools.cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> Any:
    """The TLS context every httpx client of the process shares, made as each would make its own (the system's
    authorities, or SSL_CERT_FILE / SSL_CERT_DIR, which key the cache): loading the authorities costs tens of ms of
    CPU, once per client otherwise."""
    import httpx2  # the SDKs' HTTP library, loaded with them

    return httpx2.create_ssl_context(trust_env=True)


# httpcore's connection pool looks at each of its connections on every request and every release (an idle one is
# asked whether its socket is readable), so a client holding 100 connections spends O(100) per call: a quarter of the
# CPU of a SAGE run's 2,800 calls (bench/results/sage_conversations.md). Calls are spread over clients of this many.
CONNECTIONS_PER_CLIENT = 16


class SdkClients:
    """The SDK clients of one backend, each made by `make` when needed. `first()` is the client for calls that want
    one (the batch API); `lease()` lends a chat call the client with the fewest calls in flight, and makes another
    when every one has CONNECTIONS_PER_CLIENT (so a run of up to 16 calls at a time has one client, as before)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._clients: list[Any] = []
        self._in_flight: list[int] = []

    def first(self) -> Any:
        if not self._clients:
            self._add()
        return self._clients[0]

    @contextlib.contextmanager
    def lease(self) -> Iterator[Any]:
        index = min(range(len(self._clients)), key=self._in_flight.__getitem__, default=None)
        if index is None or self._in_flight[index] >= CONNECTIONS_PER_CLIENT:
            index = self._add()
        in_flight = self._in_flight  # the counts this call was lent from, even if aclose() starts new ones meanwhile
        in_flight[index] += 1
        try:
            yield self._clients[index]
        finally:
            in_flight[index] -= 1

    def update(self, change: Callable[[Any], Any]) -> None:
        """Each client made so far replaced by `change(client)` (the SDKs' `with_options`)."""
        self._clients = [change(client) for client in self._clients]

    async def aclose(self) -> None:
        clients, self._clients, self._in_flight = self._clients, [], []
        for client in clients:
            await client.close()

    def _add(self) -> int:
        self._clients.append(self._make())
        self._in_flight.append(0)
        return len(self._clients) - 1


# A redirect's body is read only to be thrown away: a few KB say "moved" in any language.
MAX_DISCARDED_BODY_BYTES = 65_536
# The body's headers that describe it on the wire; the bounded reply carries the decoded body, so they go.
_WIRE_HEADERS = ("content-encoding", "content-length", "transfer-encoding")
_BOUNDED_CLASSES: dict[type, type] = {}


def _bounded(client_class: type) -> type:
    """`client_class` (an httpx AsyncClient subclass) whose non-streamed replies are read within their limit."""
    if client_class not in _BOUNDED_CLASSES:
        _BOUNDED_CLASSES[client_class] = type(f"Bounded{client_class.__name__}", (_BoundedReplies, client_class), {})
    return _BOUNDED_CLASSES[client_class]


class _BoundedReplies:
    """Mixed into an httpx `AsyncClient`: `send` reads a reply the caller wants whole (stream=False), and the body
    of an error status the SDK will read whole, within the current call's limit, counting the bytes as the client
    decodes them, and answers a response holding them. The body of a redirect, which the client reads only to
    discard it, is read undecoded and at most MAX_DISCARDED_BODY_BYTES."""

    def __init__(self, **kwargs: Any) -> None:
        hooks = dict(kwargs.pop("event_hooks", None) or {})
        hooks["response"] = [*hooks.get("response", ()), _bound_redirect_body]
        super().__init__(event_hooks=hooks, **kwargs)  # type: ignore[call-arg]

    async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
        response = await super().send(request, stream=True, **kwargs)  # type: ignore[misc]
        if stream and response.status_code < 400:
            return response  # read by its caller, line by line within its bounds (batch result files)
        try:
            body = await read_bounded(response.aiter_bytes(), current_reply_limit(), request.url.host)
        except BaseException:
            await response.aclose()
            raise
        headers = response.headers.copy()
        for name in _WIRE_HEADERS:
            if name in headers:
                del headers[name]
        read = type(response)(
            response.status_code,
            headers=headers,
            content=body,
            request=request,
            extensions=response.extensions,
            history=response.history,
            default_encoding=response.default_encoding,
        )
        with contextlib.suppress(RuntimeError):  # known once the body was read to its end
            read.elapsed = response.elapsed
        return read


def connection_failure(exc: BaseException) -> bool:
    """Whether an SDK error reported as a timeout was a failure to connect or a dropped connection: the SDKs' aiohttp
    client reports those as timeouts, which would hide an unreachable server (the engine stops early for those)."""
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - a dependency
        return False
    for link in exception_chain(exc):
        if isinstance(link, aiohttp.ServerTimeoutError | TimeoutError):
            return False
        if isinstance(link, aiohttp.ClientConnectionError | ConnectionError):
            return True
    return False


def check_api_key(key: str, variable: str) -> None:
    """Refuse an API key that cannot go into an HTTP header, naming where it came from (`variable`) and never
    showing it: a key copied with its line's end would otherwise fail every call as "Illegal header value"."""
    if "\r" in key or "\n" in key:
        raise ModelConfigError(f"{variable} contains a line break; set it again without it")
    if any(c in key for c in " \t"):
        raise ModelConfigError(f"{variable} contains a space or a tab; set it again without it")
    if any(not 0x21 <= ord(c) <= 0x7E for c in key):
        raise ModelConfigError(
            f"{variable} contains a character an HTTP header cannot carry (a control or non-ASCII character); "
            "set it again without it"
        )


async def _bound_redirect_body(response: Any) -> None:
    """The client's response hook: a redirect it follows has its body read to be discarded, so that body is left
    undecoded (no decompression to bomb) and cut at MAX_DISCARDED_BODY_BYTES."""
    if not response.has_redirect_location:
        return
    if "content-encoding" in response.headers:
        del response.headers["content-encoding"]
    response.stream = _limited_stream(response.stream, MAX_DISCARDED_BODY_BYTES, response.request.url.host)


def _limited_stream(stream: Any, limit: int, host: str) -> Any:
    """`stream` (an httpx AsyncByteStream) refusing to go on past `limit` bytes (ReplyTooLargeError)."""
    import httpx2  # the SDKs' HTTP library, loaded with them (not at import: a cached run never loads them)

    class LimitedStream(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            read = 0
            async for chunk in stream:
                read += len(chunk)
                if read > limit:
                    raise ReplyTooLargeError(limit, host)
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return LimitedStream()
