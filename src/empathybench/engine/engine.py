"""The engine: every model call of every instrument goes through `Engine.generate`.

Order of a call: response cache → concurrency limit → backend, with retries (exponential backoff with
jitter, honouring Retry-After) for 429, 5xx, timeouts, dropped connections and malformed bodies.

Every reply passes `normalise_response` (valid text, sane usage) whatever the backend, and one whole request
is bounded by `request_timeout_s` (a retryable "timeout"), not only each socket read.
"""

import asyncio
import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from empathybench.engine.cache import ResponseCache, cache_key
from empathybench.errors import BackendUnavailableError
from empathybench.models.base import (
    DEFAULT_REQUEST_TIMEOUT_S,
    Backend,
    ChatRequest,
    ChatResponse,
    Message,
    RequestRejectedError,
    Sampling,
    TransientBackendError,
    normalise_response,
)

# samples.jsonl keeps at most this many characters of one reply (its head), with the full length beside it.
# Real replies are a few thousand characters; this bound only stops a runaway or hostile reply from filling
# the disk and every report that reads the file.
MAX_STORED_REPLY_CHARS = 100_000


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0
    # Before any call has succeeded, a server that refuses connections is probably not there at all.
    unreachable_after: int = 3

    def backoff(self, retry_index: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            # Honour the server's wait, plus a little jitter so waiting clients do not return in lockstep.
            return min(retry_after, self.max_retry_after_s) + rng.uniform(0, 0.1 * self.base_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * (2**retry_index))
        return rng.uniform(ceiling / 2, ceiling)  # "equal jitter"


@dataclass
class RunStats:
    """Live counters for the progress display and run.json."""

    items_total: int = 0
    items_done: int = 0
    items_failed: int = 0
    in_flight: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    retries_by_kind: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    def as_dict(self) -> dict[str, Any]:
        return {
            "items_total": self.items_total,
            "items_done": self.items_done,
            "items_failed": self.items_failed,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "retries_by_kind": dict(self.retries_by_kind),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def stored_text(text: str) -> str:
    """The head of `text` that a record keeps (at most MAX_STORED_REPLY_CHARS characters)."""
    return text[:MAX_STORED_REPLY_CHARS]


@dataclass
class Generation:
    """One answered call, as a benchmark sees it and as samples.jsonl records it."""

    text: str
    cached: bool
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    attempt: int
    repetition: int
    retries: int = 0
    notes: tuple[str, ...] = ()  # what normalisation repaired in the reply

    def as_record(self, request: ChatRequest) -> dict[str, Any]:
        messages = request.messages_as_dicts()
        long_messages = [m for m in messages if len(m["content"]) > MAX_STORED_REPLY_CHARS]
        for message in long_messages:  # e.g. a judge prompt quoting a runaway reply
            message["content_chars"] = len(message["content"])  # type: ignore[assignment]
            message["content"] = stored_text(message["content"])
        record: dict[str, Any] = {
            "messages": messages,
            "sampling": request.sampling.as_dict(),
            "repetition": self.repetition,
            "attempt": self.attempt,
            "reply": stored_text(self.text),
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached": self.cached,
            "retries": self.retries,
        }
        if len(self.text) > MAX_STORED_REPLY_CHARS:
            record["reply_chars"] = len(self.text)
            record["reply_cut"] = f"stored the first {MAX_STORED_REPLY_CHARS} of {len(self.text)} characters"
        if self.notes:
            record["notes"] = list(self.notes)
        return record


class CallFailedError(Exception):
    """A call that could not be answered (rejected, or retries exhausted). The item records it."""


class Engine:
    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None,
        max_concurrency: int | None = None,
        retry: RetryPolicy | None = None,
        stats: RunStats | None = None,
        seed: int = 0,
        request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
    ) -> None:
        self.backend = backend
        # An in-process backend (llama.cpp) cannot be interrupted inside its C call: a timeout there would only
        # abandon a thread that goes on holding the model; its calls are bounded by max_tokens instead.
        self.request_timeout_s = request_timeout_s if getattr(backend, "interruptible", True) else None
        set_sdk_timeout = getattr(backend, "set_request_timeout", None)
        if self.request_timeout_s is not None and callable(set_sdk_timeout):
            set_sdk_timeout(self.request_timeout_s)
        self.identity = backend.identity()
        self.cache = cache
        self.max_concurrency = max_concurrency or backend.default_concurrency
        self._slots = asyncio.Semaphore(self.max_concurrency)
        self.retry = retry or RetryPolicy()
        self.stats = stats or RunStats()
        self._rng = random.Random(seed)
        self._any_success = False

    async def generate(
        self,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        *,
        repetition: int = 0,
        attempt: int = 0,
        tag: str = "",
    ) -> tuple[ChatRequest, Generation]:
        request = ChatRequest.of(messages, sampling, tag)
        key = cache_key(self.identity, request, repetition=repetition, attempt=attempt)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                hit = normalise_response(hit)  # a cache written by another version is read as carefully as a server
                return request, self._generation(hit, cached=True, attempt=attempt, repetition=repetition)
        response, retries = await self._call_with_retries(request)
        if self.cache is not None:
            self.cache.put(key, response)
        self.stats.prompt_tokens += response.prompt_tokens
        self.stats.completion_tokens += response.completion_tokens
        generation = self._generation(response, cached=False, attempt=attempt, repetition=repetition)
        generation.retries = retries
        generation.notes = response.notes
        return request, generation

    @staticmethod
    def _generation(response: ChatResponse, *, cached: bool, attempt: int, repetition: int) -> Generation:
        return Generation(
            text=response.text,
            cached=cached,
            finish_reason=response.finish_reason,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            attempt=attempt,
            repetition=repetition,
        )

    async def _complete_in_time(self, request: ChatRequest) -> ChatResponse:
        """One backend call bounded as a whole by the request timeout (a slow drip or a hung server included)."""
        if self.request_timeout_s is None:
            return await self.backend.complete(request)
        try:
            return await asyncio.wait_for(self.backend.complete(request), self.request_timeout_s)
        except TimeoutError as exc:
            raise TransientBackendError("timeout", f"no complete reply within {self.request_timeout_s:g} s") from exc

    async def _call_with_retries(self, request: ChatRequest) -> tuple[ChatResponse, int]:
        retries = 0
        while True:
            async with self._slots:
                self.stats.in_flight += 1
                self.stats.calls += 1
                try:
                    response = normalise_response(await self._complete_in_time(request))
                except TransientBackendError as exc:
                    failure: TransientBackendError | None = exc
                except RequestRejectedError as exc:
                    raise CallFailedError(f"request rejected: {exc}") from exc
                else:
                    failure = None
                finally:
                    self.stats.in_flight -= 1
            if failure is None:
                self._any_success = True
                return response, retries
            if failure.kind == "connection" and not self._any_success and retries + 1 >= self.retry.unreachable_after:
                where = self.identity.get("base_url") or self.identity.get("model")
                raise BackendUnavailableError(f"cannot reach {where}: {failure}") from failure
            if retries >= self.retry.max_retries:
                raise CallFailedError(f"gave up after {retries} retries: {failure}") from failure
            self.stats.retries += 1
            self.stats.retries_by_kind[failure.kind] = self.stats.retries_by_kind.get(failure.kind, 0) + 1
            await asyncio.sleep(self.retry.backoff(retries, failure.retry_after, self._rng))
            retries += 1


class ItemContext:
    """What a benchmark item sees: a `generate` that records every call for samples.jsonl.

    `judge_generate` asks the judge model (`run --judge`); without a judge the model under test judges itself,
    and `judge_is_self` says so.
    """

    def __init__(
        self, engine: Engine, item_id: str, seed: int, judge_engine: Engine | None = None, tag: str = ""
    ) -> None:
        self._engine = engine
        self.tag = tag  # the asking instrument's name, passed on with every request (see ChatRequest.tag)
        self._judge_engine = judge_engine
        self.item_id = item_id
        self.seed = seed
        self.calls: list[dict[str, Any]] = []

    @property
    def judge_is_self(self) -> bool:
        return self._judge_engine is None

    @property
    def judge_identity(self) -> dict[str, Any]:
        return (self._judge_engine or self._engine).identity

    async def judge_generate(
        self,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        *,
        repetition: int = 0,
        attempt: int = 0,
    ) -> Generation:
        engine = self._judge_engine or self._engine
        return await self._ask(engine, messages, sampling, repetition, attempt, role="judge")

    async def generate(
        self,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        *,
        repetition: int = 0,
        attempt: int = 0,
    ) -> Generation:
        return await self._ask(self._engine, messages, sampling, repetition, attempt, role=None)

    async def _ask(
        self,
        engine: Engine,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        repetition: int,
        attempt: int,
        *,
        role: str | None,
    ) -> Generation:
        """One call through `engine`, recorded for samples.jsonl (judge calls carry their role)."""
        tag = f"{self.tag}:{role}" if self.tag and role else self.tag
        request, generation = await engine.generate(messages, sampling, repetition=repetition, attempt=attempt, tag=tag)
        record = generation.as_record(request)
        self.calls.append({"role": role, **record} if role else record)
        return generation


def item_seed(run_seed: int, benchmark: str, item_id: str) -> int:
    """Per-item seeds from (run seed, benchmark, item), so results never depend on scheduling order."""
    digest = hashlib.sha256(f"{run_seed}:{benchmark}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
