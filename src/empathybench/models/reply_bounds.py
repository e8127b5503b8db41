"""How many bytes a server may send back, and reading no more than that (docs/reliability.md, "Bounds").

A reply is bounded by what the request could honestly produce: its token budget (the `max_tokens` the backend
sends, thinking included) times REPLY_BYTES_PER_TOKEN, at least MIN_REPLY_BYTES (error bodies, envelopes, short
budgets) and at most MAX_REPLY_BYTES. `--max-reply-bytes N` or EMPATHYBENCH_MAX_REPLY_BYTES=N replaces that
derived limit by N for every reply. Calls that carry no token budget (a batch's status, a file upload's receipt)
are bounded by MAX_API_OBJECT_BYTES. The bytes counted are the decoded ones: a gzip, deflate, brotli or zstd body
is counted as the HTTP client decompresses it (in pieces of at most 1 MiB), so a compression bomb stops at the
limit, not after it has filled the memory. A reply past its limit is refused as a transient server fault
(`ReplyTooLargeError`): retried like a 5xx, and nothing of it is parsed or stored.

Batch result files are read line by line within a `ResultFileBounds`: a line at most the largest limit of the
batch's requests (plus an envelope), the whole at most the sum of them.
"""

import os
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from empathybench.errors import UserError
from empathybench.formatting import significant
from empathybench.models.base import TransientBackendError

# A token of text is about 4 bytes of UTF-8; one written as JSON escapes ("\u00e9", "\ud83d\ude00") or made of
# several CJK characters takes up to about 24; 32 leaves room for the reply's fields around the text.
REPLY_BYTES_PER_TOKEN = 32
# The floor: error bodies, reply envelopes and small budgets (60 tokens are 1,920 bytes) all fit in 1 MB.
MIN_REPLY_BYTES = 1_000_000
# The ceiling: 2 million tokens' worth, far beyond any model's output limit; decoding and parsing this much stays
# within a few hundred MB of memory.
MAX_REPLY_BYTES = 64_000_000
# Answers of calls without a token budget: a batch object (its error list included), a file's receipt.
MAX_API_OBJECT_BYTES = 16_000_000
# A batch result line's envelope (custom_id, ids, status) around the reply itself.
RESULT_LINE_OVERHEAD_BYTES = 16_384
# The smallest `--max-reply-bytes` taken: below it even an error body would be refused.
SMALLEST_REPLY_LIMIT = 1024
MAX_REPLY_BYTES_VARIABLE = "EMPATHYBENCH_MAX_REPLY_BYTES"


class ReplyTooLargeError(TransientBackendError):
    """A reply past its limit: refused before anything of it is parsed or stored; retried as a server fault."""

    def __init__(self, limit: int, host: str) -> None:
        super().__init__("too_large", f"reply of more than {megabytes(limit)} MB from {host or 'the server'}; refused")
        self.limit = limit


def refused_reply(exc: BaseException) -> ReplyTooLargeError | None:
    """The ReplyTooLargeError behind an SDK error (Anthropic's SDK wraps what its HTTP client raises), if any."""
    return next((link for link in exception_chain(exc) if isinstance(link, ReplyTooLargeError)), None)


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what it was raised from or while handling, and so on (each exception once)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def megabytes(count: int) -> str:
    """`count` bytes in MB (10^6 bytes), three significant digits."""
    return significant(count / 1_000_000, 3)


def derived_reply_limit(tokens: int) -> int:
    """The limit of a reply to a request with a budget of `tokens` tokens (floor and ceiling applied)."""
    return max(MIN_REPLY_BYTES, min(MAX_REPLY_BYTES, max(0, tokens) * REPLY_BYTES_PER_TOKEN))


def reply_limit(tokens: int, override: int | None) -> int:
    """The limit of one reply: the user's `override` (bytes) when given, else derived from the token budget."""
    return override if override is not None else derived_reply_limit(tokens)


def check_reply_limit(value: int, what: str) -> int:
    """A user's reply limit (`--max-reply-bytes`, the environment variable), or a one-line UserError."""
    if value < SMALLEST_REPLY_LIMIT:
        raise UserError(f"{what} must be at least {SMALLEST_REPLY_LIMIT} bytes, not {value}")
    return value


def reply_limit_override(option: int | None) -> int | None:
    """The user's limit for every reply: `--max-reply-bytes` when given, else EMPATHYBENCH_MAX_REPLY_BYTES, else
    None (the limit is derived from each request's token budget)."""
    if option is not None:
        return check_reply_limit(option, "--max-reply-bytes")
    value = bytes_from_environment(MAX_REPLY_BYTES_VARIABLE)
    return None if value is None else check_reply_limit(value, MAX_REPLY_BYTES_VARIABLE)


def bytes_from_environment(variable: str) -> int | None:
    """The whole number of bytes the environment variable `variable` holds ("64_000_000" too), None when it is unset
    or blank; a one-line UserError when it is not a whole number. The caller checks its range."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return None
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise UserError(f"{variable}={text[:40]!r} is not a whole number of bytes") from None


# The limit of the reply to the call being made in this task (set by the backend around its SDK call); the HTTP
# client reads it when the reply arrives (models/http_clients.py).
_CURRENT_LIMIT: ContextVar[int | None] = ContextVar("empathybench_reply_limit", default=None)


@contextmanager
def reply_limit_scope(limit: int) -> Iterator[None]:
    """Bound the replies of the calls made inside this block (in this task) to `limit` bytes."""
    token = _CURRENT_LIMIT.set(limit)
    try:
        yield
    finally:
        _CURRENT_LIMIT.reset(token)


def current_reply_limit() -> int:
    """The limit of the reply now arriving: the scope's, else MAX_API_OBJECT_BYTES (a call without a budget)."""
    limit = _CURRENT_LIMIT.get()
    return MAX_API_OBJECT_BYTES if limit is None else limit


async def read_bounded(chunks: AsyncIterable[bytes], limit: int, host: str) -> bytes:
    """Every byte of `chunks` (a decoded body as it streams), or ReplyTooLargeError as soon as there are more than
    `limit` of them (the caller closes the stream)."""
    body = bytearray()
    async for chunk in chunks:
        if len(body) + len(chunk) > limit:
            raise ReplyTooLargeError(limit, host)
        body += chunk
    return bytes(body)


@dataclass(frozen=True)
class ResultFileBounds:
    """How much of a batch's result files is read: one line, and all of its files together."""

    max_line_bytes: int
    max_total_bytes: int

    @staticmethod
    def for_limits(limits: list[int]) -> "ResultFileBounds":
        """The bounds of a batch whose requests' replies have these limits."""
        largest = max(limits, default=MIN_REPLY_BYTES)
        total = sum(limits) + RESULT_LINE_OVERHEAD_BYTES * len(limits)
        return ResultFileBounds(largest + RESULT_LINE_OVERHEAD_BYTES, max(total, largest + RESULT_LINE_OVERHEAD_BYTES))


@dataclass(frozen=True)
class FileLine:
    """One line of a result file: its number (from 1), its bytes, or why it was not read."""

    number: int
    data: bytes | None
    problem: str | None = None
    unterminated: bool = False  # the file ended inside this line (no line break after it)


class ReadCounter:
    """Bytes read so far from the result files of one batch (their bound is shared)."""

    def __init__(self, bounds: ResultFileBounds, host: str) -> None:
        self.bounds = bounds
        self.host = host
        self.read = 0


async def bounded_lines(chunks: AsyncIterable[bytes], counter: ReadCounter) -> AsyncIterator[FileLine]:
    """The non-blank lines of a streamed file, each read only up to the line bound: a longer line is skipped to its
    end and reported; once the files' total bound is passed the reading stops with a last FileLine saying so (the
    lines before it count)."""
    bounds = counter.bounds
    number = 0
    line = bytearray()
    too_long = False
    async for chunk in chunks:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            counter.read += stop - start
            if counter.read > bounds.max_total_bytes:
                yield FileLine(
                    number + 1,
                    None,
                    f"more than {megabytes(bounds.max_total_bytes)} MB of results from {counter.host}; "
                    "the rest refused",
                )
                return
            piece = chunk[start : stop if end < 0 else end]
            start = stop
            if not too_long:
                if len(line) + len(piece) > bounds.max_line_bytes:
                    too_long = True
                    line.clear()
                else:
                    line += piece
            if end < 0:
                break
            number += 1
            if too_long:
                yield FileLine(number, None, f"more than {megabytes(bounds.max_line_bytes)} MB in one line; refused")
            elif line.strip():
                yield FileLine(number, bytes(line))
            line.clear()
            too_long = False
    if too_long:
        yield FileLine(
            number + 1, None, f"more than {megabytes(bounds.max_line_bytes)} MB in one line; refused", unterminated=True
        )
    elif line.strip():
        yield FileLine(number + 1, bytes(line), unterminated=True)
