"""The engine: every model call of every instrument goes through `Engine.generate`.

Order of a call: response cache → concurrency limit → backend, with retries (exponential backoff with
jitter, honouring Retry-After) for 429, 5xx, timeouts, dropped connections and malformed bodies.

The concurrency limit adapts (AIMD, as TCP's congestion control): `max_concurrency` is a ceiling; the limit
opens towards it one slot every 10 ms from a small start, is halved when the server says it is overloaded
(429, 503, 529) and grows again by one after a window of successes. Its course goes to run.json.

Every reply passes `normalise_response` (valid text, sane usage) whatever the backend, and one whole request
is bounded by `request_timeout_s` (a retryable "timeout"), not only each socket read.
"""

import asyncio
import hashlib
import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

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
    truncated: int = 0  # answered calls whose answer never arrived (see Generation.truncated)
    cached_input_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache
    cache_write_input_tokens: int = 0  # of prompt_tokens, written to the provider's prompt cache (Anthropic)
    truncated_reasks: int = 0  # calls re-asked with a larger token budget after a truncated answer
    # The current in-flight limit of each engine ("model", "judge"), for the progress display.
    concurrency_limits: dict[str, int] = field(default_factory=dict)
    batch_state: str = ""  # with --batch: the open batches' state and counts, for the progress display
    started: float = field(default_factory=time.monotonic)

    def count_retry(self, kind: str) -> None:
        self.retries += 1
        self.retries_by_kind[kind] = self.retries_by_kind.get(kind, 0) + 1

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
            "truncated": self.truncated,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_input_tokens": self.cache_write_input_tokens,
            "truncated_reasks": self.truncated_reasks,
        }


def stored_text(text: str) -> str:
    """The head of `text` that a record keeps (at most MAX_STORED_REPLY_CHARS characters)."""
    return text[:MAX_STORED_REPLY_CHARS]


def stored_value(value: Any) -> Any:
    """`value` (JSON-like) with every text in it, at any depth, cut as a record keeps it (`stored_text`)."""
    if isinstance(value, str):
        return stored_text(value)
    if isinstance(value, Mapping):
        return {key: stored_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [stored_value(item) for item in value]
    return value


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
    reasoning: str | None = None  # the model's thinking, apart from `text`: recorded, never parsed
    truncated: bool = False  # the answer never arrived (budget spent while thinking, or null content at the limit)
    sent: dict[str, Any] | None = None  # the request's parameters as the backend sent them (besides the messages)
    cached_input_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    cache_write_input_tokens: int = 0  # of prompt_tokens, written to it (Anthropic cache_creation_input_tokens)
    details: Mapping[str, Any] = field(
        default_factory=dict
    )  # the backend's own record of the call (ChatResponse.extra)

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
            "cached_input_tokens": self.cached_input_tokens,
            "cached": self.cached,
            "retries": self.retries,
        }
        if self.sent is not None:
            record["sent"] = self.sent
        if self.reasoning is not None:
            record["reasoning"] = stored_text(self.reasoning)
            if len(self.reasoning) > MAX_STORED_REPLY_CHARS:
                record["reasoning_chars"] = len(self.reasoning)
        if self.cache_write_input_tokens:
            record["cache_write_input_tokens"] = self.cache_write_input_tokens
        if self.truncated:
            record["truncated"] = True
        if len(self.text) > MAX_STORED_REPLY_CHARS:
            record["reply_chars"] = len(self.text)
            record["reply_cut"] = f"stored the first {MAX_STORED_REPLY_CHARS} of {len(self.text)} characters"
        if self.notes:
            record["notes"] = list(self.notes)
        record.update(self.details)
        return record


# A truncated answer (the budget spent before the answer came) is re-asked with this factor more tokens, up to
# this many tokens, where the instrument's protocol re-asks at all (`budget_reasks` of ItemContext.generate).
TRUNCATION_BUDGET_FACTOR = 2
TRUNCATION_MAX_TOKENS = 131_072


# HTTP statuses that say "too much at once" rather than "this request is broken": rate limited, unavailable,
# Anthropic's overloaded. Other 5xx are retried without touching the limit.
OVERLOAD_STATUSES = frozenset({429, 503, 529})
# The adaptive limit starts this low (or at the ceiling, if lower) and opens a quarter more slots (at least one)
# per RAMP_STEP_S while calls wait for one, until the ceiling or the first overload: a rate limiter answers 429 at
# once, so a server that takes 8 at a time refuses a handful of requests instead of a whole burst of
# --max-concurrency of them.
INITIAL_CONCURRENCY = 4
RAMP_STEP_S = 0.01
RAMP_GROWTH_DIVISOR = 4
# run.json keeps the first and the last changes of the limit; a long run's sawtooth in between is counted.
COURSE_HEAD = 200
COURSE_TAIL = 100


def is_overload(failure: TransientBackendError) -> bool:
    """Whether a retryable failure says the server has too much to do (429, 503, 529)."""
    if failure.kind == "rate_limited":
        return True
    # The backends raise from the SDK's status error, which carries the HTTP status.
    status = getattr(failure.__cause__, "status_code", None)
    return failure.kind == "server_error" and status in OVERLOAD_STATUSES


class AdaptiveLimit:
    """An asyncio limit on calls in flight that adapts to the server (additive increase, multiplicative decrease).

    - start: `initial` slots, and while calls wait a quarter more (at least one) every `ramp_step_s`, up to
      `ceiling`, until the first overload ends this ramp for good (4 to 100 in 17 steps: the first round of a run
      with 100 calls at a time is not held back by a second of ramp);
    - overload (429/503/529) of a call sent since the last decrease: the limit is halved (rounded up, not below
      1); overloads of calls sent before it are the same congestion and change nothing more;
    - after as many successes as the limit while it was the binding constraint: one more slot, up to `ceiling`.

    `acquire` returns a token (the decrease count when the slot was granted); `release` takes it back with the
    call's outcome. `course` records each change with its time since the start.
    """

    def __init__(
        self,
        ceiling: int,
        *,
        initial: int = INITIAL_CONCURRENCY,
        ramp_step_s: float = RAMP_STEP_S,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[int], None] | None = None,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.initial = max(1, min(initial, self.ceiling))
        self.limit = self.initial
        self.in_flight = 0
        self.ramping = self.limit < self.ceiling
        self.ramp_step_s = ramp_step_s
        self.decreases = 0
        self.increases = 0
        self.overloads = 0  # every overload answer, also those that changed nothing
        self.lowest = self.highest = self.limit
        self._successes = 0  # since the last change of the limit
        self._clock = clock
        self._started = clock()
        self._on_change = on_change
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._ramp_timer: asyncio.TimerHandle | None = None
        self._ramp_loop: asyncio.AbstractEventLoop | None = None  # a timer left by an earlier asyncio.run is void
        self._course_head: list[dict[str, Any]] = []
        self._course_tail: deque[dict[str, Any]] = deque(maxlen=COURSE_TAIL)
        self._course_omitted = 0
        self._record("start")

    async def acquire(self) -> int:
        if not self._waiters and self.in_flight < self.limit:
            self.in_flight += 1
            return self.decreases
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._schedule_ramp()
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.in_flight -= 1  # granted just before the cancellation: hand the slot on
                self._grant()
            else:
                self._waiters.remove(waiter)
            raise

    def release(self, token: int, outcome: str) -> None:
        """Give a slot back; `outcome` is "ok", "overload" or "other" (a failure that says nothing of load)."""
        binding = bool(self._waiters) or self.in_flight >= self.limit
        self.in_flight -= 1
        if outcome == "overload":
            self.overloads += 1
            if token == self.decreases:  # sent at the current limit: the limit itself is too high
                self.ramping = False
                self.decreases += 1
                self._set((self.limit + 1) // 2, "overload")
        elif outcome == "ok" and binding and not self.ramping and self.limit < self.ceiling:
            self._successes += 1
            if self._successes >= self.limit:
                self.increases += 1
                self._set(self.limit + 1, "success")
        self._grant()

    def _set(self, limit: int, cause: str) -> None:
        limit = max(1, min(self.ceiling, limit))
        self._successes = 0
        if limit == self.limit:
            return
        self.limit = limit
        self.lowest, self.highest = min(self.lowest, limit), max(self.highest, limit)
        self._record(cause)
        if self._on_change is not None:
            self._on_change(limit)

    def _grant(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(self.decreases)

    def _schedule_ramp(self) -> None:
        loop = asyncio.get_running_loop()
        if self._ramp_loop is not loop:
            self._ramp_timer, self._ramp_loop = None, loop
        if self.ramping and self._ramp_timer is None and self.limit < self.ceiling:
            self._ramp_timer = loop.call_later(self.ramp_step_s, self._ramp)

    def _ramp(self) -> None:
        self._ramp_timer = None
        if not self.ramping:
            return
        self._set(self.limit + max(1, self.limit // RAMP_GROWTH_DIVISOR), "ramp")
        if self.limit >= self.ceiling:
            self.ramping = False
        self._grant()
        if self._waiters:
            self._schedule_ramp()

    def _record(self, cause: str) -> None:
        entry = {"t_s": round(self._clock() - self._started, 3), "limit": self.limit, "cause": cause}
        last = self._course_tail[-1] if self._course_tail else (self._course_head[-1] if self._course_head else None)
        if cause == "ramp" and last is not None and last["cause"] == "ramp":
            last.update(entry)  # one entry for a whole ramp: where it got to and when
            return
        if len(self._course_head) < COURSE_HEAD:
            self._course_head.append(entry)
            return
        if len(self._course_tail) == COURSE_TAIL:
            self._course_omitted += 1
        self._course_tail.append(entry)

    def as_dict(self) -> dict[str, Any]:
        """The limit's course for run.json: settings, extremes, counts and the time-stamped changes."""
        record: dict[str, Any] = {
            "ceiling": self.ceiling,
            "initial": self.initial,
            "min": self.lowest,
            "max": self.highest,
            "final": self.limit,
            "decreases": self.decreases,
            "increases": self.increases,
            "overload_answers": self.overloads,
            "course": [*self._course_head, *self._course_tail],
        }
        if self._course_omitted:
            record["course_omitted"] = self._course_omitted
        return record


class CallFailedError(Exception):
    """A call that could not be answered (rejected, or retries exhausted). The item records it. An item's context
    names the role that asked and its model (`role`, `model`, and the message's head: "judge gpt-5: ...")."""

    def __init__(self, message: str, *, role: str | None = None, model: str | None = None) -> None:
        super().__init__(message)
        self.role = role
        self.model = model


class AskLiveError(Exception):
    """From a batcher (engine/batch.py): no batch answered the request usably; the engine asks it live.
    `retries`: how often it was put into another batch before."""

    def __init__(self, retries: int) -> None:
        super().__init__(f"no usable batch answer after {retries} re-asks")
        self.retries = retries


class BudgetExhaustedError(Exception):
    """The run's cost budget stops it: no more requests are sent. The item is not recorded (it is asked again
    when the run continues; its answered calls come from the cache)."""


class CallMeter(Protocol):
    """Sees every request just before it is sent and its outcome (run/cost.py's CostMeter: cost and budget)."""

    def reserve(self, label: str, request: ChatRequest, *, live: bool = False) -> Any:
        """A reservation for `request` sent by the engine `label`; raises BudgetExhaustedError to send nothing.
        `live`: asked live although the run batches (no batch discount)."""
        ...

    def settle(self, reservation: Any, response: ChatResponse | None) -> None:
        """The request's outcome: its response, or None when it was not answered."""
        ...


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
        label: str = "model",
        meter: CallMeter | None = None,
    ) -> None:
        self.backend = backend
        self.meter = meter
        # An in-process backend (llama.cpp) cannot be interrupted inside its C call: a timeout there would only
        # abandon a thread that goes on holding the model; its calls are bounded by max_tokens instead.
        self.request_timeout_s = request_timeout_s if backend.interruptible else None
        if self.request_timeout_s is not None:
            backend.set_request_timeout(self.request_timeout_s)
        self.identity = backend.identity()
        self.cache = cache
        self.max_concurrency = max_concurrency or backend.default_concurrency  # the ceiling of the adaptive limit
        self.retry = retry or RetryPolicy()
        self.stats = stats or RunStats()
        self.label = label

        def show_limit(limit: int) -> None:
            self.stats.concurrency_limits[label] = limit

        self.limit = AdaptiveLimit(self.max_concurrency, on_change=show_limit)
        show_limit(self.limit.limit)
        self._rng = random.Random(seed)
        self._any_success = False
        # With --batch, a `Batcher` (engine/batch.py) answers what the cache cannot, instead of live calls.
        self.batcher: Any = None

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
                return request, self._generation(request, hit, cached=True, attempt=attempt, repetition=repetition)
        if self.batcher is not None:
            describe = {"tag": tag, "repetition": repetition, "attempt": attempt}
            # The budget sees a batched request as it sees a live one (providers bill only answered entries).
            reservation = self.meter.reserve(self.label, request) if self.meter is not None else None
            answered: ChatResponse | None = None
            ask_live: AskLiveError | None = None
            try:
                response, retries = await self.batcher.call(request, key, describe=describe)
                answered = response
            except AskLiveError as exc:  # no batch answered it usably: `--batch-fallback live`
                ask_live = exc
            finally:
                if self.meter is not None:
                    self.meter.settle(reservation, answered)
            if ask_live is not None:
                response, live_retries = await self._call_with_retries(request, live=True)
                retries = ask_live.retries + live_retries
        else:
            response, retries = await self._call_with_retries(request)
        if self.cache is not None:
            self.cache.put(key, response)
        self.stats.prompt_tokens += response.prompt_tokens
        self.stats.completion_tokens += response.completion_tokens
        self.stats.cached_input_tokens += response.cached_input_tokens
        self.stats.cache_write_input_tokens += response.cache_write_input_tokens
        generation = self._generation(request, response, cached=False, attempt=attempt, repetition=repetition)
        generation.retries = retries
        generation.notes = response.notes
        return request, generation

    def _generation(
        self, request: ChatRequest, response: ChatResponse, *, cached: bool, attempt: int, repetition: int
    ) -> Generation:
        if response.truncated:
            self.stats.truncated += 1
        # What the backend sends for this request (capability rules applied), recorded beside the instrument's
        # sampling; a cache hit records what was sent when the reply was first asked for.
        return Generation(
            text=response.text,
            reasoning=response.reasoning,
            truncated=response.truncated,
            sent=self.backend.request_parameters(request),
            cached=cached,
            finish_reason=response.finish_reason,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cached_input_tokens=response.cached_input_tokens,
            cache_write_input_tokens=response.cache_write_input_tokens,
            attempt=attempt,
            repetition=repetition,
            details=response.extra,
        )

    async def _complete_in_time(self, request: ChatRequest) -> ChatResponse:
        """One backend call bounded as a whole by the request timeout (a slow drip or a hung server included)."""
        if self.request_timeout_s is None:
            return await self.backend.complete(request)
        try:
            async with asyncio.timeout(self.request_timeout_s):  # no task of its own, unlike wait_for in 3.11
                return await self.backend.complete(request)
        except TimeoutError as exc:
            raise TransientBackendError("timeout", f"no complete reply within {self.request_timeout_s:g} s") from exc

    async def _call_with_retries(self, request: ChatRequest, *, live: bool = False) -> tuple[ChatResponse, int]:
        """The backend's reply, retried; `live`: a batched run's request asked live (billed without the discount)."""
        retries = 0
        while True:
            token = await self.limit.acquire()
            reservation = None
            if self.meter is not None:
                try:
                    reservation = self.meter.reserve(self.label, request, live=live)
                except BaseException:
                    self.limit.release(token, "other")
                    raise
            self.stats.in_flight += 1
            self.stats.calls += 1
            outcome = "other"
            try:
                response = normalise_response(await self._complete_in_time(request))
            except TransientBackendError as exc:
                failure: TransientBackendError | None = exc
                outcome = "overload" if is_overload(exc) else "other"
            except RequestRejectedError as exc:
                raise CallFailedError(f"request rejected: {exc}") from exc
            else:
                failure = None
                outcome = "ok"
            finally:
                self.stats.in_flight -= 1
                self.limit.release(token, outcome)
                if self.meter is not None:
                    self.meter.settle(reservation, response if outcome == "ok" else None)
            if failure is None:
                self._any_success = True
                return response, retries
            if failure.kind == "connection" and not self._any_success and retries + 1 >= self.retry.unreachable_after:
                where = self.identity.get("base_url") or self.identity.get("model")
                raise BackendUnavailableError(f"cannot reach {where}: {failure}") from failure
            if retries >= self.retry.max_retries:
                raise CallFailedError(f"gave up after {retries} retries: {failure}") from failure
            self.stats.count_retry(failure.kind)
            await asyncio.sleep(self.retry.backoff(retries, failure.retry_after, self._rng))
            retries += 1


def concurrency_record(*engines: Engine) -> dict[str, Any]:
    """run.json's `concurrency` block: the adaptive limit's course in this session, per engine (one per role)."""
    return {engine.label: engine.limit.as_dict() for engine in engines}


class ItemContext:
    """What a benchmark item sees: a `generate` that records every call for samples.jsonl.

    `judge_generate` asks the judge model (`run --judge`); without a judge the model under test judges itself,
    and `judge_is_self` says so. `simulator_generate` asks the simulated person (`run --simulator`), the third
    model role of conversational instruments; without one the model under test plays the person itself
    (`simulator_is_self`).
    """

    def __init__(
        self,
        engine: Engine,
        item_id: str,
        seed: int,
        judge_engine: Engine | None = None,
        tag: str = "",
        simulator_engine: Engine | None = None,
    ) -> None:
        self._engine = engine
        self.tag = tag  # the asking instrument's name, passed on with every request (see ChatRequest.tag)
        self._judge_engine = judge_engine
        self._simulator_engine = simulator_engine
        self.item_id = item_id
        self.seed = seed
        self.calls: list[dict[str, Any]] = []

    @property
    def judge_is_self(self) -> bool:
        return self._judge_engine is None

    @property
    def judge_identity(self) -> dict[str, Any]:
        return (self._judge_engine or self._engine).identity

    @property
    def simulator_is_self(self) -> bool:
        return self._simulator_engine is None

    @property
    def simulator_identity(self) -> dict[str, Any]:
        return (self._simulator_engine or self._engine).identity

    @property
    def model_identity(self) -> dict[str, Any]:
        return self._engine.identity

    def role_models(self) -> dict[str, str]:
        """The model of the model under test and of each role given a model of its own (judge, simulator)."""
        engines = {"model": self._engine, "judge": self._judge_engine, "simulator": self._simulator_engine}
        return {role: _model_name(engine) for role, engine in engines.items() if engine is not None}

    async def simulator_generate(self, messages: Sequence[Message] | str, sampling: Sampling, **how: int) -> Generation:
        """One call of the simulated person (the role `simulator`; tagged "<instrument>:simulator"); `how`: as
        `generate`'s repetition, attempt and budget_reasks."""
        return await self._ask(self._simulator_engine or self._engine, messages, sampling, role="simulator", **how)

    async def judge_generate(self, messages: Sequence[Message] | str, sampling: Sampling, **how: int) -> Generation:
        """One call of the judge (the role `judge`; tagged "<instrument>:judge"); `how`: as `generate`'s."""
        return await self._ask(self._judge_engine or self._engine, messages, sampling, role="judge", **how)

    async def generate(
        self,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        *,
        repetition: int = 0,
        attempt: int = 0,
        budget_reasks: int = 0,
    ) -> Generation:
        """One call of the model under test. `budget_reasks`: how often a truncated answer (no answer arrived
        within max_tokens, see Generation.truncated) is asked again with TRUNCATION_BUDGET_FACTOR times the
        budget; 0 (the default) for protocols that never re-ask."""
        return await self._ask(
            self._engine, messages, sampling, repetition=repetition, attempt=attempt, budget_reasks=budget_reasks
        )

    async def _ask(
        self,
        engine: Engine,
        messages: Sequence[Message] | str,
        sampling: Sampling,
        *,
        repetition: int = 0,
        attempt: int = 0,
        role: str | None = None,
        budget_reasks: int = 0,
    ) -> Generation:
        """One call through `engine`, recorded for samples.jsonl (judge calls carry their role); a truncated answer
        is re-asked with a larger budget up to `budget_reasks` times, each re-ask recorded as a call of its own
        (`budget_reask`: 1, 2...) and the truncated one marked `reasked`."""
        tag = f"{self.tag}:{role}" if self.tag and role else self.tag
        for reask in range(budget_reasks + 1):
            try:
                request, generation = await engine.generate(
                    messages, sampling, repetition=repetition, attempt=attempt, tag=tag
                )
            except CallFailedError as exc:  # say whose call failed: the item's error names the role and model
                who, model = role or "model", _model_name(engine)
                raise CallFailedError(f"{who} {model}: {exc}", role=who, model=model) from exc
            record = generation.as_record(request)
            if role:
                record = {"role": role, **record}
            if reask:
                record["budget_reask"] = reask
            self.calls.append(record)
            if not generation.truncated or reask == budget_reasks:
                return generation
            larger = replace(
                sampling, max_tokens=min(TRUNCATION_MAX_TOKENS, sampling.max_tokens * TRUNCATION_BUDGET_FACTOR)
            )
            if larger.max_tokens <= sampling.max_tokens:
                return generation
            sent = engine.backend.request_parameters(ChatRequest.of(messages, larger, tag))
            if sent is not None and sent == generation.sent:
                return generation  # the backend would send the same budget (e.g. `-M max_tokens=N` fixes it)
            record["reasked"] = True
            engine.stats.truncated_reasks += 1
            sampling = larger
        raise AssertionError("unreachable")  # the loop always returns


def _model_name(engine: Engine) -> str:
    identity = engine.identity
    return str(identity.get("model") or identity.get("provider") or "unknown")


def item_seed(run_seed: int, benchmark: str, item_id: str) -> int:
    """Per-item seeds from (run seed, benchmark, item), so results never depend on scheduling order."""
    digest = hashlib.sha256(f"{run_seed}:{benchmark}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
