"""A lean HTTP/1.1 transport under the official SDKs' HTTP client (httpx2).

The SDKs (openai, anthropic) still build every request, authenticate, time out, and turn HTTP errors into their
own exceptions; this module only moves the bytes. Their default transport (httpcore2 on anyio, parsing with h11)
cost 1.1 ms of CPU per call more than this one on a 4,330-call run (bench/bench_emotionbench_full.py, issue 13),
more than everything else the harness does per call together.

What it does: keep-alive connections per origin (plain TCP or TLS with the caller's context), requests written
in one go, responses framed by Content-Length, chunked transfer coding or the end of the connection, the body
streamed to the client, the SDK's timeouts (connect, read, write) honoured, every failure raised as the httpx2
exception the SDKs expect (so their retry and error mapping work unchanged). What it leaves to the default
transport: proxies (`proxy_from_environment` tells the backends when one is configured), HTTP/2.
"""

import asyncio
import contextlib
import socket
import ssl
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import httpx2

# A response head larger than this is not an API's answer (asyncio's stream limit, also the bound of one line).
HEAD_LIMIT_BYTES = 64 * 1024
BODY_CHUNK_BYTES = 64 * 1024
# Idle connections kept per origin and for how long; servers close idle connections after a few seconds, and a
# connection older than this is not worth the risk of finding it closed.
KEEPALIVE_PER_ORIGIN = 100
KEEPALIVE_EXPIRY_S = 5.0

Origin = tuple[str, str, int]
# TCP keep-alive probes on every connection (as the Anthropic SDK's default transport sets them): a reasoning
# model's answer can take minutes, and middleboxes drop connections that stay silent that long.
_SOCKET_OPTIONS = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)] + [
    (socket.IPPROTO_TCP, getattr(socket, name), value)
    for name, value in (("TCP_KEEPIDLE", 60), ("TCP_KEEPINTVL", 60), ("TCP_KEEPCNT", 5))
    if hasattr(socket, name)
]


def proxy_from_environment(url: str) -> bool:
    """Whether the environment routes `url` through a proxy (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY honoured): then
    the SDK's default transport, which speaks to proxies, is used instead of this one."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme.lower()) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


def sdk_http_client(
    default_client: Any, base_url: str, ssl_context: ssl.SSLContext | None = None
) -> tuple[Any, "LeanTransport | None"]:
    """The SDK's own default HTTP client (`DefaultAsyncHttpxClient`: its timeouts, limits, redirects) on this
    transport, and the transport; on its default transport (None) when the environment sends `base_url`
    through a proxy. The TLS context is the one the SDK's own client would make unless one is given."""
    if ssl_context is None:
        ssl_context = httpx2.create_ssl_context()
    if proxy_from_environment(base_url):
        return default_client(verify=ssl_context), None
    transport = LeanTransport(ssl_context=ssl_context)
    return default_client(transport=transport), transport


class _Connection:
    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        return (
            now - self.idle_since < KEEPALIVE_EXPIRY_S
            and not self.writer.is_closing()
            and not self.reader.at_eof()
            # Bytes nobody asked for (a server's 408 on an idle connection): the connection is out of step.
            and not self.reader._buffer  # type: ignore[attr-defined]  # asyncio has no public "buffered" test
        )

    def close(self) -> None:
        self.writer.close()


def _origin(url: httpx2.URL) -> Origin:
    return (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))


def _timeouts(request: httpx2.Request) -> tuple[float | None, float | None, float | None]:
    timeout = request.extensions.get("timeout") or {}
    return timeout.get("connect"), timeout.get("read"), timeout.get("write")


class _ResponseStream(httpx2.AsyncByteStream):
    """The response body, read from the connection as the client asks for it; the connection goes back to the
    pool once the body has been read to its end, and is closed otherwise."""

    def __init__(
        self,
        transport: "LeanTransport",
        origin: Origin,
        connection: _Connection,
        request: httpx2.Request,
        framing: str,
        length: int,
        keep_alive: bool,
        read_timeout: float | None,
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection: _Connection | None = connection
        self._request = request
        self._framing = framing  # "length", "chunked" or "eof"
        self._remaining = length
        self._keep_alive = keep_alive
        self._read_timeout = read_timeout
        self._complete = framing == "length" and length == 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None or self._complete:
            return
        reader = connection.reader
        try:
            if self._framing == "length":
                while self._remaining > 0:
                    chunk = await self._read(reader.read(min(self._remaining, BODY_CHUNK_BYTES)))
                    if not chunk:
                        raise httpx2.RemoteProtocolError(
                            f"the server closed the connection with {self._remaining} bytes of the body unsent",
                            request=self._request,
                        )
                    self._remaining -= len(chunk)
                    yield chunk
            elif self._framing == "chunked":
                async for chunk in self._chunks(reader):
                    yield chunk
            else:
                while chunk := await self._read(reader.read(BODY_CHUNK_BYTES)):
                    yield chunk
            self._complete = True
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise httpx2.ReadError(f"reading the response body failed: {exc!r}", request=self._request) from exc
        finally:
            if self._complete:
                await self.aclose()

    async def read_all(self) -> bytes:
        """The whole body, then the connection released or closed. A sized body (the usual answer) is read in
        one go: one timeout, no async generator."""
        connection = self._connection
        try:
            if self._framing == "length" and self._remaining and connection is not None:
                try:
                    body = await self._read(connection.reader.readexactly(self._remaining))
                except (OSError, asyncio.IncompleteReadError) as exc:
                    raise httpx2.ReadError(f"reading the response body failed: {exc!r}", request=self._request) from exc
                self._remaining, self._complete = 0, True
                return body
            chunks = [chunk async for chunk in self]
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        finally:
            await self.aclose()

    async def _chunks(self, reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        while True:
            size_line = await self._read(reader.readuntil(b"\r\n"))
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while await self._read(reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the empty line
                    pass
                return
            chunk = await self._read(reader.readexactly(size + 2))
            if chunk[-2:] != b"\r\n":
                raise httpx2.RemoteProtocolError("malformed chunked body", request=self._request)
            yield chunk[:-2]

    async def _read(self, operation: Any) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout):
                data: bytes = await operation
                return data
        except TimeoutError as exc:
            raise httpx2.ReadTimeout("timed out reading the response body", request=self._request) from exc

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if self._complete and self._keep_alive and self._framing != "eof":
            self._transport._release(self._origin, connection)
        else:
            connection.close()


class LeanTransport(httpx2.AsyncBaseTransport):
    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl_context = ssl_context
        self._idle: dict[Origin, list[_Connection]] = {}
        self._closed = False
        # The last request with its body in memory that the SDK sent: a backend may learn a `ReplayedPost` from it.
        self.last_request: httpx2.Request | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        scheme = request.url.scheme
        if scheme not in ("http", "https"):
            raise httpx2.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}", request=request)
        payload = self._request_bytes(request)
        if payload is not None:
            self.last_request = request
        status, reason, headers, version, stream = await self._round_trip(
            request, _origin(request.url), payload, _timeouts(request)
        )
        return httpx2.Response(
            status,
            headers=headers,
            stream=stream,
            extensions={"http_version": version, "reason_phrase": reason},
        )

    @staticmethod
    def _request_bytes(request: httpx2.Request) -> bytes | None:
        """The whole request (head and body) when its body is in memory (every JSON call); None for a streamed
        body (a file upload), which is written as it is read."""
        try:
            body = request.content
        except httpx2.RequestNotRead:
            return None
        return _head(request) + b"\r\n" + body

    def _idle_connection(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable(now):
                return connection
            connection.close()
        return None

    def _release(self, origin: Origin, connection: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if self._closed or len(idle) >= KEEPALIVE_PER_ORIGIN:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    async def _connect(self, request: httpx2.Request, origin: Origin, timeout: float | None) -> _Connection:
        scheme, host, port = origin
        tls = (self._ssl_context or ssl.create_default_context()) if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=tls, server_hostname=host if tls else None, limit=HEAD_LIMIT_BYTES
                )
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout(f"timed out connecting to {host}:{port}", request=request) from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx2.ConnectError(f"cannot connect to {host}:{port}: {exc}", request=request) from exc
        raw_socket = writer.get_extra_info("socket")
        if raw_socket is not None:
            for level, option, value in _SOCKET_OPTIONS:
                with contextlib.suppress(OSError):
                    raw_socket.setsockopt(level, option, value)
        return _Connection(reader, writer)

    async def _round_trip(
        self,
        request: httpx2.Request,
        origin: Origin,
        payload: bytes | None,
        timeouts: tuple[float | None, float | None, float | None],
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes, "_ResponseStream"]:
        """Send the request on an idle connection or a new one and read the response head; the body is left to
        the returned stream. A connection the server closed while it was idle is found out here only when no
        answer comes: that is raised like any dropped connection, for the engine to retry and count; the
        transport never sends a request twice on its own (the server may have taken the first one)."""
        connect_timeout, read_timeout, write_timeout = timeouts
        connection = self._idle_connection(origin) or await self._connect(request, origin, connect_timeout)
        try:
            await self._send(request, connection, payload, write_timeout)
            status, reason, headers, version = await self._read_head(request, connection, read_timeout)
        except BaseException:
            connection.close()
            raise
        framing, length, keep_alive = _framing(request, status, headers, version)
        stream = _ResponseStream(self, origin, connection, request, framing, length, keep_alive, read_timeout)
        return status, reason, headers, version, stream

    async def _send(
        self, request: httpx2.Request, connection: _Connection, payload: bytes | None, timeout: float | None
    ) -> None:
        writer = connection.writer
        try:
            async with asyncio.timeout(timeout):
                if payload is not None:
                    writer.write(payload)
                else:
                    writer.write(_head(request) + b"\r\n")
                    chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
                    async for part in request.stream:  # type: ignore[union-attr]
                        if part:
                            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                            await writer.drain()
                    if chunked:
                        writer.write(b"0\r\n\r\n")
                if writer.transport.get_write_buffer_size():
                    await writer.drain()
        except TimeoutError as exc:
            raise httpx2.WriteTimeout("timed out sending the request", request=request) from exc
        except OSError as exc:
            raise httpx2.WriteError(f"sending the request failed: {exc}", request=request) from exc

    async def _read_head(
        self, request: httpx2.Request, connection: _Connection, timeout: float | None
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
        reader = connection.reader
        try:
            async with asyncio.timeout(timeout):
                raw = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError as exc:
            raise httpx2.ReadTimeout("timed out waiting for the response", request=request) from exc
        except asyncio.IncompleteReadError as exc:
            raise httpx2.RemoteProtocolError(
                "the server closed the connection without sending a complete response", request=request
            ) from exc
        except asyncio.LimitOverrunError as exc:
            raise httpx2.RemoteProtocolError("the response head is too large", request=request) from exc
        except OSError as exc:
            raise httpx2.ReadError(f"reading the response failed: {exc}", request=request) from exc
        lines = raw[:-4].split(b"\r\n")
        version, _, rest = lines[0].partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or not code.isdigit() or len(code) != 3:
            raise httpx2.RemoteProtocolError("the server's answer is not an HTTP/1.x response", request=request)
        headers = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise httpx2.RemoteProtocolError("malformed header line in the response", request=request)
            headers.append((name, value.strip()))
        status = int(code)
        if 100 <= status < 200:  # an interim answer (100 Continue, 103 Early Hints): the real one follows
            return await self._read_head(request, connection, timeout)
        return status, reason, headers, version

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()


class ReplayedPost:
    """A POST the SDK made on this transport, ready to be sent again with another body: the same URL, headers
    (authentication and the SDK's own included) and timeouts; only Content-Length follows the new body.

    For a backend's hot path: the SDK builds each request through pydantic models and httpx2's URL and header
    classes, ~0.5 ms of CPU per call (issue 13). The backend learns the request from a call the SDK made, and
    hands failures back to the SDK to become its exceptions."""

    def __init__(self, transport: LeanTransport, request: httpx2.Request) -> None:
        self.request = request
        self._transport = transport
        self._origin = _origin(request.url)
        self._timeouts = _timeouts(request)
        self._head = _head(request, without=b"content-length")

    async def send(self, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Status, headers and the whole body (as received: a Content-Encoding is left to the caller); failures
        raise the httpx2 exceptions of `handle_async_request`."""
        payload = b"%sContent-Length: %d\r\n\r\n%s" % (self._head, len(body), body)
        status, _, headers, _, stream = await self._transport._round_trip(
            self.request, self._origin, payload, self._timeouts
        )
        return status, headers, await stream.read_all()


def _head(request: httpx2.Request, *, without: bytes = b"") -> bytes:
    """The request line and the header lines (but a header named `without`, lower case), without the empty line
    that ends the head."""
    lines = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), request.url.raw_path)]
    lines.extend(b"%s: %s\r\n" % (name, value) for name, value in request.headers.raw if name.lower() != without)
    return b"".join(lines)


def _framing(
    request: httpx2.Request, status: int, headers: list[tuple[bytes, bytes]], version: bytes
) -> tuple[str, int, bool]:
    """How the body ends ("length" with its size, "chunked", or "eof") and whether the connection stays open."""
    length = -1
    chunked = False
    connection_header = b""
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-length":
            if not value.isdigit():
                raise httpx2.RemoteProtocolError("malformed Content-Length in the response", request=request)
            length = int(value)
        elif lowered == b"transfer-encoding":
            chunked = value.lower().endswith(b"chunked")
        elif lowered == b"connection":
            connection_header = value.lower()
    keep_alive = version == b"HTTP/1.1" and b"close" not in connection_header
    if request.method == "HEAD" or status in (204, 304):
        return "length", 0, keep_alive
    if chunked:
        return "chunked", 0, keep_alive
    if length >= 0:
        return "length", length, keep_alive
    return "eof", 0, False
