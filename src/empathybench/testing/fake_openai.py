"""A fake OpenAI-compatible chat-completions server for tests and benchmarks (standard library only).

It serves `POST /v1/chat/completions` and `GET /v1/models` on 127.0.0.1 only, one thread per connection, so
many slow requests overlap instead of queueing. Faults are injected at configurable rates from a seeded RNG
(or scripted for the next requests):

- "429": rate limited, with a Retry-After header (answered at once, as rate limiters do);
- "500": server error (after the latency);
- "drop": the socket is closed without any response (after the latency);
- "malformed": 200 with a JSON body cut short (after the latency);
- "400": a request rejected as invalid (scripted only; answered at once);
- "503": overloaded, "service unavailable" with Retry-After (scripted only; answered at once).

Hostile replies (scripted only), each a 200 a careless client would crash on:

- "surrogate": the normal answer with a lone surrogate escape ("\\ud800") appended to the content;
- "usage_text": `usage.prompt_tokens` is the string "abc";
- "usage_huge": `usage.prompt_tokens` is the JSON number 1e400 (infinite as a float);
- "hang": nothing is sent until the server stops (or `hang_s` passes);
- "drip": headers at once, then the body one byte every `drip_interval_s` seconds;
- "huge": the answer's content is `bomb_bytes` bytes of "a" (default 50 MB), sent as is;
- "bomb_gzip", "bomb_deflate", "bomb_br": the same reply compressed with that Content-Encoding, unasked (a
  compression bomb: 400 MB are about 400 KB of gzip); "bomb_br" needs the brotli package.

Reasoning models, as the real servers behave:

- a model named like OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) answers 400 with OpenAI's error body
  (`unsupported_parameter` / `unsupported_value`) to `max_tokens`, and to `temperature` or `top_p` other than 1;
  it thinks out of sight: `usage.completion_tokens_details.reasoning_tokens`, and empty content with
  finish_reason "length" when the thinking used the whole `max_completion_tokens`;
- `reasoning="reasoning_content"` (vLLM with a reasoning parser, DeepSeek): the thinking in
  `message.reasoning_content`, content null with finish_reason "length" when the budget ran out while thinking;
- `reasoning="think"` (a server without a reasoning parser): `<think>...</think>` before the answer in the
  content, an unclosed `<think>` when the budget ran out while thinking.

The thinking (`thinking_text`, default: decoy score lines of 0 that a parser must never read) counts one token
per word against the budget, before the answer. Scripted "null_length": content null, finish_reason "length".

With `capacity=N` the server takes at most N requests at a time, as a rate-limited API does: a request that
arrives while N are being served is answered 429 at once (OpenAI's error body, code "rate_limit_exceeded", and
Retry-After unless `retry_after` is None) and is not counted among those served.

Prompt caching as OpenAI documents it: a prompt of at least `cache_min_tokens` tokens (default 1,024) is
served from the cache for its longest prefix seen before (same model), in steps of 128 tokens; the usage says so
in `prompt_tokens_details.cached_tokens` (0 when nothing was cached). Tests may set a smaller
`cache_step_tokens`. Tokens are the messages' tokens as `usage.prompt_tokens` counts them (`text_tokens`), in
order, so the cached share is a share of the billed prompt in English and Chinese alike.

A server like llama.cpp's (`roles=("system", "user", "assistant")`, `token_fields=("max_tokens",)`): a message
of another role (OpenAI's `developer`) is answered 500, as llama.cpp's server answers it, and the token cap is read
from `max_tokens` alone (`max_completion_tokens` is ignored: no cap). With `keep_bodies=True` the server keeps
every chat-completions body it received, parsed, in arrival order (`received_bodies`).

With `echo_auth=True` the server behaves as a careless gateway would: its 400 and 500 error messages and its
replies repeat the request's credentials (Authorization and x-api-key headers, the request path with its query),
so tests can check that no key reaches a file or the terminal.

`/v1/files` and `/v1/batches` (the Batch API: upload, create, retrieve, cancel, output and error files) are served
by `fake_openai_batch.FakeOpenAIBatches` (`server.batches`), answering each line as the chat endpoint would,
without counting it among the chat-completions requests.

It counts what it receives (total, per request-body hash, in flight, Authorization headers) so tests can
assert "the server was asked nothing" or "no request was asked twice".

    with FakeOpenAIServer(latency_s=0.2, rate_429=0.1) as server:
        ... point a client at server.base_url ...
        assert server.requests_total == 10

Manual use: `python -m empathybench.testing.fake_openai --port 8000 --latency 1 --rate-429 0.15`.
"""

import argparse
import contextlib
import hashlib
import json
import random
import re
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from http.server import BaseHTTPRequestHandler
from typing import Any, cast

from empathybench.testing.fake_openai_batch import FakeOpenAIBatches
from empathybench.testing.loopback import (
    DEFAULT_BOMB_BYTES,
    LOOPBACK,
    PAD_MARK,
    PADDED_FAULTS,
    LoopbackFake,
    LoopbackHandler,
)

FAULT_KINDS = (
    "429",
    "503",
    "500",
    "drop",
    "malformed",
    "400",
    "surrogate",
    "usage_text",
    "usage_huge",
    "hang",
    "drip",
    "null_length",
    "huge",
    "bomb_gzip",
    "bomb_deflate",
    "bomb_br",
)
REASONING_MODES = ("reasoning_content", "think")
# Model names OpenAI serves as reasoning models (their parameter rules differ), on the last path segment.
_OPENAI_REASONING_NAME = re.compile(r"^(o[1-9]|gpt-5)(?!-chat)")
FALLBACK_REPLY = "I understand how they might feel."
# Score placeholders of the EQ-Bench prompts in en, de, pl and ja ("<score>", "<revised score>", "<Punktzahl>"...).
_SCORE_PLACEHOLDER = re.compile(r"^\s*([^\n:<>]+?):\s*<[^<>\n]*(?:score|Punktzahl|ocena|得点)[^<>\n]*>\s*$", re.M)
_WORD = re.compile(r"\S+")
# OpenAI's prompt cache matches prefixes in steps of this many tokens (from 1,024 on).
CACHE_STEP_TOKENS = 128

AnswerFunction = Callable[[dict[str, Any]], str]


def fill_score_lines(request: dict[str, Any], value: int = 5) -> str:
    """The default answer: `Label: 5` for every `Label: <score>` line of the last user message."""
    messages = request.get("messages") or []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    content = last_user.get("content") if isinstance(last_user, dict) else None
    if not isinstance(content, str):
        return FALLBACK_REPLY
    labels = list(dict.fromkeys(m.group(1).strip() for m in _SCORE_PLACEHOLDER.finditer(content)))
    return "\n".join(f"{label}: {value}" for label in labels) or FALLBACK_REPLY


def decoy_thinking(request: dict[str, Any]) -> str:
    """Default thinking: score lines of 0 (a parser reading the thinking would record zeros) and a change of mind."""
    return f"Let me think this over. A first guess:\n{fill_score_lines(request, 0)}\nNo, on reflection that is wrong."


def is_openai_reasoning_model(model: Any) -> bool:
    return isinstance(model, str) and bool(_OPENAI_REASONING_NAME.search(model.rsplit("/", 1)[-1].lower()))


def openai_reasoning_rejection(request: dict[str, Any]) -> dict[str, Any] | None:
    """OpenAI's 400 body for a parameter its reasoning models do not take, or None."""
    if "max_tokens" in request:
        return {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        }
    for name in ("temperature", "top_p"):
        if name in request and request[name] != 1:
            return {
                "error": {
                    "message": f"Unsupported value: '{name}' does not support {request[name]!r} with this model. "
                    "Only the default (1) value is supported.",
                    "type": "invalid_request_error",
                    "param": name,
                    "code": "unsupported_value",
                }
            }
    return None


def request_body_hash(body: bytes) -> str:
    """Hash of a request body; JSON is canonicalised so key order and spacing do not matter."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        canonical = body
    return hashlib.sha256(canonical).hexdigest()


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


# The chat format's own tokens: per message (role and separators) and the reply's priming, as OpenAI bills them.
CHAT_TOKENS_PER_MESSAGE = 3
CHAT_TOKENS_PER_REPLY = 3


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
# Prompt tokens as a BPE tokenizer splits text before merging (the GPT-2/cl100k pre-tokenizer's pieces: a word
# with its leading space, up to 3 digits, a run of punctuation, a run of whitespace), then one token per common
# word, one more per 8 letters of a long word, one per CJK character and one per 3 punctuation marks. Counting
# words instead made English prompts ~25% "cheaper" than any real tokenizer (and CJK prompts almost free).
# In one pass: a contraction, a CJK character, up to 8 letters of a word, up to 3 digits, up to 3 punctuation marks
# (each with the space before it), a run of whitespace.
_TOKEN = re.compile(
    rf"'(?:s|t|re|ve|m|ll|d)| ?[{_CJK}]| ?[^\W\d_{_CJK}]{{1,8}}|[^\W\d_{_CJK}]{{1,8}}| ?\d{{1,3}}| ?[^\s\w]{{1,3}}|\s+"
)


@lru_cache(maxsize=4096)
def text_tokens(text: str) -> tuple[str, ...]:
    """The tokens of `text` as this server counts them (see above): the units its prompt cache matches too.
    Remembered per text: a conversation sends its earlier messages again with every turn."""
    return tuple(_TOKEN.findall(text))


def count_text_tokens(text: str) -> int:
    return len(text_tokens(text))


def count_prompt_tokens(messages: list[Any]) -> int:
    """`usage.prompt_tokens` of a chat request: its messages' text tokens plus the chat format's tokens."""
    contents = [m["content"] for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)]
    return CHAT_TOKENS_PER_REPLY + sum(CHAT_TOKENS_PER_MESSAGE + count_text_tokens(c) for c in contents)


def truncate_words(text: str, limit: int) -> tuple[str, bool]:
    """Cut `text` after `limit` whitespace-separated tokens, keeping its line breaks."""
    matches = list(_WORD.finditer(text))
    if len(matches) <= limit:
        return text, False
    return (text[: matches[limit - 1].end()] if limit > 0 else ""), True


@dataclass(frozen=True)
class RequestLogEntry:
    """One chat-completions request as the server saw it."""

    index: int
    body_hash: str
    outcome: str  # "ok", a fault kind, or "client_gone" when the client hung up before the answer
    arrived: float  # time.monotonic() when the body had been read
    finished: float  # time.monotonic() when the reply was ready, just before it was sent (or the socket dropped)
    model: str | None


class _Handler(LoopbackHandler):
    @property
    def fake(self) -> "FakeOpenAIServer":
        return cast("FakeOpenAIServer", self.server.fake)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        fake = self.fake
        if path == "/v1/models":
            data = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in fake.models]
            self.send_json(200, {"object": "list", "data": data})
        elif path == "/_fake/stats":
            self.send_json(200, fake.stats())
        elif path.startswith(("/v1/files/", "/v1/batches/")):
            fake.batches.serve_get(self, path)
        else:
            self.send_json(404, _error_body(f"no route GET {path}", "not_found_error"))

    def do_POST(self) -> None:
        raw = self.read_body(int(self.headers.get("Content-Length") or 0))
        if raw is None:
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/files" or path.startswith("/v1/batches"):
            self.fake.batches.serve_post(self, path, raw)
            return
        if path != "/v1/chat/completions":
            self.send_json(404, _error_body(f"no route POST {path}", "not_found_error"))
            return
        self.fake._serve_chat(self, raw)

    def drip(self, status: int, body: bytes, interval_s: float, stopping: threading.Event) -> None:
        """Send the headers, then the body one byte at a time: every read succeeds, the reply never ends soon."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        for index in range(len(body)):
            if stopping.wait(interval_s):
                break
            self.wfile.write(body[index : index + 1])
            self.wfile.flush()
        self.close_connection = True

    def drop(self) -> None:
        """Close the connection without sending a byte of response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _reasoning_rejection(request: dict[str, Any]) -> dict[str, Any] | None:
    """OpenAI's 400 body for a reasoning model's request with parameters it refuses, else None."""
    return openai_reasoning_rejection(request) if is_openai_reasoning_model(request.get("model")) else None


def echo_of_credentials(handler: BaseHTTPRequestHandler) -> str:
    """What a careless server repeats back: the credential headers and the path with its query string."""
    return (
        f"\n(received Authorization: {handler.headers.get('Authorization')}; "
        f"x-api-key: {handler.headers.get('x-api-key')}; path: {handler.path})"
    )


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class FakeOpenAIServer(LoopbackFake):
    """A fake OpenAI-compatible server on 127.0.0.1; use as a context manager or call start()/stop()."""

    handler = _Handler
    thread_name = "fake-openai"

    def __init__(
        self,
        *,
        port: int = 0,
        latency_s: float = 0.0,
        rate_429: float = 0.0,
        retry_after: str | None = "1",
        rate_500: float = 0.0,
        rate_drop: float = 0.0,
        rate_malformed: float = 0.0,
        seed: int = 0,
        answer: AnswerFunction | None = None,
        models: Iterable[str] = ("fake",),
        hang_s: float = 3600.0,
        drip_interval_s: float = 0.5,
        echo_auth: bool = False,
        reasoning: str | None = None,
        thinking_text: AnswerFunction | None = None,
        capacity: int | None = None,
        cache_min_tokens: int = 1024,
        cache_step_tokens: int = CACHE_STEP_TOKENS,
        roles: Iterable[str] | None = None,
        token_fields: Iterable[str] = ("max_tokens", "max_completion_tokens"),
        keep_bodies: bool = False,
        api_key: str | None = None,
        bomb_bytes: int = DEFAULT_BOMB_BYTES,
    ) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError("capacity must be at least 1")
        if reasoning is not None and reasoning not in REASONING_MODES:
            raise ValueError(f"reasoning must be one of {REASONING_MODES} or None")
        self.reasoning = reasoning
        self.thinking_text: AnswerFunction = thinking_text or decoy_thinking
        if rate_429 + rate_500 + rate_drop + rate_malformed > 1.0:
            raise ValueError("fault rates add up to more than 1")
        super().__init__(port)
        self.latency_s = latency_s
        self.rate_429 = rate_429
        self.retry_after = retry_after
        self.rate_500 = rate_500
        self.rate_drop = rate_drop
        self.rate_malformed = rate_malformed
        self.answer: AnswerFunction = answer or fill_score_lines
        # A server that takes only this key (`Authorization: Bearer <key>`), answering any other with OpenAI's 401.
        self.api_key = api_key
        self.models = tuple(models)
        self.hang_s = hang_s
        self.drip_interval_s = drip_interval_s
        self.echo_auth = echo_auth
        self.bomb_bytes = bomb_bytes
        self._rng = random.Random(seed)
        self._scripted: deque[str] = deque()
        self.capacity = capacity
        self._in_flight = 0
        self._admitted = 0  # requests being served within the capacity (those answered 429 for it excluded)
        # The Files and Batches endpoints (fake_openai_batch.py), given what they share with the chat endpoint.
        self.batches = FakeOpenAIBatches(self, reasoning_rejection=_reasoning_rejection, echo=echo_of_credentials)
        self.cache_min_tokens = cache_min_tokens
        self.cache_step_tokens = max(1, cache_step_tokens)
        self._cached_prefixes: set[str] = set()  # hashes of prompt prefixes at the 128-token steps, per model
        self.roles = None if roles is None else frozenset(roles)  # None: any role
        self.token_fields = tuple(token_fields)
        self.keep_bodies = keep_bodies
        self.reset_counters()

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    # --- faults and counters ---------------------------------------------------------------------------

    def script_faults(self, *kinds: str) -> None:
        """Serve these outcomes ("ok" or a fault kind) to the next requests, in arrival order."""
        for kind in kinds:
            if kind != "ok" and kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; known: ok, {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._scripted.extend(kinds)

    def reset_counters(self) -> None:
        with self._lock:
            self._requests_total = 0
            self._body_counts: Counter[str] = Counter()
            self._outcomes: Counter[str] = Counter()
            self._authorizations: set[str] = set()
            self._max_in_flight = self._in_flight  # requests being served now are not forgotten
            self._max_admitted = self._admitted
            self._over_capacity = 0
            self._log: list[RequestLogEntry] = []
            self._bodies: list[Any] = []

    @property
    def requests_total(self) -> int:
        """Chat-completions requests received (every retry counts)."""
        with self._lock:
            return self._requests_total

    @property
    def body_counts(self) -> Counter[str]:
        """How often each distinct request body arrived."""
        with self._lock:
            return Counter(self._body_counts)

    @property
    def outcomes(self) -> Counter[str]:
        with self._lock:
            return Counter(self._outcomes)

    @property
    def authorizations(self) -> set[str]:
        with self._lock:
            return set(self._authorizations)

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat-completions requests being served at one time."""
        with self._lock:
            return self._max_in_flight

    @property
    def max_admitted(self) -> int:
        """The most requests served at one time, those refused for the capacity not counted."""
        with self._lock:
            return self._max_admitted

    @property
    def over_capacity(self) -> int:
        """Requests answered 429 because `capacity` were already being served."""
        with self._lock:
            return self._over_capacity

    @property
    def log(self) -> list[RequestLogEntry]:
        with self._lock:
            return list(self._log)

    @property
    def received_bodies(self) -> list[Any]:
        """The chat-completions bodies received, parsed, in arrival order (kept with `keep_bodies=True`)."""
        with self._lock:
            return list(self._bodies)

    def repeated_bodies(self) -> dict[str, int]:
        """Request bodies that arrived more than once, with their counts."""
        with self._lock:
            return {h: n for h, n in self._body_counts.items() if n > 1}

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests_total": self._requests_total,
                "distinct_bodies": len(self._body_counts),
                "repeated_bodies": sum(1 for n in self._body_counts.values() if n > 1),
                "outcomes": dict(self._outcomes),
                "max_in_flight": self._max_in_flight,
                "in_flight": self._in_flight,
                "capacity": self.capacity,
                "max_admitted": self._max_admitted,
                "over_capacity": self._over_capacity,
                "authorizations": sorted(self._authorizations),
            }

    def _choose_outcome(self) -> str:
        # Called under the lock: the seeded RNG is consumed in arrival order.
        if self._scripted:
            return self._scripted.popleft()
        draw = self._rng.random()
        for kind, rate in (
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("drop", self.rate_drop),
            ("malformed", self.rate_malformed),
        ):
            if draw < rate:
                return kind
            draw -= rate
        return "ok"

    # --- serving ---------------------------------------------------------------------------------------

    def _serve_chat(self, handler: _Handler, raw: bytes) -> None:
        arrived = time.monotonic()
        body_hash = request_body_hash(raw)
        with self._lock:
            self._requests_total += 1
            index = self._requests_total
            self._body_counts[body_hash] += 1
            authorization = handler.headers.get("Authorization")
            if authorization is not None:
                self._authorizations.add(authorization)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            if self.api_key is not None and authorization != f"Bearer {self.api_key}":
                outcome, admitted = "401", False
            elif self.capacity is not None and self._admitted >= self.capacity:
                outcome, admitted = "capacity", False
                self._over_capacity += 1
            else:
                outcome, admitted = self._choose_outcome(), True
                self._admitted += 1
                self._max_admitted = max(self._max_admitted, self._admitted)
            latency = self.latency_s
        try:
            request = json.loads(raw)
        except ValueError:
            request = None
        if self.keep_bodies:
            with self._lock:
                self._bodies.append(request)
        model = request.get("model") if isinstance(request, dict) and isinstance(request.get("model"), str) else None
        echo = echo_of_credentials(handler) if self.echo_auth else ""
        try:
            outcome, reply = self._reply(outcome, request, index, latency, echo)
        finally:
            # Counted before the reply leaves, so a client that has its answer also sees it in the counters.
            entry = RequestLogEntry(index, body_hash, outcome, arrived, time.monotonic(), model)
            with self._lock:
                self._in_flight -= 1
                if admitted:
                    self._admitted -= 1
                self._outcomes[outcome] += 1
                self._log.append(entry)
        try:
            reply(handler)
        except OSError:
            # The client went away (e.g. killed mid-request): nobody is left to answer.
            handler.close_connection = True
            with self._lock:
                if entry in self._log:  # unless the counters were reset meanwhile
                    self._outcomes[outcome] -= 1
                    self._outcomes["client_gone"] += 1
                    self._log[self._log.index(entry)] = replace(entry, outcome="client_gone")

    def _reply(
        self, outcome: str, request: Any, index: int, latency: float, echo: str = ""
    ) -> tuple[str, Callable[[_Handler], None]]:
        """The outcome actually served and how to send it; sleeps for the latency where the outcome has it.

        `echo` (credentials the request carried, in echo mode) is repeated in 400/500 messages and in replies.
        """
        if outcome == "401":
            body = _error_body("Incorrect API key provided (fake).", "invalid_request_error")
            body["error"]["code"] = "invalid_api_key"
            return outcome, lambda handler: handler.send_json(401, body)
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            body = _error_body(f"body must be a JSON object with messages{echo}", "invalid_request_error")
            return "400", lambda handler: handler.send_json(400, body)
        if is_openai_reasoning_model(request.get("model")):
            rejection = openai_reasoning_rejection(request)
            if rejection is not None:
                return "400", lambda handler: handler.send_json(400, rejection)
        refused_role = self._refused_role(request)
        if refused_role is not None:
            body = _error_body(f"Unsupported message role: {refused_role!r} (fake){echo}", "server_error")
            return "500", lambda handler: handler.send_json(500, body)
        if outcome in ("429", "capacity"):
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            if outcome == "capacity":  # worded and typed as OpenAI's own rate-limit answers are
                body = _error_body(
                    f"Rate limit reached for {request.get('model') or 'fake'}: at most {self.capacity} requests "
                    "in flight. Please try again shortly.",
                    "requests",
                )
                body["error"]["code"] = "rate_limit_exceeded"
            else:
                body = _error_body("rate limited (fake)", "rate_limit_exceeded")
            return "429", lambda handler: handler.send_json(429, body, headers)
        if outcome == "503":
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            body = _error_body("The server is overloaded or not ready yet. (fake)", "server_error")
            return outcome, lambda handler: handler.send_json(503, body, headers)
        if outcome == "400":
            body = _error_body(f"request rejected (fake){echo}", "invalid_request_error")
            return outcome, lambda handler: handler.send_json(400, body)
        if latency > 0:
            time.sleep(latency)
        if outcome == "500":
            body = _error_body(f"internal error (fake){echo}", "server_error")
            return outcome, lambda handler: handler.send_json(500, body)
        if outcome == "drop":
            return outcome, _Handler.drop
        if outcome == "malformed":
            cut = b'{"id": "chatcmpl-fake", "object": "chat.completion", "choices": [{"ind'
            return outcome, lambda handler: handler.send_raw(200, cut)
        if outcome == "hang":
            self._stopping.wait(self.hang_s)
            return outcome, _Handler.drop
        try:
            completion = self._completion(index, request, echo)
        except Exception as exc:  # the answer function failed: a 500 keeps the client honest
            body = _error_body(f"fake server error: {exc}", "server_error")
            return "500", lambda handler: handler.send_json(500, body)
        if outcome == "null_length":
            completion["choices"][0]["message"]["content"] = None
            completion["choices"][0]["finish_reason"] = "length"
        if outcome in PADDED_FAULTS:
            completion["choices"][0]["message"]["content"] = PAD_MARK
            size, encoding = self.bomb_bytes, PADDED_FAULTS[outcome]
            return outcome, lambda handler: handler.send_padded_json(200, completion, size, encoding)
        if outcome in ("surrogate", "usage_text", "usage_huge", "drip"):
            raw = self._hostile_body(outcome, completion)
            if outcome == "drip":
                interval, stopping = self.drip_interval_s, self._stopping
                return outcome, lambda handler: handler.drip(200, raw, interval, stopping)
            return outcome, lambda handler: handler.send_raw(200, raw)
        served = outcome if outcome == "null_length" else "ok"
        return served, lambda handler: handler.send_json(200, completion)

    def _refused_role(self, request: dict[str, Any]) -> str | None:
        """The first message role this server does not take (None: all taken, or any role is)."""
        if self.roles is None:
            return None
        for message in request["messages"]:
            role = message.get("role") if isinstance(message, dict) else None
            if role not in self.roles:
                return str(role)
        return None

    @staticmethod
    def _hostile_body(outcome: str, completion: dict[str, Any]) -> bytes:
        if outcome == "surrogate":
            # json.dumps writes the lone surrogate as the escape "\ud800", valid JSON that decodes to invalid text.
            completion["choices"][0]["message"]["content"] += "\ud800"
        elif outcome == "usage_text":
            completion["usage"]["prompt_tokens"] = "abc"
        elif outcome == "usage_huge":
            completion["usage"]["prompt_tokens"] = "__HUGE__"
            return json.dumps(completion).replace('"__HUGE__"', "1e400").encode("utf-8")
        return json.dumps(completion).encode("utf-8")

    def _prompt_cache(self, request: dict[str, Any]) -> int:
        """The prompt's tokens served from the cache: its longest prefix seen before, at a step boundary."""
        words: list[str] = []
        for message in request["messages"]:
            if isinstance(message.get("content"), str) and (tokens := text_tokens(message["content"])):
                # the role goes with the message's first token, so roles matter too
                words += [f"{message.get('role')}\x1d{tokens[0]}", *tokens[1:]]
        if len(words) < max(1, self.cache_min_tokens):
            return 0
        digest = hashlib.sha256(str(request.get("model")).encode())
        steps: list[tuple[int, str]] = []
        step = self.cache_step_tokens
        for end in range(step, len(words) + 1, step):
            digest.update("\x1f".join(words[end - step : end]).encode() + b"\x1e")
            if end >= self.cache_min_tokens:
                steps.append((end, digest.hexdigest()))
        with self._lock:
            cached = max((end for end, key in steps if key in self._cached_prefixes), default=0)
            self._cached_prefixes.update(key for _, key in steps)
        return cached

    def _completion(self, index: int, request: dict[str, Any], echo: str = "") -> dict[str, Any]:
        text = self.answer(request)
        finish_reason = "stop"
        max_tokens = next((request[f] for f in self.token_fields if request.get(f)), None)
        hidden_thinking = is_openai_reasoning_model(request.get("model"))
        thinking: str | None = None
        thinking_cut = False
        if hidden_thinking or self.reasoning is not None:
            thinking = self.thinking_text(request)
            if isinstance(max_tokens, int):
                thinking, thinking_cut = truncate_words(thinking, max_tokens)
                # Thinking that fills the budget leaves no token for the answer.
                thinking_cut = thinking_cut or count_words(thinking) >= max_tokens
                max_tokens -= count_words(thinking)
        reasoning_tokens = count_words(thinking) if thinking is not None else 0
        if thinking_cut:
            text, finish_reason = "", "length"
        elif isinstance(max_tokens, int):
            text, cut = truncate_words(text, max_tokens)
            finish_reason = "length" if cut else "stop"
        text += echo  # after the cut, so that it always arrives
        prompt_tokens = count_prompt_tokens(request["messages"])
        cached_tokens = min(self._prompt_cache(request), prompt_tokens)
        completion_tokens = count_words(text) + reasoning_tokens
        message: dict[str, Any] = {"role": "assistant", "content": text}
        # As OpenAI reports reasoning models' hidden thinking; absent for models that do not think.
        details = {"completion_tokens_details": {"reasoning_tokens": reasoning_tokens}} if thinking is not None else {}
        if self.reasoning == "reasoning_content" and not hidden_thinking:
            message["reasoning_content"] = thinking
            if thinking_cut:
                message["content"] = None
        elif self.reasoning == "think" and not hidden_thinking:
            closing = "" if thinking_cut else "\n</think>\n\n"
            message["content"] = f"<think>\n{thinking}{closing}{text}"
        return {
            "id": f"chatcmpl-fake-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or "fake",
            "system_fingerprint": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
                **details,
            },
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m empathybench.testing.fake_openai",
        description="A fake OpenAI-compatible chat-completions server on 127.0.0.1 with injected faults.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--rate-429", type=float, default=0.0, help="share of requests answered 429")
    parser.add_argument("--retry-after", default="1", help="Retry-After header value sent with 429s")
    parser.add_argument("--rate-500", type=float, default=0.0, help="share of requests answered 500")
    parser.add_argument("--rate-drop", type=float, default=0.0, help="share of connections closed unanswered")
    parser.add_argument("--rate-malformed", type=float, default=0.0, help="share answered with broken JSON")
    parser.add_argument("--capacity", type=int, help="requests served at a time; 429 above (default: no limit)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault RNG")
    parser.add_argument("--reasoning", choices=REASONING_MODES, help="answer as a reasoning model would")
    parser.add_argument("--stats-out", help="write the final counters as JSON to this file on exit")
    args = parser.parse_args(argv)

    server = FakeOpenAIServer(
        port=args.port,
        latency_s=args.latency,
        rate_429=args.rate_429,
        retry_after=args.retry_after,
        rate_500=args.rate_500,
        rate_drop=args.rate_drop,
        rate_malformed=args.rate_malformed,
        seed=args.seed,
        reasoning=args.reasoning,
        capacity=args.capacity,
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        print(f"fake OpenAI server listening on {server.base_url}", flush=True)
        while not stop.wait(0.5):
            pass
        stats = server.stats()
    if args.stats_out:
        with open(args.stats_out, "w", encoding="utf-8") as handle:
            json.dump(stats, handle, indent=2)
    print(json.dumps(stats), flush=True)


__all__ = [
    "FAULT_KINDS",
    "PADDED_FAULTS",
    "REASONING_MODES",
    "FakeOpenAIServer",
    "RequestLogEntry",
    "decoy_thinking",
    "echo_of_credentials",
    "fill_score_lines",
    "is_openai_reasoning_model",
    "request_body_hash",
]

if __name__ == "__main__":
    main()
