"""The one small protocol every model backend speaks, and the request/response records it uses."""

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from empathybench.models.capabilities import ModelArgs


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Sampling:
    """Every sampling setting, passed explicitly to the backend so that backends agree.

    `None` means "not sent": the provider cannot take the setting (e.g. `min_p` over the OpenAI API), or the
    protocol being reproduced does not send it (lm-eval sends no `top_p`).
    """

    temperature: float
    max_tokens: int
    top_p: float | None = 1.0
    top_k: int | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    # What a protocol gives one particular model besides its sampling (e.g. upstream's per-model reasoning effort
    # and whole token budget), as model arguments: the backend applies them under the user's own (`-M`,
    # `--judge-arg`, `--simulator-arg`), which win key by key. None: none.
    model_args: ModelArgs | None = None

    def as_dict(self) -> dict[str, Any]:
        # Written out rather than dataclasses.asdict (a deep copy through every field): this runs twice per call
        # (cache key, record). The same keys in the same order; tests/test_harness_speedups.py checks it against asdict.
        # `model_args` only when given, so that the cache keys of requests without it stay what they were.
        fields = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "min_p": self.min_p,
            "repeat_penalty": self.repeat_penalty,
            "stop": list(self.stop),
            "seed": self.seed,
        }
        if self.model_args is not None:
            fields["model_args"] = self.model_args.as_dict()
        return fields


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    sampling: Sampling
    # Who asks (the instrument's name, "<name>:judge" for its judge calls): an opaque label that lets a scripted
    # model answer in the instrument's format. Never sent to a model, never part of the cache key.
    tag: str = ""

    @staticmethod
    def of(messages: Sequence[Message] | str, sampling: Sampling, tag: str = "") -> "ChatRequest":
        if isinstance(messages, str):
            messages = (Message("user", messages),)
        return ChatRequest(tuple(messages), sampling, tag)

    def messages_as_dicts(self) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.content} for m in self.messages]


@dataclass(frozen=True)
class Draw:
    """Deterministic pseudo-random numbers in [0, 1) for scripted answers: a hash of the variant and the parts, so
    `scripted/plausible-K` answers the same prompt the same way on every machine, and K gives another "model"."""

    variant: int
    salt: str = ""  # the sampling seed when the request samples (another seed, another answer), else ""

    def __call__(self, *parts: str) -> float:
        digest = hashlib.sha256("\x1f".join((str(self.variant), *parts)).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64


# An instrument's canned answer for a scripted model: the reply to `request` in the instrument's format, or None
# to leave the request to the generic answers.
Canned = Callable[[ChatRequest, Draw], "str | None"]


@dataclass
class ChatResponse:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    # What the backend knows of this call beyond the reply (e.g. the body another harness's provider sent), kept in
    # the call's record (samples.jsonl) as it is; never cached: a reply read from the cache has none.
    extra: dict[str, Any] = field(default_factory=dict)
    # What `normalise_response` had to repair in this reply (recorded with the call, not cached).
    notes: tuple[str, ...] = ()
    # The model's thinking, kept apart from `text` (never parsed); None when the reply carried none.
    reasoning: str | None = None
    # The answer never arrived (content null or empty at the token limit, or cut inside `<think>`).
    truncated: bool = False
    # Input tokens the provider served from its prompt cache (part of prompt_tokens; priced lower), and those it
    # wrote to the cache for later calls (Anthropic; part of prompt_tokens, priced higher).
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0


class TransientBackendError(Exception):
    """Worth retrying: 429, 5xx, timeouts, dropped connections, malformed bodies."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class RequestRejectedError(Exception):
    """A 4xx other than 429 for this request (e.g. prompt too long): not retried, recorded on the item."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


class Backend(Protocol):
    """A model behind one async call. Backends never retry; the engine does.

    A backend subclasses this protocol to inherit the defaults of its optional parts (`interruptible`, `describe`,
    `request_parameters`); `set_request_timeout` is every backend's own.
    """

    provider: str
    model: str
    default_concurrency: int
    # Whether a call can be abandoned mid-way: an in-process model (llama.cpp) cannot be interrupted inside its C
    # call, so the engine bounds its calls by max_tokens instead of a timeout.
    interruptible: bool = True

    def identity(self) -> dict[str, Any]:
        """What identifies the answering model in cache keys and run.json (never secrets)."""
        ...

    def describe(self) -> dict[str, Any]:
        """The model as run.json records it: its identity, and what else is known of it (e.g. a file's hash)."""
        return self.identity()

    def request_parameters(self, request: ChatRequest) -> dict[str, Any] | None:
        """What the request body carries besides the messages, as sent (recorded with each call); None: the
        backend sends the instrument's sampling as it is."""
        return None

    def set_request_timeout(self, seconds: float) -> None:
        """Bound every request of this backend to `seconds` (`--timeout`), its own HTTP client's included; the
        engine sets it before the first call. A backend that cannot be interrupted ignores it."""
        ...

    async def complete(self, request: ChatRequest) -> ChatResponse: ...

    async def aclose(self) -> None: ...


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# The default bound on one whole request (connect, wait, every byte of the body), in seconds (`--timeout`):
# hosted APIs answer a benchmark prompt in well under a minute; a slow local server may need it raised.
DEFAULT_REQUEST_TIMEOUT_S = 120.0
# A token count above this is no count (one call cannot use a hundred million tokens); it is recorded as 0.
MAX_TOKEN_COUNT = 100_000_000
# Short reply metadata (finish_reason, model name) is kept to this many characters.
MAX_LABEL_CHARS = 200
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def valid_text(text: str) -> tuple[str, int]:
    """`text` as valid Unicode (encodable as UTF-8): lone surrogates become U+FFFD; also how many were replaced.

    A JSON body may carry "\\ud800" escapes that Python decodes into unpaired surrogates, which no UTF-8 file,
    SQLite row or terminal can take.
    """
    replaced = len(_LONE_SURROGATE.findall(text))
    return (_LONE_SURROGATE.sub("\ufffd", text) if replaced else text), replaced


def token_count(value: Any) -> tuple[int, str | None]:
    """A usage figure as a sane non-negative int, or 0 with a note saying what was wrong with it."""
    if value is None:
        return 0, None
    if isinstance(value, bool):
        return 0, f"not a number: {value!r}"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return 0, f"not a number: {value[:40]!r}"
    if not isinstance(value, int | float):
        return 0, f"not a number: {type(value).__name__}"
    if isinstance(value, float) and not math.isfinite(value):
        return 0, f"not finite: {value!r}"
    if value < 0 or value > MAX_TOKEN_COUNT:
        return 0, f"out of range 0..{MAX_TOKEN_COUNT}: {value!r}"
    if value != int(value):
        return int(value), f"not a whole number: {value!r}"
    return int(value), None


def _short_label(value: Any) -> str | None:
    if value is None:
        return None
    text, _ = valid_text(value if isinstance(value, str) else repr(value))
    return text[:MAX_LABEL_CHARS]


def normalise_response(response: ChatResponse) -> ChatResponse:
    """A reply made safe to record whatever the server sent: valid text, sane usage, short metadata.

    Every repair is noted in `notes`, so a damaged reply stays data about its item instead of crashing the run.
    """
    notes = list(response.notes)
    text = response.text if isinstance(response.text, str) else ("" if response.text is None else str(response.text))
    text, replaced = valid_text(text)
    if replaced:
        notes.append(f"reply text had {replaced} invalid characters (lone surrogates), replaced by U+FFFD")
    reasoning = response.reasoning
    if reasoning is not None:
        reasoning, replaced = valid_text(reasoning if isinstance(reasoning, str) else str(reasoning))
        if replaced:
            notes.append(f"reasoning text had {replaced} invalid characters (lone surrogates), replaced by U+FFFD")
    counts: dict[str, int] = {}
    for name in ("prompt_tokens", "completion_tokens", "cached_input_tokens", "cache_write_input_tokens"):
        counts[name], problem = token_count(getattr(response, name))
        if problem:
            notes.append(f"usage {name} {problem}; recorded as {counts[name]}")
    return replace(
        response,
        text=text,
        reasoning=reasoning,
        truncated=bool(response.truncated),
        finish_reason=_short_label(response.finish_reason),
        model=_short_label(response.model),
        notes=tuple(notes),
        **counts,
    )
