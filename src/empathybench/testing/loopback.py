"""What the loopback fakes share: a threaded HTTP/1.1 server on 127.0.0.1, quiet handlers that send JSON, and a
start/stop lifecycle that also ends idle keep-alive connections, so a stopped fake leaves no thread behind.

A fake subclasses `LoopbackFake` (its API: state, counters, answers) and `LoopbackHandler` (its routes).
"""

import contextlib
import functools
import json
import socket
import socketserver
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

LOOPBACK = "127.0.0.1"
# Content-Encodings a fake can send a padded body in ("identity": as is); "br" needs the brotli package.
PADDED_ENCODINGS = ("identity", "gzip", "deflate", "br")
_PIECE = 1 << 16
# The faults the fakes answer with a padded reply (`send_padded`), and its Content-Encoding; the padding's size.
PADDED_FAULTS = {"huge": "identity", "bomb_gzip": "gzip", "bomb_deflate": "deflate", "bomb_br": "br"}
DEFAULT_BOMB_BYTES = 50_000_000
PAD_MARK = "__PAD__"  # the string of a JSON payload that the padding replaces (`send_padded_json`)


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Keep-alive connections keep their threads; never wait for them when closing.
    block_on_close = False
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, fake: "LoopbackFake", port: int, handler: type["LoopbackHandler"]) -> None:
        self.fake = fake
        super().__init__((LOOPBACK, port), handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-request are part of the job here (kill tests, drops); only report real bugs.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall on a box without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name = LOOPBACK
        self.server_port = self.server_address[1]


class LoopbackHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers and the SDKs' pooled clients expect
    server: LoopbackHTTPServer
    timeout = 60  # an idle keep-alive connection ends its thread after this

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: tests and benchmarks read the counters instead

    def read_body(self, length: int) -> bytes | None:
        """The request body of `length` bytes, or None when the client hung up before sending all of it (a killed
        client): a real server never serves, and so never counts, such a request; the connection is closed."""
        raw = self.rfile.read(length) if length > 0 else b""
        if len(raw) < length:
            self.close_connection = True
            return None
        return raw

    def send_padded_json(self, status: int, payload: Any, filler_bytes: int, encoding: str) -> None:
        """`payload` as JSON with its one PAD_MARK string replaced by `filler_bytes` of padding (`send_padded`)."""
        head, tail = (part.encode() for part in json.dumps(payload).split(PAD_MARK))
        self.send_padded(status, head, filler_bytes, tail, encoding)

    def send_padded(self, status: int, head: bytes, filler_bytes: int, tail: bytes, encoding: str) -> None:
        """A body of `head`, `filler_bytes` bytes of "a" and `tail` in the Content-Encoding `encoding`: a reply far
        larger than any honest one, and compressed (gzip, deflate, br) a compression bomb (400 MB of text are
        about 400 KB of gzip). Sent in pieces; the client may hang up at any point."""
        if encoding == "identity":
            length = len(head) + filler_bytes + len(tail)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(length))
            self.end_headers()
            self.wfile.write(head)
            filler = b"a" * _PIECE
            for start in range(0, filler_bytes, _PIECE):
                self.wfile.write(filler[: min(_PIECE, filler_bytes - start)])
            self.wfile.write(tail)
            self.wfile.flush()
            return
        body = compressed_padding(head, filler_bytes, tail, encoding)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for start in range(0, len(body), _PIECE):
            self.wfile.write(body[start : start + _PIECE])
        self.wfile.flush()

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.send_raw(status, json.dumps(payload).encode("utf-8"), headers)

    def send_raw(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


@functools.lru_cache(maxsize=8)
def compressed_padding(head: bytes, filler_bytes: int, tail: bytes, encoding: str) -> bytes:
    """`head` + `filler_bytes` of "a" + `tail`, compressed as the Content-Encoding `encoding` (gzip, deflate or br),
    made piece by piece so that the uncompressed body never sits in memory."""
    compress: Any
    if encoding == "br":
        try:
            import brotli  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise ValueError("a brotli body needs the brotli package") from None
        compressor = brotli.Compressor(quality=5)
        compress, finish = compressor.process, compressor.finish
    elif encoding in ("gzip", "deflate"):
        # gzip: the gzip wrapper (wbits 16 + 15); HTTP's "deflate" is the zlib format (wbits 15).
        zlib_compressor = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
        compress, finish = zlib_compressor.compress, zlib_compressor.flush
    else:
        raise ValueError(f"unknown encoding {encoding!r}; known: {', '.join(PADDED_ENCODINGS)}")
    parts = [compress(head)]
    filler = b"a" * (1 << 20)
    for start in range(0, filler_bytes, len(filler)):
        parts.append(compress(filler[: min(len(filler), filler_bytes - start)]))
    parts += [compress(tail), finish()]
    return b"".join(parts)


class LoopbackFake:
    """A fake API on 127.0.0.1 (port 0: a free one); use as a context manager or call start()/stop()."""

    handler: ClassVar[type[LoopbackHandler]]
    thread_name: ClassVar[str]

    def __init__(self, port: int = 0) -> None:
        self.requested_port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()  # set when the server stops: wakes replies that wait on purpose
        self._connections: set[socket.socket] = set()
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = LoopbackHTTPServer(self, self.requested_port, self.handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        # Wake handler threads blocked on idle keep-alive connections so they end now.
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        return int(self._httpd.server_address[1])

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)
