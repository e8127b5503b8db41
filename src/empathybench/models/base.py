"""The one small protocol every model backend speaks, and the request/response records it uses."""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


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

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["stop"] = list(self.stop)
        return data


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    sampling: Sampling

    @staticmethod
    def of(messages: Sequence[Message] | str, sampling: Sampling) -> "ChatRequest":
        if isinstance(messages, str):
            messages = (Message("user", messages),)
        return ChatRequest(tuple(messages), sampling)

    def messages_as_dicts(self) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.content} for m in self.messages]


@dataclass
class ChatResponse:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


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
    """A model behind one async call. Backends never retry; the engine does."""

    provider: str
    model: str
    default_concurrency: int

    def identity(self) -> dict[str, Any]:
        """What identifies the answering model in cache keys and run.json (never secrets)."""
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
