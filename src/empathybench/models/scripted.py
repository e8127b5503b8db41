"""A scripted backend for tests and demos: answers come from a Python function, no model involved."""

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from empathybench.errors import ModelConfigError
from empathybench.models.base import Backend, Canned, ChatRequest, ChatResponse

Responder = Callable[[ChatRequest], "str | ChatResponse | Awaitable[str | ChatResponse]"]

_SCORE_LINE = re.compile(r"^([^\n:<>]+):\s*<(?:revised )?score>\s*$", re.MULTILINE)


def score_line_labels(prompt: str) -> list[str]:
    """The labels of the prompt's `Label: <score>` lines (EQ-Bench's answer template), in order, once each."""
    return list(dict.fromkeys(m.group(1).strip() for m in _SCORE_LINE.finditer(prompt)))


def _fill_score_lines(request: ChatRequest, value: int) -> str:
    """Answer every `Label: <score>` line of the prompt with the same value."""
    labels = score_line_labels(request.messages[-1].content)
    return "\n".join(f"{label}: {value}" for label in labels) or "I cannot answer that."


BUILTIN_SCRIPTS: dict[str, Responder] = {
    "echo": lambda request: request.messages[-1].content,
    "fives": lambda request: _fill_score_lines(request, 5),
    "zeros": lambda request: _fill_score_lines(request, 0),
    "refuse": lambda request: "I'm sorry, I can't help with that.",
}
_registered: dict[str, Responder] = {}


def register_script(name: str, responder: Responder) -> None:
    """Make `scripted/<name>` answer with `responder` (used by tests)."""
    _registered[name] = responder


class ScriptedBackend(Backend):
    provider = "scripted"
    default_concurrency = 16

    def __init__(
        self, name: str, responder: Responder | None = None, canned: Mapping[str, Canned] | None = None
    ) -> None:
        self.model = name
        responder = responder or _registered.get(name) or BUILTIN_SCRIPTS.get(name)
        if responder is None:
            from empathybench.models.plausible import PlausibleResponder, plausible_variant

            if (variant := plausible_variant(name)) is not None:
                responder = PlausibleResponder(variant, canned)
        if responder is None:
            known = ", ".join(sorted({*BUILTIN_SCRIPTS, *_registered, "plausible[-K]"}))
            raise ModelConfigError(f"unknown script {name!r} for scripted/<name>; known: {known}")
        self._responder = responder
        self.calls: list[ChatRequest] = []

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model}

    def set_request_timeout(self, seconds: float) -> None:
        """Nothing to bound: answers come from a function in process."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls.append(request)
        result = self._responder(request)
        if asyncio.iscoroutine(result) or isinstance(result, Awaitable):
            result = await result
        if isinstance(result, ChatResponse):
            return result
        text = str(result)
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        return ChatResponse(text=text, prompt_tokens=prompt_words, completion_tokens=len(text.split()))

    async def aclose(self) -> None:
        return None
