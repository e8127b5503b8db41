"""A fake Anthropic Messages API server for tests (standard library only), in the style of `fake_openai`.

It serves `POST /v1/messages` (non-streaming) on 127.0.0.1 only, one thread per connection, and behaves as the
API does where a client can go wrong:

- it requires an `anthropic-version` header and a key (`x-api-key`, or `Authorization: Bearer`, which SDK 2.x
  sends; the API reads x-api-key when both are present) and answers 401 `authentication_error` to a wrong one;
- under API version 2026-10-21 it answers 400 to `temperature`, `top_p` or `top_k`, even at their defaults, as the
  API does; under 2023-06-01 it takes them;
- answers have the API's fields: id, type "message", role, content [{type: "text", text}], model, stop_reason,
  stop_sequence, usage {input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens};
- scripted "huge" answers with a text of `bomb_bytes` bytes (default 50 MB), "bomb_gzip", "bomb_deflate" and
  "bomb_br" with the same answer compressed that way, unasked (a compression bomb);
- errors are `{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`; scripted faults
  "400", "401", "403", "404", "429" (with retry-after), "500" and "529" (overloaded_error);
- extended thinking (`thinking: {type: "enabled", budget_tokens: N}`): N >= 1024 and N < max_tokens, and no
  temperature other than 1 nor top_k with it (400 otherwise, as the API words it); the answer's content is
  [{type: "thinking", thinking, signature}, {type: "text", text}], the thinking (`thinking_text`, default: decoy
  score lines of 0) counting one token per word against max_tokens before the text;
- with `echo_auth=True` its 400/500 messages and its replies repeat the request's credentials;
- prompt caching as the API documents it: `system` and message `content` may be strings or lists of text blocks;
  a block with `cache_control: {type: "ephemeral"}` (at most 4 per request) marks the prefix up to and including
  it. A marked prefix seen before (same model) is read from the cache (`cache_read_input_tokens`), one not seen
  yet is written (`cache_creation_input_tokens`), both only from `cache_min_tokens` words (default 1,024, the
  API's minimum for most models); `input_tokens` counts the rest of the prompt, as the API does.

`/v1/messages/batches` (create, retrieve, cancel, results) is served by `fake_anthropic_batch.FakeMessageBatches`
(`server.batches`), each entry answered as `POST /v1/messages` would answer its params; those are not recorded in
`requests` (which stay the Messages calls).

Every request (body, anthropic-version, credential headers, outcome) is recorded in `requests`.

    with FakeAnthropicServer(api_key="sk-ant-test") as server:
        ... point ANTHROPIC_BASE_URL at server.base_url ...
        assert server.requests[0].body["system"] == "..."
"""

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, cast

from empathybench.testing.fake_anthropic_batch import FakeMessageBatches
from empathybench.testing.fake_openai import (
    count_words,
    decoy_thinking,
    echo_of_credentials,
    fill_score_lines,
    truncate_words,
)
from empathybench.testing.loopback import (
    DEFAULT_BOMB_BYTES,
    LOOPBACK,
    PAD_MARK,
    PADDED_FAULTS,
    LoopbackFake,
    LoopbackHandler,
)

API_VERSIONS = ("2023-06-01", "2026-10-21")
VERSIONS_WITHOUT_SAMPLING = frozenset({"2026-10-21"})
SAMPLING_FIELDS = ("temperature", "top_p", "top_k")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
# The faults whose answer is a padded reply (testing/loopback.py), and its Content-Encoding.
FAULT_KINDS = (*(str(status) for status in ERROR_TYPES), *PADDED_FAULTS)
MAX_BODY_BYTES = 8 * 1024 * 1024

AnswerFunction = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RecordedRequest:
    """One POST /v1/messages as the server saw it."""

    index: int
    path: str
    body: Any  # the parsed JSON body (None when it was not JSON)
    api_version: str | None
    x_api_key: str | None
    authorization: str | None
    outcome: str  # "ok" or the HTTP status served
    arrived: float  # time.monotonic() when the body had been read


def error_body(status: int, message: str, index: int) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        "request_id": f"req_fake_{index}",
    }


class _Handler(LoopbackHandler):
    @property
    def fake(self) -> "FakeAnthropicServer":
        return cast("FakeAnthropicServer", self.server.fake)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self.send_json(413, error_body(413, "request too large", 0))
            return
        raw = self.read_body(length)
        if raw is None:
            return
        if self.path.split("?", 1)[0].rstrip("/").startswith("/v1/messages/batches"):
            self.fake.batches.serve(self, "POST", raw)
            return
        self.fake._serve(self, raw)

    def do_GET(self) -> None:
        self.fake.batches.serve(self, "GET", b"")


class FakeAnthropicServer(LoopbackFake):
    """A fake Anthropic Messages API on 127.0.0.1; use as a context manager or call start()/stop()."""

    handler = _Handler
    thread_name = "fake-anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        port: int = 0,
        retry_after: str | None = "1",
        answer: AnswerFunction | None = None,
        echo_auth: bool = False,
        thinking_text: AnswerFunction | None = None,
        cache_min_tokens: int = 1024,
        bomb_bytes: int = DEFAULT_BOMB_BYTES,
    ) -> None:
        super().__init__(port)
        self.bomb_bytes = bomb_bytes
        self.thinking_text: AnswerFunction = thinking_text or decoy_thinking
        self.cache_min_tokens = cache_min_tokens
        self._cached_prefixes: set[str] = set()  # hashes of the marked prefixes written to the "cache"
        self.api_key = api_key  # None: any key is accepted (one must still be sent)
        self.retry_after = retry_after
        self.answer: AnswerFunction = answer or fill_score_lines
        self.echo_auth = echo_auth
        self._scripted: deque[str] = deque()
        self._requests: list[RecordedRequest] = []
        self.batches = FakeMessageBatches(self, error_body)  # the Message Batches endpoints (fake_anthropic_batch.py)

    @property
    def base_url(self) -> str:
        """The URL to give as ANTHROPIC_BASE_URL (the SDK adds /v1/messages)."""
        return f"http://{LOOPBACK}:{self.port}"

    # --- faults and records ----------------------------------------------------------------------------

    def script_faults(self, *kinds: str) -> None:
        """Serve these outcomes ("ok" or an HTTP status of FAULT_KINDS) to the next requests, in arrival order."""
        for kind in kinds:
            if kind != "ok" and kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; known: ok, {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._scripted.extend(kinds)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def requests_total(self) -> int:
        with self._lock:
            return len(self._requests)

    # --- serving ---------------------------------------------------------------------------------------

    def _serve(self, handler: _Handler, raw: bytes) -> None:
        arrived = time.monotonic()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = handler.headers
        with self._lock:
            index = len(self._requests) + 1
            scripted = self._scripted.popleft() if self._scripted else "ok"
        echo = echo_of_credentials(handler) if self.echo_auth else ""
        status, payload = self._respond(handler, body, scripted, index, echo)
        record = RecordedRequest(
            index=index,
            path=handler.path,
            body=body,
            api_version=headers.get("anthropic-version"),
            x_api_key=headers.get("x-api-key"),
            authorization=headers.get("Authorization"),
            outcome=(scripted if scripted in PADDED_FAULTS else "ok") if status == 200 else str(status),
            arrived=arrived,
        )
        with self._lock:
            self._requests.append(record)
        if status == 200 and scripted in PADDED_FAULTS:
            payload["content"][-1]["text"] = PAD_MARK
            handler.send_padded_json(200, payload, self.bomb_bytes, PADDED_FAULTS[scripted])
            return
        extra = {"request-id": f"req_fake_{index}"}
        if status == 429 and self.retry_after is not None:
            extra["retry-after"] = self.retry_after
        handler.send_json(status, payload, extra)

    def _respond(self, handler: _Handler, body: Any, scripted: str, index: int, echo: str) -> tuple[int, Any]:
        """The status and JSON payload for one request, checked in the API's order: route, auth, version, body."""
        path = handler.path.split("?", 1)[0].rstrip("/")
        if path != "/v1/messages":
            return 404, error_body(404, f"Not found: POST {path}", index)
        refused = self.refusal(handler, index)
        if refused is not None:
            return refused
        version = handler.headers["anthropic-version"]
        if scripted not in ("ok", *PADDED_FAULTS):
            status = int(scripted)
            message = {429: "Number of requests has exceeded your rate limit", 529: "Overloaded"}.get(
                status, f"fake {ERROR_TYPES[status]}"
            )
            return status, error_body(status, message + (echo if status in (400, 500) else ""), index)
        problem = self._invalid(body, version)
        if problem is not None:
            return 400, error_body(400, problem + echo, index)
        try:
            text = self.answer(body)
        except Exception as exc:  # the answer function failed: a 500 keeps the client honest
            return 500, error_body(500, f"fake server error: {exc}{echo}", index)
        thinking = self.thinking_text(body) if isinstance(body.get("thinking"), dict) else None
        message = self._message(index, body, text, echo, thinking)
        read, written = self._prompt_cache(body)
        usage = message["usage"]
        usage.update(
            input_tokens=usage["input_tokens"] - read - written,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=written,
        )
        return 200, message

    def _prompt_cache(self, body: dict[str, Any]) -> tuple[int, int]:
        """Tokens of the prompt read from and written to the cache, from the request's `cache_control` marks."""
        marked: list[tuple[str, int]] = []  # (hash of the prefix up to a marked block, its tokens)
        seen: list[str] = []
        tokens = 0
        for block in _blocks(body):
            seen.append(block.get("text", ""))
            tokens += count_words(block.get("text", ""))
            if isinstance(block.get("cache_control"), dict):
                digest = hashlib.sha256(json.dumps([body.get("model"), seen]).encode()).hexdigest()
                marked.append((digest, tokens))
        marked = [(digest, n) for digest, n in marked if n >= self.cache_min_tokens]
        if not marked:
            return 0, 0
        with self._lock:
            read = next((n for digest, n in reversed(marked) if digest in self._cached_prefixes), 0)
            self._cached_prefixes.update(digest for digest, _ in marked)
        return read, marked[-1][1] - read

    def refusal(self, handler: BaseHTTPRequestHandler, index: int) -> tuple[int, Any] | None:
        """A missing or wrong key (401) or API version (400), as the API checks them before the body; else None."""
        headers = handler.headers
        x_api_key = headers.get("x-api-key")
        bearer = (headers.get("Authorization") or "").removeprefix("Bearer ").strip() or None
        key = x_api_key or bearer
        if key is None:
            return 401, error_body(401, "x-api-key header is required", index)
        if self.api_key is not None and key != self.api_key:
            return 401, error_body(401, "invalid x-api-key", index)
        version = headers.get("anthropic-version")
        if version is None:
            return 400, error_body(400, "anthropic-version: header is required", index)
        if version not in API_VERSIONS:
            return 400, error_body(400, f"anthropic-version: unknown version {version!r}", index)
        return None

    @staticmethod
    def _invalid(body: Any, version: str) -> str | None:
        """Why a request body is refused, as the API words it, or None."""
        if not isinstance(body, dict):
            return "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return "model: Field required"
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            return "max_tokens: Field required (an integer >= 1)"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: Field required"
        if any(not isinstance(m, dict) or m.get("role") not in ("user", "assistant") for m in messages):
            return "messages: roles must be user or assistant (the system prompt goes in `system`)"
        if messages[0].get("role") != "user":
            return "messages: first message must use the user role"
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            return "system: Input should be a valid string or a list of text blocks"
        if sum(isinstance(block.get("cache_control"), dict) for block in _blocks(body)) > 4:
            return "A maximum of 4 blocks with cache_control may be provided. Found more."
        if version in VERSIONS_WITHOUT_SAMPLING:
            for field in SAMPLING_FIELDS:
                if field in body:
                    return f"{field}: Extra inputs are not permitted"
        temperature = body.get("temperature")
        if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 1):
            return "temperature: Input should be less than or equal to 1"
        thinking = body.get("thinking")
        if thinking is not None:
            budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
            if not isinstance(thinking, dict) or thinking.get("type") != "enabled" or not isinstance(budget, int):
                return "thinking: expected {type: enabled, budget_tokens: int}"
            if budget < 1024:
                return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            if max_tokens <= budget:
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
            if temperature is not None and temperature != 1:
                return (
                    "`temperature` may only be set to 1 when thinking is enabled. "
                    "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/"
                    "extended-thinking#feature-compatibility"
                )
            if "top_k" in body:
                return "`top_k` is not allowed when thinking is enabled"
        return None

    @staticmethod
    def _message(index: int, body: dict[str, Any], text: str, echo: str, thinking: str | None) -> dict[str, Any]:
        stop_reason = "end_turn"
        budget = body["max_tokens"]
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            thinking, _ = truncate_words(thinking, body["thinking"]["budget_tokens"])
            budget -= count_words(thinking)
            blocks.append({"type": "thinking", "thinking": thinking, "signature": f"fake-signature-{index}"})
        text, cut = truncate_words(text, budget)
        if cut:
            stop_reason = "max_tokens"
        text += echo  # after the cut, so that it always arrives
        blocks.append({"type": "text", "text": text})
        input_tokens = sum(count_words(block.get("text", "")) for block in _blocks(body))
        return {
            "id": f"msg_fake_{index}",
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "model": body["model"],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": count_words(text) + (count_words(thinking) if thinking is not None else 0),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt's text blocks in the API's order (system, then each message), strings read as one block."""
    parts = [body.get("system")] + [m.get("content") for m in body["messages"]]
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, list):
            blocks += [b for b in part if isinstance(b, dict) and isinstance(b.get("text", ""), str)]
    return blocks


__all__ = ["API_VERSIONS", "FAULT_KINDS", "PADDED_FAULTS", "FakeAnthropicServer", "RecordedRequest", "error_body"]
